package store

// cachedAttentionStore is CachedAttention's AttentionStore (Gao et al.,
// USENIX ATC 2024): a CPU-run store of whole-session KV objects in host
// DRAM above an SSD, indexed by session, loaded layer by layer while the
// new tokens prefill, saved asynchronously, with queued sessions' KV
// fetched into DRAM ahead and kept from eviction (its design row). The KV
// moves as the cpu design moves it.
type cachedAttentionStore struct{ cpuStore }

func newCachedAttention(h Host, p Params) Store { return cachedAttentionStore{cpuStore{h, p}} }

// Query finds the session's object by its id: a core walks the index (one
// host-memory access per bucket and chain hop) and hashes no tokens.
func (st cachedAttentionStore) Query(t Ticket, l Lookup) {
	found := st.find(t, l)
	st.h.Compute(l.Node, st.walk(found.Hops+found.BucketReads+1), t)
}
