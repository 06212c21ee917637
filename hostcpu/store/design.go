package store

import (
	"github.com/kvcosim/kvcosim/hostcpu/mech"
	"github.com/kvcosim/kvcosim/internal/names"
	"github.com/kvcosim/kvcosim/kvstore"
)

// Design is a way of keeping KV caches: a name, what it needs of the
// system, and its store.
type Design struct {
	Name string
	// Stores: the design keeps KV in the storage pool, through its index.
	Stores bool
	// Card: every node needs the patent's FPGA card.
	Card bool
	// Mech are the design's own store mechanisms (store: keys left
	// empty); Layout its objects' layout unless fpga.layout is given.
	Mech mech.Mechanisms
	// DRAMTier: unless storage.tiers is given, the store keeps objects in
	// a host-DRAM tier (store.dram_tier) above storage.device.
	DRAMTier bool
	// ChunkTokens > 0: unless fpga.hashing is given, the design keys
	// prefix-chained chunks of this many tokens (the block scheme).
	ChunkTokens int64
	// DecoupledPositions: the design stores KV before positions are
	// applied and indexes it by session (CachedAttention section 3.5), so
	// what is left of a truncated history's KV stays valid.
	DecoupledPositions bool
	// PagedCopy: the design's connector lands loaded KV in a buffer of its
	// own on the accelerator and copies it into the engine's paged blocks
	// (LMCache), a device-memory read and write of every byte
	// (Node.PagedCopy).
	PagedCopy bool
	// New makes the design's store over a host.
	New func(h Host, p Params) Store
}

// String returns the design's name.
func (d Design) String() string { return d.Name }

// designs are the designs by name: a new design is a file with its Store
// and one row here.
var designs = []Design{
	{Name: "recompute", New: newRecompute},
	{Name: "cpu", Stores: true, New: newCPU},
	{Name: "fpga", Stores: true, Card: true, New: newFPGA},
	{Name: "lmcache", Stores: true, DRAMTier: true, ChunkTokens: 256, PagedCopy: true, New: newLMCache,
		Mech: mech.Mechanisms{Load: mech.LoadLayerwise, Save: mech.SaveAsync, Layout: kvstore.LayoutLayerMajor}},
	{Name: "cachedattention", Stores: true, DRAMTier: true, DecoupledPositions: true, New: newCachedAttention,
		Mech: mech.Mechanisms{Load: mech.LoadLayerwise, Save: mech.SaveAsync, Prefetch: mech.PrefetchQueue, Preload: mech.PreloadQueue,
			Eviction: mech.EvictQueueAware, Layout: kvstore.LayoutLayerMajor}},
}

// DesignNames lists the designs' names.
func DesignNames() []string { return names.Of(designs, Design.String) }

// ParseDesign reads a design name.
func ParseDesign(name string) (Design, error) {
	return names.Find("design", designs, Design.String, name)
}
