package store

import "github.com/kvcosim/kvcosim/sim"

// lmcacheStore is LMCache with vLLM (docs.lmcache.ai): prefix-chained
// chunks of 256 tokens (the block scheme) in CPU DRAM, then local disk,
// retrieved layer by layer and stored asynchronously (its design row).
// The KV moves as the cpu design moves it, and then the accelerator copies
// it from the connector's buffer into the engine's paged blocks (LMCache's
// connector lands a chunk in a buffer of its own and scatters it into
// vLLM's KV blocks: Node.IntoEngine, docs/hostcpu.md).
type lmcacheStore struct{ cpuStore }

func newLMCache(h Host, p Params) Store { return lmcacheStore{cpuStore{h, p}} }

// Query hashes the prompt chunk by chunk (each chunk's key chains the one
// before) and looks up every chunk's key until the first miss: one
// host-memory access per chunk looked up besides the table walk.
func (st lmcacheStore) Query(t Ticket, l Lookup) {
	found := st.find(t, l)
	looked := found.MatchedBlocks + 1
	st.h.Compute(l.Node, sim.SumTime(st.p.CPUHashBandwidth.TransferTime(4*l.PromptTokens), st.walk(found.Hops+found.BucketReads+looked)), t)
}
