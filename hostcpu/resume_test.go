package hostcpu

import (
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/hostcpu/mech"
	"github.com/kvcosim/kvcosim/kvstore"
)

// TestResumedTurnsReuseTheStore: with the accelerator dropping every
// session's KV after its turn, each storing design's resumed turns query the store
// and find the history the turn before exported: the patent key's whole
// history, or (lmcache's chunks) every whole block of it; a layer-wise
// design records its stall, a whole load its import.
func TestResumedTurnsReuseTheStore(t *testing.T) {
	for _, design := range store.DesignNames() {
		cfg := rigConfig(t, design)
		if !cfg.Design.Stores {
			continue
		}
		t.Run(design, func(t *testing.T) {
			cfg.DropAfterTurn = true
			r := newRig(t, rigSpec{cfg: cfg, kvTokens: 4096, sessions: chats(3, 3, 100, 50, false)})
			c := r.run(t)
			recs := byTurn(r.s.Records())
			require.Len(t, recs, 9)
			assert.Equal(t, int64(9), c.Exports, "every turn is exported")
			assert.Zero(t, c.ExportFailed)
			assert.Equal(t, int64(6), c.QueryHits, "every resumed turn hits")
			for id := range int64(3) {
				for k, history := range []int64{0, 110, 140} {
					rec := recs[[2]int64{id, int64(k)}]
					assert.True(t, rec.Done)
					if k == 0 {
						assert.Equal(t, FirstTokens, rec.Decision)
						continue
					}
					assert.Equal(t, Query, rec.Decision)
					assert.True(t, rec.Hit)
					want := history
					if cfg.Scheme == kvstore.SchemeBlock {
						want = history / cfg.BlockTokens * cfg.BlockTokens
					}
					assert.Equal(t, want, rec.ReusedTokens, "session %d turn %d", id, k)
					assert.Equal(t, rec.PromptTokens-rec.ReusedTokens, rec.ComputedTokens)
					assert.Equal(t, want*cfg.KVBytesPerToken, rec.ImportBytes)
					assert.Positive(t, rec.Import)
					if cfg.Mech.Load == mech.LoadWhole {
						assert.Equal(t, rec.Parked+rec.QueryTime+rec.Import, rec.KVWait)
					} else {
						assert.Equal(t, rec.Parked+rec.QueryTime+rec.LoadStall, rec.KVWait)
					}
				}
			}
		})
	}
}
