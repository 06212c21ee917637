package scenario

import (
	"fmt"
	"strings"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/accel/kernels"
	"github.com/kvcosim/kvcosim/accel/tinylm"
	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/workloads"
)

// Functional is functional mode's model, decoding and fault injection
// (used with mode: functional).
type Functional struct {
	Layers          int     `yaml:"layers"`
	Hidden          int     `yaml:"hidden"`
	Heads           int     `yaml:"heads"`
	KVHeads         int     `yaml:"kv_heads"`
	Vocab           int     `yaml:"vocab"`
	FFN             int     `yaml:"ffn"`
	WeightSeed      uint64  `yaml:"weight_seed"`
	Decoding        string  `yaml:"decoding"` // greedy, sample or beam
	TopK            int     `yaml:"top_k"`
	TopP            float64 `yaml:"top_p"`
	Beams           int     `yaml:"beams"`
	CorruptFraction float64 `yaml:"corrupt_fraction"`
	// MemoryLimitGiB bounds the run's estimated memory (functionalMemory);
	// 0 (left out) is workloads.MaxSyntheticBytes.
	MemoryLimitGiB float64 `yaml:"memory_limit_gib,omitempty"`
}

// functionalConfig is functional mode resolved.
type functionalConfig struct {
	model      tinylm.Config
	decoding   accel.Decoding
	corrupt    float64
	limitBytes float64
}

// resolveFunctional reads the functional section and, in functional mode,
// makes the timed model tinylm's shape on one device, its KV float32.
func (r *resolver) resolveFunctional(sc *Scenario, out *resolved) {
	f := sc.Functional
	if r.oneOf("mode", sc.Mode, "timing", "functional") == "timing" {
		return
	}
	cfg := tinylm.Config{Layers: f.Layers, Hidden: f.Hidden, Heads: f.Heads, KVHeads: f.KVHeads, Vocab: f.Vocab, FFN: f.FFN, Seed: f.WeightSeed}
	if err := cfg.Validate(); err != nil { // "tinylm: NAME = ...": the key is functional.NAME
		name, _, _ := strings.Cut(strings.TrimPrefix(err.Error(), "tinylm: "), " ")
		r.check("functional."+name, err)
	}
	d := accel.Decoding{Kind: pick(r, "functional.decoding", f.Decoding, accel.DecodeKinds.Parse),
		TopK: f.TopK, TopP: float32(f.TopP), Beams: f.Beams}
	r.intIn("functional.top_k", int64(f.TopK), 1, 1<<24)
	if d.Kind == accel.Sample && f.TopK > f.Vocab && r.err == nil { // only sample reads it: the default's top-k blames a small vocabulary
		r.fail(r.culprit("functional.top_k", "functional.vocab", "functional.decoding"), "functional.top_k %d is more than functional.vocab's %d tokens (allowed: a top-k of 1 to %d, or a larger vocabulary)",
			f.TopK, f.Vocab, f.Vocab)
	}
	r.floatIn("functional.top_p", f.TopP, 1e-6, 1)
	r.intIn("functional.beams", int64(f.Beams), 1, 64)
	if d.Kind == accel.Beam {
		r.check("functional.beams", kernels.BeamParams{Vocab: f.Vocab, NumBeams: f.Beams, EOS: []int{0}, NumReturnSequences: 1}.Validate())
	}
	r.floatIn("functional.corrupt_fraction", f.CorruptFraction, 0, 1)
	limit := float64(functionalMemoryLimitGiB << 30)
	if f.MemoryLimitGiB != 0 { // 0: the default
		r.floatIn("functional.memory_limit_gib", f.MemoryLimitGiB, 1, workloads.MaxMemoryLimitGiB)
		limit = f.MemoryLimitGiB * (1 << 30)
	}
	out.functional = &functionalConfig{model: cfg, decoding: d, corrupt: f.CorruptFraction, limitBytes: limit}
}

// functionalMemoryLimitGiB is functional.memory_limit_gib's default: room
// for the default shape over the default 400 sessions (estimated at 5.56
// GB), on a machine of 24 GB.
const functionalMemoryLimitGiB = 8

// What a functional run holds beyond a timed one: tinylm's float32
// weights (tinylm.Config.WeightBytes) and the K and V of its tokens
// (tinylm.Config.CacheBytesPerToken a token): each session's cache, kept
// from turn to turn, and the store's bytes, where every export writes
// afresh (a version's whole history; fresh regions are handed out before
// freed ones, so the byte store grows by each until the storage's
// capacity), and the garbage collector's room beside them (GOGC=100: the
// heap grows to twice the live heap). Measured on 2026-11-27 with
// /usr/bin/time -f "%M KB" simrun run --set mode=functional ...:
//
//	shape (layers, hidden, heads/kv, vocab)  workload              estimate  resident
//	2, 64, 4/2, 512 (the default)            4 sessions             128 MB     92 MB
//	2, 64, 4/2, 1,048,576                    1 session, 6 tokens    609 MB    559 MB
//	2, 512, 4/2, 262,144                     1 session, 6 tokens   1150 MB   1080 MB
//	64, 256, 4/4, 512                        4 sessions of 3 turns 3066 MB   2761 MB
//
// (the last: first prompts 300, follow-ups 100, outputs 50 tokens).
const (
	functionalFixedBytes = 64 << 20
	functionalGCRoom     = 2
)

