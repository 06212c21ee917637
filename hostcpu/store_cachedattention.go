package hostcpu

import (
	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/sim"
)

// cachedAttentionStore is CachedAttention's AttentionStore (Gao et al.,
// USENIX ATC 2024): a CPU-run store of whole-session KV objects in host
// DRAM above an SSD, indexed by session, loaded layer by layer while the
// new tokens prefill, saved asynchronously, with queued sessions' KV
// fetched into DRAM ahead and kept from eviction (its design row). The KV
// moves as the cpu design moves it.
type cachedAttentionStore struct{ cpuStore }

func newCachedAttentionStore(s *System) Store { return cachedAttentionStore{cpuStore{s}} }

// Query finds the session's object by its id: a core walks the index (one
// host-memory access per bucket and chain hop) and hashes no tokens.
func (st cachedAttentionStore) Query(slot int) {
	st.s.lookUp(slot, func(_ *request, found kvstore.Found) sim.Time {
		return sim.MulTime(int64(found.Hops+found.BucketReads+1), st.s.cfg.HostAccessLatency)
	})
}
