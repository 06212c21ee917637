// Package store holds the designs' stores: how each design looks a
// request's KV up, moves it into the accelerator, and moves and stores an
// export's. A store sees the host only through Host (time, the storage
// pool, a node's hardware, moving bytes over a path, a core's work) and
// takes values, not the host's tables, so each design is tested alone
// against a fake host (contract_test.go). The designs' table (design.go)
// names them; a new design is a file here and one row there.
package store

import (
	"github.com/kvcosim/kvcosim/fpga"
	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
)

// Ticket names the host's step a store's work belongs to (a request's
// lookup or import, an export's offload or save). The store never reads
// it: it hands it back to the host when the work ends, so ending a step
// costs no allocation.
type Ticket int64

// Background is the ticket of work nobody waits for: a move between tiers
// that a lookup or a save causes.
const Background Ticket = 0

// Host is what a store may use of the host, and how it reports.
type Host interface {
	// Now is the simulated time.
	Now() sim.Time
	// Pool is the storage pool's tiers and index (nil for a design whose
	// FPGA keeps the index).
	Pool() *kvstore.Pool
	// Node is node i's hardware.
	Node(i int) *Node
	// Move moves bytes through hops, one after another (or streamed in
	// chunks), and ends t when the last byte has passed the last hop.
	Move(t Ticket, hops []Hop, bytes int64)
	// Compute has a core of the node spend service, then ends t.
	Compute(node int, service sim.Time, t Ticket)
	// Found reports a lookup's outcome, before its step ends.
	Found(t Ticket, f kvstore.Found)
	// Importing reports that a lookup's outcome was known at since and
	// that the store has been moving the found data since then, within its
	// lookup (a card that imports as part of its query task): the host
	// books the time from since as import, not as query.
	Importing(t Ticket, since sim.Time)
	// Saved reports what the store did with an export, before (or as) its
	// step ends.
	Saved(t Ticket, o Outcome)
	// End ends t now; Later ends it at this instant after the events
	// already due.
	End(t Ticket)
	Later(t Ticket)
	// Fail stops the run on a broken invariant.
	Fail(err error)
}

// Store is a design's way of keeping KV. Each method starts work whose
// end the host learns through its ticket.
type Store interface {
	// Query looks the request's object up, reports it with Host.Found and
	// ends t.
	Query(t Ticket, l Lookup)
	// Import moves the found KV into the accelerator and returns in how
	// many parts; each part ends t once.
	Import(t Ticket, in Import) int
	// Offload moves an export's KV off the accelerator and ends t once.
	Offload(t Ticket, x Export)
	// Save stores an export's KV, reports it with Host.Saved, and returns
	// in how many parts; each part ends t once.
	Save(t Ticket, x Export) int
	// Part names where the store's queries and exports run, for spans.
	Part() string
}

// Lookup is what a request asks the store for.
type Lookup struct {
	Session int64
	Node    int
	// Object is the session's patent key, or the prompt's block keys.
	Object kvstore.Object
	// HistoryTokens and PromptTokens are the session's history and the
	// request's prompt, for hashing; KeysGiven: the trace gave the block
	// keys, so nothing is hashed.
	HistoryTokens, PromptTokens int64
	KeysGiven                   bool
}

// Import is a found object's way into the accelerator.
type Import struct {
	Session int64
	Node    int
	// Bytes are the KV bytes the request reuses; Extents where a CPU-run
	// store found them (trimmed to those bytes).
	Bytes   int64
	Extents []kvstore.Extent
	// Saving are the extents the session's asynchronous export is still
	// writing from its buffer in host memory.
	Saving []kvstore.Extent
	// Staged: a prefetch has put the extents below the top tier in host
	// memory.
	Staged bool
}

// Export is a session's KV leaving the accelerator for the store.
type Export struct {
	Session int64
	Node    int
	// Bytes cross to the store; Object is what is stored under which key.
	Bytes  int64
	Object kvstore.Object
	// HistoryTokens is the session's history, for hashing.
	HistoryTokens int64
}

// Outcome is what the store did with an export.
type Outcome struct {
	Export kvstore.ExportResult
	Err    error
}

// Params are the host's costs a store charges.
type Params struct {
	Scheme kvstore.Scheme
	// CPUHashBandwidth is software XXH64 on one core; HostAccessLatency
	// an idle host-memory access (a table read by the CPU).
	CPUHashBandwidth  sim.Bandwidth
	HostAccessLatency sim.Time
	// DeferImport: the KV loads layer by layer from the request's
	// admission (store.load: layerwise), so a card leaves its import to
	// Import instead of running it within the lookup.
	DeferImport bool
}

