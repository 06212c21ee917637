package scenario

import (
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

// TestDefaultPoliciesAndWindows: every preset has a window and a
// truncating default.
func TestDefaultPoliciesAndWindows(t *testing.T) {
	l, err := Load("", nil)
	require.NoError(t, err)
	assert.Equal(t, hostcpu.ContextTruncate, l.resolved.host.ContextPolicy)
	assert.Equal(t, int64(8192), l.resolved.host.ContextTokens)
}
