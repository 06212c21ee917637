package hostcpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/hostcpu/mech"
)

// TestContextWindowTruncatesOrRejects: a session whose turns outgrow a
// 150-token window is cut from its history's front, and a design that
// stores KV without positions (cachedattention) still reuses what is left
// of its stored history, where the patent's key (cpu) no longer matches;
// with reject, the turn that passes the window is refused and ends its
// session.
func TestContextWindowTruncatesOrRejects(t *testing.T) {
	for _, c := range []struct {
		design      string
		policy      ContextPolicy
		reusesAfter bool
	}{
		{"cachedattention", ContextTruncate, true},
		{"cpu", ContextTruncate, false},
		{"cpu", ContextReject, false},
	} {
		t.Run(c.design+"/"+c.policy.String(), func(t *testing.T) {
			cfg := rigConfig(t, c.design)
			cfg.DropAfterTurn, cfg.ContextTokens, cfg.ContextPolicy = true, 150, c.policy
			r := newRig(t, rigSpec{cfg: cfg, kvTokens: 4096, sessions: chats(1, 4, 100, 50, false)})
			n := r.run(t)
			recs := r.s.Records()
			if c.policy == ContextReject {
				require.Len(t, recs, 3, "the refused turn ends the session")
				assert.False(t, recs[2].Done)
				assert.Equal(t, int64(1), r.s.Rejected().For(RejectContextWindow))
				assert.Equal(t, int64(1), r.s.Rejected().Total(), "and for no other reason")
				return
			}
			require.Len(t, recs, 4)
			cut := recs[2]
			assert.Equal(t, int64(20), cut.TruncatedTokens, "160 prompt and 10 output tokens pass 150 by 20")
			assert.Equal(t, int64(140), cut.PromptTokens)
			assert.Positive(t, n.Truncated)
			if c.reusesAfter {
				assert.Equal(t, int64(120), cut.ReusedTokens, "the stored history less the 20 tokens cut")
			} else {
				assert.Zero(t, cut.ReusedTokens, "every kept token moved: the stored KV is stale")
			}
			for _, rec := range recs {
				assert.LessOrEqual(t, rec.PromptTokens+rec.OutputTokens, cfg.ContextTokens)
			}
		})
	}
}

// TestAsyncBufferFullBlocksOrDrops: four sessions end their turns in the
// same iteration, and their exports, 55 KiB each, meet an asynchronous
// buffer of 64 KiB: with block the later ones wait for room and are all
// stored; with drop they are skipped and counted.
func TestAsyncBufferFullBlocksOrDrops(t *testing.T) {
	for _, policy := range []mech.FullPolicy{mech.FullBlock, mech.FullDrop} {
		t.Run(policy.String(), func(t *testing.T) {
			cfg := rigConfig(t, "cpu")
			cfg.DropAfterTurn, cfg.Mech.Save, cfg.Mech.AsyncBufferBytes, cfg.Mech.AsyncFull = true, mech.SaveAsync, 64<<10, policy
			sessions := chats(4, 2, 100, 50, false)
			for i := range sessions {
				sessions[i].Start = 0
			}
			r := newRig(t, rigSpec{cfg: cfg, kvTokens: 4096, sessions: sessions})
			n := r.run(t)
			if policy == mech.FullBlock {
				assert.Positive(t, n.ExportsBlocked)
				assert.Zero(t, n.ExportsDropped)
				assert.Equal(t, int64(8), n.Exports)
				assert.Equal(t, int64(4), n.QueryHits)
				return
			}
			assert.Positive(t, n.ExportsDropped)
			assert.Equal(t, 8, int(n.Exports+n.ExportsDropped), "every turn's export is stored or dropped")
			assert.Equal(t, n.QueryHits+n.QueryMiss, int64(4))
			assert.Positive(t, n.QueryMiss, "a dropped export's session misses")
		})
	}
}

