package hostcpu

import "github.com/kvcosim/kvcosim/internal/names"

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
	Card     bool
	newStore func(s *System) Store
}

// String returns the design's name.
func (d Design) String() string { return d.Name }

// designs are the designs by name: a new design is a file with its Store
// and one row here.
var designs = []Design{
	{Name: "recompute", newStore: newRecomputeStore},
	{Name: "cpu", Stores: true, newStore: newCPUStore},
	{Name: "fpga", Stores: true, Card: true, newStore: newFPGAStore},
}

// DesignNames lists the designs' names.
func DesignNames() []string { return names.Of(designs, Design.String) }

// ParseDesign reads a design name.
func ParseDesign(name string) (Design, error) {
	return names.Find("design", designs, Design.String, name)
}
