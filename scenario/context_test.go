package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/hostcpu"
)

// long are settings whose sessions outgrow a 2,048-token window: a model
// with that window, long histories, every resumed turn from the store.
var long = []string{"model=llama-65b", "workload.turns_mean=8", "workload.sessions=40", "accelerator.retain=off"}

// TestContextWindowHoldsForEveryRequest: under either policy no request
// that ran passed the window, the counts agree with the records, and
// truncation drops exactly what was over.
func TestContextWindowHoldsForEveryRequest(t *testing.T) {
	for _, policy := range []string{"truncate", "reject"} {
		t.Run(policy, func(t *testing.T) {
			res := simulate(t, append([]string{"system.design=cpu", "workload.context_policy=" + policy}, long...)...)
			var truncated, rejected int64
			for _, r := range res.Run.sys.Records() {
				if r.Done {
					assert.LessOrEqual(t, r.PromptTokens+r.OutputTokens, int64(2048), "request %d", r.ID)
				} else {
					rejected++
				}
				if r.TruncatedTokens > 0 {
					truncated++
					assert.Equal(t, int64(2048), r.PromptTokens+r.OutputTokens, "truncation keeps the window full")
				}
			}
			s := res.Summary()
			assert.Equal(t, truncated, s.RequestsTruncated)
			assert.Equal(t, rejected, s.RequestsRejected)
			if policy == "truncate" {
				assert.Positive(t, truncated)
				assert.Zero(t, s.RequestsContextRejected)
			} else {
				assert.Zero(t, truncated)
				assert.Positive(t, s.RequestsContextRejected)
				assert.Equal(t, s.RequestsContextRejected, s.RequestsRejected)
			}
		})
	}
}

// TestTruncateFillCutsDeeper: with workload.truncate_fill 0.5 a
// truncation leaves prompt and output at half the window, unless that
// would cut into the turn's new tokens (then just enough of the history
// goes); fewer turns need a cut than when it keeps the window full.
func TestTruncateFillCutsDeeper(t *testing.T) {
	count := func(fill string) (truncated int) {
		res := simulate(t, append([]string{"system.design=cachedattention", "workload.truncate_fill=" + fill}, long...)...)
		for _, r := range res.Run.sys.Records() {
			if r.TruncatedTokens == 0 {
				continue
			}
			truncated++
			if total := r.PromptTokens + r.OutputTokens; fill == "0.5" && total != 1024 {
				assert.LessOrEqual(t, total, int64(2048), "request %d", r.ID)
				assert.Zero(t, r.ReusedTokens, "request %d: past half the window only when no history is left", r.ID)
			}
		}
		return truncated
	}
	full, half := count("1"), count("0.5")
	require.Positive(t, half)
	assert.Less(t, half, full)
}

// TestTruncationKeepsOnlyDecoupledKV: after a truncation, the KV stored
// with positions (the patent's cpu design, lmcache's prefix chain) matches
// nothing and the turn recomputes; CachedAttention's position-free KV
// still serves what is left of the history.
func TestTruncationKeepsOnlyDecoupledKV(t *testing.T) {
	for _, c := range []struct {
		design string
		reuses bool
	}{{"cpu", false}, {"lmcache", false}, {"cachedattention", true}} {
		t.Run(c.design, func(t *testing.T) {
			res := simulate(t, append([]string{"system.design=" + c.design}, long...)...)
			var truncated, reused int
			for _, r := range res.Run.sys.Records() {
				if r.TruncatedTokens == 0 || r.Turn == 0 {
					continue
				}
				truncated++
				if r.ReusedTokens > 0 {
					reused++
					assert.LessOrEqual(t, r.ReusedTokens, r.PromptTokens, "request %d", r.ID)
				}
			}
			require.Greater(t, truncated, 20)
			if c.reuses {
				assert.Greater(t, reused, truncated/2, "truncated turns served from the store")
			} else {
				assert.Zero(t, reused, "a truncated history's stored KV is stale")
			}
		})
	}
}

