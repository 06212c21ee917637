package hostcpu

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvcosim/kvcosim/hostcpu/mech"
	"github.com/kvcosim/kvcosim/kvstore"
)

// TestClosedLoopFetchesAhead: CachedAttention in a closed loop of two
// slots over a DRAM tier that holds two objects: held-back turns' objects
// are raised into DRAM (look-ahead) and pre-loaded into the read buffer,
// queued requests' KV is prefetched, and every one of them is used or
// wasted exactly once (Conservation). A window given in turns stays as
// given, and raises what the prefetch would fetch; auto sizes it by the
// DRAM the turns in flight leave (none here).
func TestClosedLoopFetchesAhead(t *testing.T) {
	for _, c := range []struct {
		name   string
		window int
		want   int
	}{
		{"auto window", mech.AutoWindow, 0},
		{"three turns", 3, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := rigConfig(t, "cachedattention")
			cfg.DropAfterTurn, cfg.MaxConcurrency, cfg.Mech.PrefetchWindowTurns = true, 2, c.window
			r := newRig(t, rigSpec{cfg: cfg, kvTokens: 4096, sessions: chats(8, 3, 100, 50, false),
				tiers: []kvstore.Tier{{Name: "dram", Bytes: 192 << 10}, {Name: "ssd", Bytes: 8 << 20}}})
			n := r.run(t)
			assert.Positive(t, n.LookAheads, "held-back turns' objects are raised")
			assert.Positive(t, n.LookAheadUsed)
			assert.Positive(t, n.Preloads, "and pre-loaded")
			assert.Positive(t, n.PreloadUsed)
			if c.want == 0 {
				assert.Positive(t, n.Prefetches, "with no window, queued requests' KV below DRAM is prefetched")
			}
			assert.Equal(t, int64(16), n.QueryHits, "every resumed turn hits")
			assert.Equal(t, c.want, r.s.LookAheadTurns())
		})
	}
}
