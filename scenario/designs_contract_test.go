package scenario

import (
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/kvstore"
)

// TestEveryDesignKeepsTheStoreContract runs each design of the design
// table on the same workload, whose sessions are evicted from device
// memory between turns, with a store that never evicts. Whatever the
// design, its store must: answer every query with a hit or a miss; with a
// store, find every resumed session's KV (a query never misses) and
// import exactly the reused tokens' KV; without one, never query nor
// write; and conserve its counts; on one drive or striped over four.
// lost counts the resumed turns whose lookup missed though their KV was
// stored and still valid: every miss but those of truncated histories
// whose KV was stored with its old positions.
func lost(res *Result) (n int) {
	decoupled := res.Run.l.resolved.host.Design.DecoupledPositions
	for _, r := range res.Run.sys.Records() {
		stale := r.TruncatedTokens > 0 && !decoupled
		if r.Decision == hostcpu.Query && !r.Hit && !stale {
			n++
		}
	}
	return n
}

func TestEveryDesignKeepsTheStoreContract(t *testing.T) {
	for _, name := range store.DesignNames() {
		for _, drives := range []string{"storage.drives=1", "storage.drives=4", "storage.resolution=request"} {
			t.Run(name+"/"+drives, func(t *testing.T) {
				keepsTheStoreContract(t, name, drives)
			})
		}
	}
}

func keepsTheStoreContract(t *testing.T, name, storage string) {
	design, err := store.ParseDesign(name)
	require.NoError(t, err)
	res, _ := execute(t, "system.design="+name, "workload.sessions=60", "storage.capacity=unlimited",
		"accelerator.reserve_gb=40", storage)
	s := res.Summary()
	c := s.Conservation
	assert.Equal(t, c["requests"], c["decided"])
	assert.Equal(t, c["queries"], c["hits"]+c["misses"])
	kvPerToken := res.Run.l.resolved.host.KVBytesPerToken
	var reused, imported int64
	for _, r := range res.Run.sys.Records() {
		reused += r.ReusedTokens
		imported += r.ImportBytes
	}
	assert.Equal(t, reused*kvPerToken, imported, "an import moves the reused tokens' KV")
	if !design.Stores {
		assert.Zero(t, c["queries"])
		assert.Zero(t, s.Bytes["storage_write"])
		assert.Greater(t, s.Decisions["recompute"], int64(0), "evicted sessions recompute")
		return
	}
	assert.Greater(t, c["queries"], int64(10), "evicted sessions come back through the store")
	assert.Zero(t, lost(res), "an unlimited store finds every stored session")
	assert.Equal(t, imported+kvstore.TokenIDBytes*reused, s.Bytes["storage_read"],
		"storage reads the imported KV and the token ids stored beside it (claim 9)")
	assert.Positive(t, s.Bytes["storage_write"])
}
