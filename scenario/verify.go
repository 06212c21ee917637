package scenario

import (
	"fmt"
	"slices"
	"sync"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/accel/tinylm"
	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/sim"
	"github.com/kvcosim/kvcosim/workloads"
)

// A verifyVariant is one functional configuration simrun verify runs a
// share of the sessions through.
type verifyVariant struct {
	name string
	sets []string
}

// verifyCommon makes every variant functional, on two nodes with
// migrations, with a small device KV memory (so sessions are evicted and
// come back through the store) and checked invariants.
var verifyCommon = []string{"mode=functional", "system.nodes=2", "system.routing=migrate", "system.migrate_fraction=0.3",
	"accelerator.kv_capacity=384KiB", "accelerator.max_batch=8", "fpga.block_tokens=16", "fpga.region_mib=1",
	"storage.capacity=64MiB", "fpga.check_invariants=true"}

// verifySets names verify's own settings in errors: they are not the
// user's --set, and a key the user gave is blamed before them.
const verifySets = "(simrun verify sets)"

// verifyVariants cover both hashing schemes, both designs with a store,
// both export modes and policies, the layouts, every decoding kind and a
// store small enough to evict; most inject faults into stored bytes.
var verifyVariants = []verifyVariant{
	{"patent/fpga/full/greedy", []string{"fpga.hashing=patent", "system.design=fpga", "functional.decoding=greedy", "functional.corrupt_fraction=0.25"}},
	{"block/fpga/sample", []string{"fpga.hashing=block", "system.design=fpga", "functional.decoding=sample", "functional.corrupt_fraction=0.25"}},
	{"patent/cpu/delta/beam", []string{"fpga.hashing=patent", "system.design=cpu", "fpga.export_mode=delta", "functional.decoding=beam", "functional.corrupt_fraction=0.25"}},
	{"block/cpu/greedy/small-store", []string{"fpga.hashing=block", "system.design=cpu", "functional.decoding=greedy", "storage.capacity=8MiB"}},
	{"patent/fpga/delta/on-evict/sample/small-store", []string{"fpga.hashing=patent", "system.design=fpga", "fpga.export_mode=delta",
		"system.export=on_evict", "functional.decoding=sample", "storage.capacity=8MiB", "functional.corrupt_fraction=0.25"}},
	{"block/fpga/layer-major/beam", []string{"fpga.hashing=block", "system.design=fpga", "fpga.layout=layer-major", "functional.decoding=beam", "functional.corrupt_fraction=0.25"}},
}

// VerifyFailure is a session whose import path and recomputation differ.
type VerifyFailure struct {
	Variant string
	Session int64
	Why     string
}

// VerifyVariant is what one variant did.
type VerifyVariant struct {
	Name               string
	Sessions, Requests int
	Counts             hostcpu.FunctionalCounts
	DeviceEvictions    int64
	Migrations         int64
}

// VerifyReport is simrun verify's outcome.
type VerifyReport struct {
	Passed, Failed int
	Failures       []VerifyFailure
	Variants       []VerifyVariant
}

// Verify runs sessions random multi-turn sessions, a share through each
// variant of the scenario at path (the embedded default when empty) in
// functional mode, and recomputes every session's turns from scratch on a
// fresh model: a session passes only if every turn's tokens and final
// logits are bit-identical. It calls progress (if not nil) with the
// variants done of all after each.
func Verify(path string, sessions int, seed uint64, progress func(done, total int)) (*VerifyReport, error) {
	if sessions < 1 {
		return nil, fmt.Errorf("--sessions = %d: at least 1", sessions)
	}
	rep := &VerifyReport{}
	for v, variant := range verifyVariants {
		sets := append(append(slices.Clone(verifyCommon), variant.sets...), fmt.Sprintf("seed=%d", seed))
		l, err := loadAs(path, sets, verifySets)
		if err != nil {
			return nil, fmt.Errorf("variant %s: %w", variant.name, err)
		}
		w := verifySessions(l.resolved.functional.model.Vocab, sessions, v, len(verifyVariants), seed)
		if len(w.Sessions) > 0 {
			if err := rep.runVariant(l, variant.name, w); err != nil {
				return nil, fmt.Errorf("variant %s: %w", variant.name, err)
			}
		}
		if progress != nil {
			progress(v+1, len(verifyVariants))
		}
	}
	return rep, nil
}