// TestSessionsMigrateWithTheirKV: with every resumed turn sent to the other
// node, the session's KV is released where it was and the new node finds
// it in the shared store.
func TestSessionsMigrateWithTheirKV(t *testing.T) {
	cfg := rigConfig(t, "cpu")
	cfg.MigrateFraction = 1
	r := newRig(t, rigSpec{cfg: cfg, kvTokens: 4096, nodes: 2, sessions: chats(3, 3, 100, 50, false)})
	n := r.run(t)
	assert.Equal(t, int64(6), n.Migrations)
	assert.Equal(t, int64(6), n.QueryHits)
	for _, rec := range r.s.Records() {
		if rec.Turn > 0 {
			assert.Equal(t, Query, rec.Decision)
			assert.Equal(t, (rec.Session+int64(rec.Turn))%2, int64(rec.Node), "it alternates between the nodes")
		}
	}
}

// TestWriteBackExportsOnlyWhatIsEvicted: with on_evict, a session's KV is
// stored when the accelerator drops it, and only then; sessions that stay
// resident continue without the store.
func TestWriteBackExportsOnlyWhatIsEvicted(t *testing.T) {
	cfg := rigConfig(t, "cpu")
	cfg.Export = OnEvict
	r := newRig(t, rigSpec{cfg: cfg, kvTokens: 300, sessions: chats(3, 2, 100, 50, false)})
	n := r.run(t)
	assert.Equal(t, n.DeviceEvictions, n.Exports, "one export per eviction")
	assert.Positive(t, n.Exports)
	for _, rec := range r.s.Records() {
		assert.True(t, rec.Done)
		if rec.Decision == Query {
			assert.True(t, rec.Hit, "an evicted session's export is found")
		}
	}
}

// TestLayerwiseLoadWaitRequest: with load_wait request a layer-wise load
// keeps its request out of the iterations until its KV has landed: its
// stall, from admission to its first iteration, covers the whole load.
func TestLayerwiseLoadWaitRequest(t *testing.T) {
	cfg := rigConfig(t, "lmcache")
	cfg.DropAfterTurn, cfg.Mech.LoadWait = true, mech.LoadWaitRequest
	r := newRig(t, rigSpec{cfg: cfg, kvTokens: 4096, sessions: chats(2, 2, 100, 50, false)})
	n := r.run(t)
	assert.Equal(t, int64(2), n.QueryHits)
	for _, rec := range r.s.Records() {
		if rec.ReusedTokens == 0 {
			continue
		}
		assert.GreaterOrEqual(t, rec.LoadStall, rec.Import, "its first iteration starts after its whole load")
		assert.Equal(t, rec.Parked+rec.QueryTime+rec.LoadStall, rec.KVWait)
	}
}

// TestTruncationCutsEnoughForTheNextTurns: a request that passes the
// window loses at least what it passes by, and as much more history as
// leaves prompt and output filling the share of the window asked; what
// a stored version keeps of its tokens depends on whether its KV carries
// positions.
func TestTruncationCutsEnoughForTheNextTurns(t *testing.T) {
	cases := []struct {
		name                     string
		window, fill             int64
		history, prompt, outputs int64
		cut                      int64
	}{
		{"fits", 1000, 1000, 500, 600, 100, 0},
		{"no window", 0, 1000, 500, 5000, 100, 0},
		{"just past, cut no more than needed", 1000, 1000, 800, 950, 100, 50},
		{"cut to half the window", 1000, 500, 800, 950, 100, 550},
		{"half the window is more than the history", 1000, 500, 300, 950, 100, 300},
	}
	for _, c := range cases {
		cfg := validConfig()
		cfg.ContextTokens, cfg.TruncateFillPermille = c.window, c.fill
		tr := truncation{s: &System{cfg: cfg}}
		assert.Equal(t, c.cut, tr.cutFor(c.history, c.prompt, c.outputs), c.name)
	}
	for _, c := range []struct {
		design                 string
		tokens, dropped, valid int64
	}{
		{"cpu", 400, 0, 400},
		{"cpu", 400, 100, 0},
		{"cachedattention", 400, 100, 300},
		{"cachedattention", 400, 500, 0},
	} {
		tr := truncation{s: &System{cfg: rigConfig(t, c.design)}}
		assert.Equal(t, c.valid, tr.stillValid(c.tokens, c.dropped), "%s: %d tokens stored, %d dropped", c.design, c.tokens, c.dropped)
	}
}
