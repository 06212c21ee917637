package hostcpu

import (
	"github.com/kvcosim/kvcosim/internal/names"
	"github.com/kvcosim/kvcosim/kvstore"
)

// Store is a design's way of keeping KV caches beyond the accelerator's
// memory, as the host drives it: look a request's object up, move what was
// found to the accelerator, and store a session's KV after a turn. Each
// design is one implementation in a file of its own and one row of
// designs; the host's decision, scheduling and export phases are the same
// for all of them.
type Store interface {
	// Query looks up the object of the request in slot. When the lookup
	// ends the store keeps its outcome in the request and calls
	// System.queried with the slot, from an event of its own.
	Query(slot int)
	// Import moves the found KV of the request in slot to its accelerator
	// and returns in how many parts; each part ends with an opImported
	// event.
	Import(slot int) int
	// Offload moves an export's KV off the accelerator, ending with one
	// opExportStep event.
	Offload(id int)
	// Save stores an export's KV and returns in how many parts; each part
	// ends with an opExportStep event.
	Save(id int) int
	// Part names where the store's queries and exports run, for spans.
	Part() string
}

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
	Mech Mechanisms
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
	newStore           func(s *System) Store
}

// String returns the design's name.
func (d Design) String() string { return d.Name }

// designs are the designs by name: a new design is a file with its Store
// and one row here.
var designs = []Design{
	{Name: "recompute", newStore: newRecomputeStore},
	{Name: "cpu", Stores: true, newStore: newCPUStore},
	{Name: "fpga", Stores: true, Card: true, newStore: newFPGAStore},
	{Name: "lmcache", Stores: true, DRAMTier: true, ChunkTokens: 256, newStore: newLMCacheStore,
		Mech: Mechanisms{Load: LoadLayerwise, Save: SaveAsync, Layout: kvstore.LayoutLayerMajor}},
	{Name: "cachedattention", Stores: true, DRAMTier: true, DecoupledPositions: true, newStore: newCachedAttentionStore,
		Mech: Mechanisms{Load: LoadLayerwise, Save: SaveAsync, Prefetch: PrefetchQueue, Preload: PreloadQueue, Eviction: EvictQueueAware,
			Layout: kvstore.LayoutLayerMajor}},
}

// DesignNames lists the designs' names.
func DesignNames() []string { return names.Of(designs, Design.String) }

// ParseDesign reads a design name.
func ParseDesign(name string) (Design, error) {
	return names.Find("design", designs, Design.String, name)
}