// TestTruncatedObjectsHoldTheirWindow: CachedAttention's objects of
// truncated sessions hold only the tokens still in the window, in every
// tier, though their keys count every token the session computed.
func TestTruncatedObjectsHoldTheirWindow(t *testing.T) {
	for _, mode := range []string{"full", "delta"} {
		t.Run(mode, func(t *testing.T) {
			res := simulate(t, append(slices.Clone(long), "system.design=cachedattention", "store.dram_tier=20GB", "fpga.export_mode="+mode,
				"fpga.layout=layer-major", "workload.sessions=16")...)
			require.Positive(t, res.Summary().RequestsTruncated)
			perToken := res.Run.l.resolved.host.KVBytesPerToken
			region := res.Run.RegionBytes()
			for i := range res.Run.pool.Tiers() {
				d := res.Run.pool.Tier(i)
				require.Positive(t, d.Links(), "tier %d holds objects", i)
				window := int64(d.Links()) * (2048*perToken + 2*region) // rounding: a region each, two segments in delta mode
				assert.LessOrEqual(t, d.HeldBytes(), window, "tier %d: %d objects", i, d.Links())
			}
		})
	}
}

// TestDefaultPoliciesAndWindows: every preset has a window and a
// truncating default.
func TestDefaultPoliciesAndWindows(t *testing.T) {
	l, err := Load("", nil)
	require.NoError(t, err)
	assert.Equal(t, hostcpu.ContextTruncate, l.resolved.host.ContextPolicy)
	assert.Equal(t, int64(8192), l.resolved.host.ContextTokens)
}

// TestTokenIDTracesStoreFromTheFirstToken: a trace with token ids gives
// its sessions' output counts, not their ids; a design whose KV keeps
// its positions stores every object from token 0 (a negative first token
// once made stored objects larger than their histories; the store's
// invariant check now stops such a run).
func TestTokenIDTracesStoreFromTheFirstToken(t *testing.T) {
	var b strings.Builder
	for turn := range 3 {
		for s := range 3 {
			fmt.Fprintf(&b, `{"session": "s%d", "turn": %d, "arrival_s": %d, "token_ids": [%d, 2, 3, 4], "output_tokens": 50}`+"\n",
				s, turn, 30*turn+s, 10*s+turn)
		}
	}
	path := filepath.Join(t.TempDir(), "ids.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	for _, mode := range []string{"full", "delta"} {
		s := simulate(t, "workload.kind=sessions", "workload.path="+path, "system.design=cpu", "accelerator.retain=off", "fpga.layout=layer-major",
			"fpga.export_mode="+mode).Summary()
		assert.Equal(t, int64(9), s.Store["exports"], mode)
	}
}

// rejectsTrace is a sessions trace of three one-turn sessions: one that
// fits, one past the default model's 8,192-token window, and one within
// it (7,010 tokens: 2.1 GiB of Llama-3-70B's KV) but larger than a KV
// memory of 1 GiB.
func rejectsTrace(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "rejects.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(
		`{"session": "fits", "turn": 0, "arrival_s": 0, "new_tokens": 1000, "output_tokens": 10}
{"session": "past-window", "turn": 0, "arrival_s": 1, "new_tokens": 9000, "output_tokens": 10}
{"session": "too-big", "turn": 0, "arrival_s": 2, "new_tokens": 7000, "output_tokens": 10}
`), 0o644))
	return path
}

// TestRejectedRequestsSayWhy: a request past the context window and one
// too large for the KV memory are each counted under their reason; with
// truncation the first is cut to the window, and then too large as well.
func TestRejectedRequestsSayWhy(t *testing.T) {
	trace := rejectsTrace(t)
	for _, c := range []struct {
		policy string
		want   map[string]int64
	}{
		{"reject", map[string]int64{"context_window": 1, "kv_memory": 1}},
		{"truncate", map[string]int64{"context_window": 0, "kv_memory": 2}},
	} {
		t.Run(c.policy, func(t *testing.T) {
			s := simulate(t, "workload.kind=sessions", "workload.path="+trace, "workload.context_policy="+c.policy,
				"accelerator.kv_capacity=1GiB").Summary()
			assert.Equal(t, c.want, s.RequestsRejectedByReason)
			assert.Equal(t, int64(2), s.RequestsRejected)
			assert.Equal(t, c.want["context_window"], s.RequestsContextRejected)
			assert.Equal(t, 1, s.RequestsCompleted)
		})
	}
}