// runVariant runs one variant's sessions and checks each against its
// recomputation.
func (rep *VerifyReport) runVariant(l *Loaded, name string, w *workloads.Workload) error {
	l.UseWorkload(w)
	run, err := Build(l)
	if err != nil {
		return err
	}
	if _, err := run.Execute(); err != nil {
		return err
	}
	c := run.sys.Counts()
	rep.Variants = append(rep.Variants, VerifyVariant{Name: name, Sessions: len(w.Sessions), Requests: w.Requests(),
		Counts: run.sys.FunctionalCounts(), DeviceEvictions: c.DeviceEvictions, Migrations: c.Migrations})
	f := l.resolved.functional
	m, err := tinylm.New(f.model)
	if err != nil {
		return err
	}
	whys := make([]string, len(w.Sessions))
	var wg sync.WaitGroup
	for i, plan := range w.Sessions {
		wg.Go(func() { whys[i] = compare(m, f.decoding, sim.NewStreams(l.Seed), plan, run.sys.Outputs()[plan.ID]) })
	}
	wg.Wait()
	for i, why := range whys {
		if why == "" {
			rep.Passed++
			continue
		}
		rep.Failed++
		rep.Failures = append(rep.Failures, VerifyFailure{Variant: name, Session: w.Sessions[i].ID, Why: why})
	}
	return nil
}

// compare recomputes a session turn by turn, each turn on a fresh cache
// with the whole history, and returns how the simulated outputs differ
// ("" if they do not).
func compare(m *tinylm.Model, d accel.Decoding, streams sim.Streams, plan workloads.Session, got []hostcpu.TurnOutput) string {
	if len(got) != len(plan.Turns) {
		return fmt.Sprintf("ran %d of %d turns", len(got), len(plan.Turns))
	}
	var history []uint32
	for t, turn := range plan.Turns {
		prompt := append(slices.Clone(history), turn.NewTokens...)
		want, err := recompute(m, d, hostcpu.SamplingStream(streams, plan.ID, t), prompt, int(turn.OutputCount))
		if err != nil {
			return fmt.Sprintf("turn %d: recomputation failed: %v", t, err)
		}
		if i := firstDiff(got[t].Tokens, want.Tokens); i >= 0 {
			return fmt.Sprintf("turn %d: token %d differs: %v after import, %v recomputed", t, i, at(got[t].Tokens, i), at(want.Tokens, i))
		}
		if i := firstDiff(got[t].Logits, want.Logits); i >= 0 {
			return fmt.Sprintf("turn %d: final logit %d differs: %v after import, %v recomputed", t, i, at(got[t].Logits, i), at(want.Logits, i))
		}
		history = append(prompt, want.Tokens...)
	}
	return ""
}

// recompute runs one turn from scratch: a fresh cache, the whole prompt.
func recompute(m *tinylm.Model, d accel.Decoding, q *sim.Stream, prompt []uint32, outputs int) (hostcpu.TurnOutput, error) {
	g, err := accel.NewGeneration(m, m.NewCache(), d, q, outputs)
	if err != nil {
		return hostcpu.TurnOutput{}, err
	}
	if err := g.Prefill(prompt, true); err != nil {
		return hostcpu.TurnOutput{}, err
	}
	for !g.Done() {
		if err := g.Step(); err != nil {
			return hostcpu.TurnOutput{}, err
		}
	}
	_, tokens, logits, err := g.Finish()
	return hostcpu.TurnOutput{Tokens: tokens, Logits: logits}, err
}

// firstDiff is the first index where a and b differ (bit for bit), or -1.
func firstDiff[T uint32 | float32](a, b []T) int {
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return -1
}

// at is s[i], or "none" past its end.
func at[T any](s []T, i int) any {
	if i < len(s) {
		return s[i]
	}
	return "none"
}

// verifySessions makes variant v's share of n random sessions: 2-6 turns
// of short prompts and answers, half of them opening with a shared system
// prompt (so blocks are shared between sessions), think times of a few
// seconds and, with probability 0.3, an interruption of minutes.
func verifySessions(vocab, n, v, variants int, seed uint64) *workloads.Workload {
	rng := sim.NewStreams(seed).Stream(fmt.Sprintf("verify/sessions/%d", v))
	tokens := func(k int) []uint32 {
		out := make([]uint32, k)
		for i := range out {
			out[i] = uint32(rng.IntN(vocab))
		}
		return out
	}
	system := tokens(32)
	w := &workloads.Workload{}
	for id := v; id < n; id += variants {
		s := workloads.Session{ID: int64(id), Start: sim.Time(rng.Int64N(int64(60 * sim.Second)))}
		for t := range 2 + rng.IntN(5) {
			turn := workloads.Turn{NewTokens: tokens(1 + rng.IntN(24)), OutputCount: int64(1 + rng.IntN(8)), Node: -1,
				Gap: sim.TimeOf(rng.ExpFloat64() * 2 * float64(sim.Second))}
			if t == 0 {
				turn.NewTokens = append(tokens(8+rng.IntN(40)), turn.NewTokens...)
				if rng.IntN(2) == 0 {
					turn.NewTokens = append(slices.Clone(system), turn.NewTokens...)
				}
			} else if rng.Float64() < 0.3 {
				turn.Gap += sim.Time(30+rng.Int64N(90)) * sim.Second
				turn.Interrupted = true
			}
			turn.NewTokenCount = int64(len(turn.NewTokens))
			s.Turns = append(s.Turns, turn)
		}
		w.Sessions = append(w.Sessions, s)
	}
	return w
}