// functionalMemory is the memory, in bytes, a functional run of the
// workload over a store of storeBytes is estimated to take: the model's
// weights, and the K and V of the sessions' caches and of what their
// exports store.
func functionalMemory(m tinylm.Config, w *workloads.Workload, storeBytes float64) (weights, kv float64) {
	var kept, stored float64
	for _, s := range w.Sessions {
		var history float64
		for _, t := range s.Turns {
			history += float64(t.NewTokenCount + t.OutputCount)
			stored += history
		}
		kept += history
	}
	perToken := float64(m.CacheBytesPerToken())
	return float64(m.WeightBytes()), functionalGCRoom * (kept*perToken + min(storeBytes, stored*perToken))
}

// checkFunctionalMemory refuses, before the model's weights are made, a
// functional run estimated to take more than its limit, naming the key
// that makes the most of it: the vocabulary (the embedding and the logits
// projection), the layers, or the workload (its KV).
func (r *Run) checkFunctionalMemory(f *functionalConfig) error {
	weights, kv := functionalMemory(f.model, r.workload, float64(r.l.resolved.tiers[len(r.l.resolved.tiers)-1].Bytes))
	if est := functionalFixedBytes + weights + kv; est > f.limitBytes {
		m := f.model
		vocab := float64(8 * int64(m.Vocab) * int64(m.Hidden))
		key := "functional.vocab"
		switch {
		case kv > weights && r.l.Workload.Kind == "synthetic":
			key = "workload.sessions"
		case kv > weights:
			key = "workload.path"
		case weights-vocab > vocab:
			key = "functional.layers"
		}
		return fmt.Errorf("key %s: functional mode would take about %.3g GB in a run, more than the %.3g GiB limit "+
			"(functional.memory_limit_gib, at most %d, on a machine with room): tinylm's weights %.3g GB (embedding and logits "+
			"%.3g GB for functional.vocab %d x functional.hidden %d; functional.layers %d: %.3g GB) and the K and V of the workload's tokens "+
			"(%d B a token, kept in the sessions' caches and written to the store) %.3g GB",
			key, est/1e9, f.limitBytes/(1<<30), workloads.MaxMemoryLimitGiB, weights/1e9, vocab/1e9, m.Vocab, m.Hidden, m.Layers, (weights-vocab)/1e9,
			m.CacheBytesPerToken(), kv/1e9)
	}
	return nil
}

// tinyModel is tinylm's shape as the accelerator's cost model sees it.
func tinyModel(c tinylm.Config) accel.Model {
	h, kvw := int64(c.Hidden), int64(c.KVWidth())
	params := int64(c.Layers)*(2*h*h+2*h*kvw+2*h*int64(c.FFN)) + 2*int64(c.Vocab)*h
	return accel.Model{Name: "tinylm", Layers: c.Layers, Hidden: c.Hidden, Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim(),
		Intermediate: c.FFN, Vocab: c.Vocab, Params: params, ActiveParams: params, Attention: accel.GQA}
}

// buildFunctional gives the storage its byte store and the system its
// model, decoding and the store's contents.
func (r *Run) buildFunctional(f *functionalConfig) error {
	m, err := tinylm.New(f.model)
	if err != nil {
		return err
	}
	fn := hostcpu.Functional{Model: m, Decoding: f.decoding, Dir: r.dir, Streams: r.streams, Corrupt: corrupter(r.l.Seed, f.corrupt)}
	if r.dir != nil {
		store, err := r.ssd.AttachStore(4096, true)
		if err != nil {
			return err
		}
		if fn.Contents, err = kvstore.NewContents(r.dir, store); err != nil {
			return err
		}
	}
	if err := r.sys.EnableFunctional(fn); err != nil {
		return fmt.Errorf("%w (workload.kind %s, workload.path %q)", err, r.l.Workload.Kind, r.l.Workload.Path)
	}
	return nil
}

// corrupter chooses the sessions whose stored bytes get a fault: a
// fraction of them, by a hash of the seed and the session id (so the
// choice does not depend on the order sessions run in).
func corrupter(seed uint64, fraction float64) func(int64) bool {
	if fraction == 0 {
		return nil
	}
	return func(session int64) bool {
		return float64(kernels.Mix64(seed^uint64(session)*0x9e3779b97f4a7c15)>>11)/(1<<53) < fraction
	}
}