// Node is what a store reaches of one node: its FPGA (design fpga), host
// memory, the links to the accelerator and the storage tiers.
type Node struct {
	// FPGA is the node's engine (a design with a card).
	FPGA *fpga.Engine
	// HostMemory is the node's DRAM (a CPU-run store bounces KV through
	// it), of HostMemoryBytes: a transfer streamed through it stages its
	// chunks round it as a ring (Staging).
	HostMemory      memory.Device
	HostMemoryBytes int64
	// ToGPU and FromGPU are the host's PCIe link to the accelerator.
	ToGPU, FromGPU *sim.Link
	// Pageable is the CUDA driver's copy of pageable host memory into its
	// pinned staging buffers, on the way into the accelerator, when the
	// store keeps its host copy in pageable memory (store.host_buffers:
	// pageable); nil: pinned, the DMA reads it directly.
	Pageable *sim.Link
	// PagedCopy is the accelerator's copy of loaded KV into the engine's
	// paged blocks (a device-memory read and write of every byte), for a
	// design whose connector lands the KV in a buffer of its own first
	// (Design.PagedCopy); nil otherwise.
	PagedCopy *sim.Link
	// P2PToGPU and P2PFromGPU join the FPGA's exchange memory and the
	// accelerator (design fpga, exchange on the FPGA card).
	P2PToGPU, P2PFromGPU *sim.Link
	// Tiers are the storage pool's tiers as this node reaches them,
	// fastest first (the patent's external store is the one tier).
	Tiers []memory.Device
}

// Hop is one step of a data movement: a device access or a link transfer.
type Hop struct {
	Dev   memory.Device
	Addr  int64
	Write bool
	Link  *sim.Link
	// Ring is a staging hop's bytes: its chunks wrap round them.
	Ring int64
}

// Staging is the hop through the node's host memory, written or read: a
// transfer stages there at address 0, and a streamed one larger than host
// memory wraps round it in whole chunks, as a pipelined copy reuses its
// staging buffers (store.chunk is at most host memory, checked when the
// scenario loads, and a whole transfer fits it).
func (n *Node) Staging(write bool) Hop {
	return Hop{Dev: n.HostMemory, Write: write, Ring: n.HostMemoryBytes}
}

// IntoGPU is the way from host memory into the accelerator: the driver's
// staging copy of pageable memory, if any, then PCIe.
func (n *Node) IntoGPU() []Hop {
	if n.Pageable == nil {
		return []Hop{{Link: n.ToGPU}}
	}
	return []Hop{{Link: n.Pageable}, {Link: n.ToGPU}}
}

// IntoEngine is the way from host memory into the engine's KV blocks:
// into the accelerator, then, for a design whose connector lands the KV in
// a buffer of its own, the accelerator's copy into the paged blocks.
func (n *Node) IntoEngine() []Hop {
	if n.PagedCopy == nil {
		return n.IntoGPU()
	}
	return append(n.IntoGPU(), Hop{Link: n.PagedCopy})
}

// ImportHops is a stored extent's way into the engine's KV blocks: read in
// its tier, through host memory (a bounce buffer), into the engine; only
// the way from host memory when a prefetch has put it there already
// (staged).
func (n *Node) ImportHops(x kvstore.Extent, staged bool) []Hop {
	if staged && x.Tier > 0 {
		return n.IntoEngine()
	}
	return append(n.ToHost(x.Tier, x.Addr), n.IntoEngine()...)
}

// ToHost is an extent's way from its tier into host memory.
func (n *Node) ToHost(tier int, addr int64) []Hop {
	return []Hop{{Dev: n.Tiers[tier], Addr: addr}, n.Staging(true)}
}

// At is the address of a transfer's chunk at offset off, chunks of chunk
// bytes.
func (h Hop) At(off, chunk int64) int64 {
	if h.Ring == 0 {
		return h.Addr + off
	}
	return h.Addr + off/chunk%max(1, h.Ring/chunk)*chunk
}

// MoveBetweenTiers carries out the pool's moves between tiers in the
// background: each extent read from its tier into host memory and written
// from host memory into its new tier, taking the devices' time without
// holding up the work that caused it.
func MoveBetweenTiers(h Host, node int, moves []kvstore.Move) {
	n := h.Node(node)
	for _, m := range moves {
		for _, x := range m.Read {
			h.Move(Background, n.ToHost(x.Tier, x.Addr), x.Bytes)
		}
		for _, x := range m.Write {
			h.Move(Background, []Hop{n.Staging(false), {Dev: n.Tiers[x.Tier], Addr: x.Addr, Write: true}}, x.Bytes)
		}
	}
}
