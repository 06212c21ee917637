package scenario

import (
	"math"

	"github.com/kvcosim/kvcosim/hostcpu"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kvcosim/kvcosim/reports"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The engine's keys refuse what they cannot run, naming the key.
func TestEngineKeysRefuseBadInput(t *testing.T) {
	cases := []struct {
		name string
		sets []string
		want string
	}{
		{"kv_alloc", []string{"accelerator.kv_alloc=lazy"}, "key accelerator.kv_alloc: \"lazy\" is not allowed (allowed: reserve, incremental)"},
		{"preemption", []string{"accelerator.preemption=drop"}, "key accelerator.preemption: \"drop\" is not allowed (allowed: recompute, swap, store)"},
		{"chunked_prefill", []string{"accelerator.chunked_prefill=maybe"}, "key accelerator.chunked_prefill"},
		{"chunk cap", []string{"accelerator.prefill_chunk_tokens=-1"}, "key accelerator.prefill_chunk_tokens"},
		{"budget under a block", []string{"accelerator.token_budget=8"}, "--set accelerator.token_budget=8: key accelerator.token_budget: accelerator.token_budget 8 is less than one KV block of accelerator.kv_block_tokens 16 tokens"},
		{"block under the budget", []string{"accelerator.kv_block_tokens=16384"}, "--set accelerator.kv_block_tokens=16384: key accelerator.kv_block_tokens: accelerator.token_budget 8192 is less than one KV block"},
		{"block not dividing the chunk", []string{"system.design=lmcache", "accelerator.kv_block_tokens=48"},
			"--set accelerator.kv_block_tokens=48: key accelerator.kv_block_tokens: accelerator.kv_block_tokens 48 does not divide the store's chunk of fpga.block_tokens 256 tokens"},
		{"whole prefill past the budget", []string{"accelerator.chunked_prefill=off", "accelerator.token_budget=4096"},
			"key accelerator.chunked_prefill: accelerator.chunked_prefill off runs a prompt whole, so accelerator.token_budget 4096 must hold the context window of 8192 tokens"},
		{"whole prefill with a cap", []string{"accelerator.chunked_prefill=off", "accelerator.prefill_chunk_tokens=512"}, "key accelerator.prefill_chunk_tokens: accelerator.prefill_chunk_tokens 512 caps a prefill chunk"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := loadAndBuild(t, "", c.sets)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	require.NoError(t, loadAndBuild(t, "", []string{"accelerator.chunked_prefill=off", "accelerator.kv_alloc=incremental", "accelerator.preemption=swap"}))
}

// BenchmarkIncrementalAgainstReserve replays the Mooncake conversation
// trace as BenchmarkReplayMooncakeConversation does (docs/workloads.md,
// "Performance") under accelerator.kv_alloc reserve and incremental, each
// run timed on its own, and reports the incremental run's wall time as a
// multiple of the reserve run's (ratio: issue 43 asks at most 1.2), both
// runs' wall seconds (the fastest of b.N: run with -benchtime 3x on a
// shared machine), and the incremental run's preemptions and the most
// requests it ran at once against reserve's.
func BenchmarkIncrementalAgainstReserve(b *testing.B) {
	path := filepath.Join("..", "workloads", "testdata", "mooncake_conversation_trace.jsonl.gz")
	base := append([]string{"workload.kind=mooncake", "workload.path=" + path, "storage.capacity=unlimited", longContext}, benchNode...)
	allocs := []string{"reserve", "incremental"}
	fastest := []time.Duration{math.MaxInt64, math.MaxInt64}
	var incremental reports.Summary
	for b.Loop() {
		for i, alloc := range allocs {
			t0 := time.Now()
			s, _ := run(b, append(slices.Clone(base), "accelerator.kv_alloc="+alloc)...)
			fastest[i] = min(fastest[i], time.Since(t0))
			if alloc == "incremental" {
				incremental = s
			}
		}
	}
	b.ReportMetric(fastest[1].Seconds()/fastest[0].Seconds(), "ratio")
	b.ReportMetric(fastest[0].Seconds(), "reserve-s")
	b.ReportMetric(fastest[1].Seconds(), "incremental-s")
	b.ReportMetric(float64(incremental.Engine.Preemptions), "preemptions")
	b.ReportMetric(float64(incremental.Engine.PeakRunning), "peak-running")
}

// Under memory pressure (the default scenario with 8 GB of KV memory, 150
// sessions arriving four times as fast) the
// incremental engine runs more requests at once than reserve, preempts,
// and each preemption mode runs for every design, its counts conserved
// (Execute runs the conservation check, INV-40 among it).
func TestEveryPreemptionModeRunsForEveryDesign(t *testing.T) {
	if testing.Short() {
		t.Skip("30 runs of 150 sessions: 15 s")
	}
	sessions := "workload.sessions=150"
	for _, design := range []string{"recompute", "cpu", "fpga", "lmcache", "cachedattention"} {
		base := []string{"system.design=" + design, "accelerator.kv_capacity=8GB", sessions, "workload.session_rate_per_s=2"}
		reserved, rc := pressureRun(t, append(slices.Clone(base), "accelerator.kv_alloc=reserve")...)
		for _, mode := range []string{"recompute", "swap", "store"} {
			s, c := pressureRun(t, append(slices.Clone(base), "accelerator.kv_alloc=incremental", "accelerator.preemption="+mode)...)
			t.Logf("%s %s: preemptions %d, mean batch %.2f (reserve %.2f), peak running %d (reserve %d), completed %d (reserve %d)", design, mode,
				s.Engine.Preemptions, c.MeanBatch(), rc.MeanBatch(), c.PeakRunning, rc.PeakRunning, s.RequestsCompleted, reserved.RequestsCompleted)
			assert.Greater(t, c.PeakRunning, rc.PeakRunning, "%s %s: incremental runs more at once", design, mode)
			assert.Positive(t, s.Engine.Preemptions, "%s %s", design, mode)
			assert.Equal(t, reserved.RequestsCompleted, s.RequestsCompleted, "%s %s", design, mode)
			moved := map[string]int64{"recompute": s.Engine.PreemptedTokensRecomputed, "swap": s.Engine.PreemptedBytesSwapped, "store": s.Engine.PreemptedBytesStored}
			if mode == "store" && design == "recompute" {
				assert.Positive(t, s.Engine.PreemptedTokensRecomputed, "design recompute has no store: its preemptions recompute")
			} else {
				assert.Positive(t, moved[mode], "%s %s", design, mode)
			}
		}
	}
}

// pressureRun runs a scenario and returns its summary and the host's
// counts.
func pressureRun(t *testing.T, sets ...string) (reports.Summary, hostcpu.Counts) {
	res := executed(t, sets...)
	return res.Summary(), res.Run.sys.Counts()
}
