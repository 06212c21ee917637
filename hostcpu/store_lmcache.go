package hostcpu

import (
	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/sim"
)

// lmcacheStore is LMCache with vLLM (docs.lmcache.ai): prefix-chained
// chunks of 256 tokens (the block scheme) in CPU DRAM, then local disk,
// retrieved layer by layer and stored asynchronously (its design row).
// The KV moves as the cpu design moves it.
type lmcacheStore struct{ cpuStore }

func newLMCacheStore(s *System) Store { return lmcacheStore{cpuStore{s}} }

// Query hashes the prompt chunk by chunk (each chunk's key chains the one
// before) and looks up every chunk's key until the first miss: one
// host-memory access per chunk looked up besides the table walk.
func (st lmcacheStore) Query(slot int) {
	st.s.lookUp(slot, func(r *request, found kvstore.Found) sim.Time {
		looked := int64(found.MatchedBlocks) + 1
		return sim.SumTime(st.s.cfg.CPUHashBandwidth.TransferTime(4*r.promptLen),
			sim.MulTime(int64(found.Hops+found.BucketReads)+looked, st.s.cfg.HostAccessLatency))
	})
}
