package hostcpu

import "github.com/kvcosim/kvcosim/sim"

// recomputeStore keeps nothing: every lookup misses at once and nothing
// is stored, so an evicted session's history is prefilled again.
type recomputeStore struct{ s *System }

func newRecomputeStore(s *System) Store { return recomputeStore{s} }

// Query misses at once.
func (st recomputeStore) Query(slot int) {
	st.s.eng.Schedule(st.s.eng.Now(), sim.Event{Handler: st.s, Op: opQueried, Arg: int64(slot)})
}

// Import has nothing to move.
func (recomputeStore) Import(int) int { return 0 }

// Offload has nowhere to move to: the export ends at once.
func (st recomputeStore) Offload(id int) {
	st.s.eng.Schedule(st.s.eng.Now(), sim.Event{Handler: st.s, Op: opExportStep, Arg: int64(id)})
}

// Save stores nothing.
func (recomputeStore) Save(int) int { return 0 }

// Part is the CPU, which decides to recompute.
func (recomputeStore) Part() string { return PartCPU }
