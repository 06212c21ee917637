package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/sim"
)

// execute runs a scenario with overrides, with spans recorded, and returns
// the result and the spans.
func execute(t *testing.T, sets ...string) (*Result, []sim.Span) {
	r := built(t, sets)
	rec := &sim.SpanRecorder{}
	r.AddSpanSink(rec)
	res, err := r.Execute()
	require.NoError(t, err)
	return res, rec.Spans
}

// simulate runs the default scenario with sets, recording no spans.
func simulate(t *testing.T, sets ...string) *Result {
	res, err := built(t, sets).Execute()
	require.NoError(t, err)
	return res
}

// built is the default scenario with sets, ready to run.
func built(t *testing.T, sets []string) *Run {
	l, err := Load("", sets)
	require.NoError(t, err)
	r, err := Build(l)
	require.NoError(t, err)
	return r
}

// growingTablesTrace is a sessions trace in two acts: 40 sessions of 8,000
// tokens each, stored one after another; then, five minutes later, all 40
// resume at once (their KV long since evicted from the accelerator), and
// while their queries wait for the one FPGA query slot and import 2.6 GB
// each, 400 new sessions arrive, so the host's tables grow far past
// anything the first act needed.
func growingTablesTrace(t *testing.T) string {
	var b strings.Builder
	line := func(session string, turn int, arrival float64, tokens int) {
		fmt.Fprintf(&b, `{"session": %q, "turn": %d, "arrival_s": %g, "new_tokens": %d, "output_tokens": 8}`+"\n",
			session, turn, arrival, tokens)
	}
	for i := range 40 {
		line(fmt.Sprintf("s%d", i), 0, float64(i)*0.5, 8000)
	}
	for i := range 40 {
		line(fmt.Sprintf("s%d", i), 1, 300, 10)
	}
	for j := range 400 {
		line(fmt.Sprintf("n%d", j), 0, 300+0.001*float64(j+1), 10)
	}
	path := filepath.Join(t.TempDir(), "growing.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// TestQueryOutcomesSurviveGrowingTables checks that every query's outcome
// as the host records it is what the FPGA found in the directory when it
// looked (its import stage moved bytes exactly when the lookup hit), while
// the host's request and export tables grow under queries in flight.
func TestQueryOutcomesSurviveGrowingTables(t *testing.T) {
	trace := growingTablesTrace(t)
	for _, hashing := range []string{"patent", "block"} {
		t.Run(hashing, func(t *testing.T) {
			res, spans := execute(t, "workload.kind=sessions", "workload.path="+trace, "fpga.hashing="+hashing,
				"accelerator.kv_capacity=6GiB", "fpga.query_tasks=1")
			found := map[int64][]bool{} // per session, the FPGA's lookups in order
			for _, sp := range spans {
				if strings.HasSuffix(sp.Component, ".fpga") && sp.Operation == "query/import" {
					found[sp.ID] = append(found[sp.ID], sp.Bytes > 0)
				}
			}
			recorded := map[int64][]bool{}
			for _, r := range res.Run.sys.Records() {
				if r.Decision == hostcpu.Query || (hashing == "block" && r.Decision == hostcpu.FirstTokens) {
					recorded[r.Session] = append(recorded[r.Session], r.Hit)
				}
			}
			require.NotEmpty(t, found)
			assert.Equal(t, found, recorded, "the host sees every lookup's outcome as the FPGA found it")
			assert.GreaterOrEqual(t, res.Counted.Hits, int64(38), "the resumed sessions find their KV")
		})
	}
}

// TestCPUAndFPGACountTheSameLookups runs the same workload, with a store
// that never evicts and an accelerator that keeps no session between
// turns (so every resumed turn is a query in both, whatever the designs'
// timing), through both storing designs: one lookup per query in each,
// so the directory's lookups, hops and the hits agree.
func TestCPUAndFPGACountTheSameLookups(t *testing.T) {
	for _, hashing := range []string{"patent", "block"} {
		t.Run(hashing, func(t *testing.T) {
			sets := []string{"fpga.hashing=" + hashing, "workload.sessions=80", "storage.capacity=unlimited", "accelerator.retain=off"}
			cpu, _ := run(t, append(sets, "system.design=cpu")...)
			fpga, _ := run(t, append(sets, "system.design=fpga")...)
			require.Greater(t, fpga.Decisions["query_hits"], int64(0))
			for _, key := range []string{"lookups", "hops"} {
				assert.Equal(t, fpga.Store[key], cpu.Store[key], key)
			}
			assert.Equal(t, fpga.Decisions["query_hits"], cpu.Decisions["query_hits"])
			assert.Equal(t, fpga.Conservation, cpu.Conservation)
		})
	}
}

// TestEveryDesignConservesItsCounts checks the run's conservation figures
// in summary.json in every design and scheme: each request decided once,
// each query a hit or a miss.
func TestEveryDesignConservesItsCounts(t *testing.T) {
	for _, design := range []string{"recompute", "cpu", "fpga"} {
		for _, hashing := range []string{"patent", "block"} {
			s, _ := run(t, "system.design="+design, "fpga.hashing="+hashing, "workload.sessions=60", "accelerator.reserve_gb=40")
			c := s.Conservation
			assert.Equal(t, c["requests"], c["decided"], "%s/%s", design, hashing)
			assert.Equal(t, int64(s.RequestsCompleted)+s.RequestsRejected, c["requests"], "%s/%s", design, hashing)
			assert.Equal(t, c["queries"], c["hits"]+c["misses"], "%s/%s", design, hashing)
			if design == "recompute" {
				assert.Zero(t, c["queries"], "no store, no query")
			} else {
				assert.Positive(t, c["hits"], "%s/%s", design, hashing)
			}
		}
	}
}

// levelRecorder records spans and levels: the sink simrun run's traces
// attach.
type levelRecorder struct {
	sim.SpanRecorder
	levels []sim.Level
}

func (l *levelRecorder) Level(v sim.Level) { l.levels = append(l.levels, v) }

// A level sink on a design without a store (recompute) takes the spans
// and no levels; it panicked on the missing directory (simrun run --trace
// on a recompute run).
func TestALevelSinkOnADesignWithoutAStoreTakesSpansOnly(t *testing.T) {
	r := built(t, []string{"system.design=recompute", "workload.sessions=2"})
	rec := &levelRecorder{}
	require.NotPanics(t, func() { r.AddSpanSink(rec) })
	_, err := r.Execute()
	require.NoError(t, err)
	assert.NotEmpty(t, rec.Spans)
	assert.Empty(t, rec.levels)
}
