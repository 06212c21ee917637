package store

// recomputeStore keeps nothing: every lookup misses at once and nothing
// is stored, so an evicted session's history is prefilled again.
type recomputeStore struct{ h Host }

func newRecompute(h Host, _ Params) Store { return recomputeStore{h} }

// Query misses at once.
func (st recomputeStore) Query(t Ticket, _ Lookup) { st.h.Later(t) }

// Import has nothing to move.
func (recomputeStore) Import(Ticket, Import) int { return 0 }

// Offload has nowhere to move to: the export ends at once.
func (st recomputeStore) Offload(t Ticket, _ Export) { st.h.Later(t) }

// Save stores nothing.
func (recomputeStore) Save(Ticket, Export) int { return 0 }

// Part is the CPU, which decides to recompute.
func (recomputeStore) Part() string { return PartCPU }
