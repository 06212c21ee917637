package kvstore

import (
	"fmt"

	"github.com/kvcosim/kvcosim/sim"
)

// Check verifies the invariants: every region is in exactly one of FIFO 1,
// FIFO 2 or a live segment; each segment's reference count equals the links
// whose object uses it; prev/next pointers agree and every link is
// reachable from exactly the bucket of its hash; the number of links equals
// the table's population, which is the links inserted less those
// deleted, and each deletion is counted under one cause. The error names
// the simulated time, the operation and the region or link at fault.
func (d *Directory) Check(now sim.Time, op string) error {
	d.stats.Checks++
	fail := func(format string, args ...any) error {
		return &InvariantError{fmt.Sprintf("fpga invariant violated at %v after %s: %s", now, op, fmt.Sprintf(format, args...))}
	}
	if st := d.stats; st.Inserts-st.Deletes != int64(d.live) || st.Deletes != st.Evictions+st.Expirations+st.Removals {
		return fail("%d links inserted and %d deleted but %d live; the deletions are %d evictions + %d expirations + %d removals",
			st.Inserts, st.Deletes, d.live, st.Evictions, st.Expirations, st.Removals)
	}
	where := make([]uint8, len(d.regionState)) // 0 unseen, 1+state seen
	// see marks region r found in from (a FIFO, or segment seg when from
	// is empty) and checks it was nowhere else and is marked so.
	see := func(r int32, state uint8, from string, seg int) error {
		if where[r] == 0 && d.regionState[r] == state {
			where[r] = state + 1
			return nil
		}
		if from == "" {
			from = fmt.Sprintf("segment %d", seg)
		}
		if where[r] != 0 {
			return fail("region %d is in %s and also elsewhere", r, from)
		}
		return fail("region %d found in %s but marked state %d", r, from, d.regionState[r])
	}
	if int(d.fifo1.next) != len(d.regionState) {
		return fail("%d regions handed out of FIFO 1 but %d have a state", d.fifo1.next, len(d.regionState))
	}
	for i := range d.fifo1.matured.Len() { // regions never used are implicitly in FIFO 1
		if err := see(d.fifo1.matured.At(i), inFIFO1, "FIFO 1", -1); err != nil {
			return err
		}
	}
	for i := range d.fifo2.Len() {
		if err := see(d.fifo2.At(i).region, inFIFO2, "FIFO 2", -1); err != nil {
			return err
		}
	}
	refs := make([]int32, d.segs.len())
	seen := make([]bool, d.links.len())
	filed := d.lruFiled()
	count := 0
	for b, head := range d.buckets {
		prev := int32(none)
		for id := head; id != none; id = d.links.at(id).next {
			l := d.links.at(id)
			first, _ := d.find(l.key)
			switch {
			case first != id:
				return fail("link %d holds key %+v, which link %d before it holds too", id, l.key, first)
			case seen[id]:
				return fail("link %d is reached twice (a cycle, or two buckets)", id)
			case l.prev != prev:
				return fail("link %d has prev %d but follows %d", id, l.prev, prev)
			case int(d.bucketOf(l.key.Hash)) != b:
				return fail("link %d (hash %#x) sits in bucket %d, not %d", id, l.key.Hash, b, d.bucketOf(l.key.Hash))
			case l.lruKey > l.touched || filed[id] != l.lruKey+1:
				return fail("link %d is missing from the LRU order", id)
			}
			seen[id] = true
			count++
			prev = id
			for s := l.lastSeg; s != none; s = d.segs.at(s).prev {
				refs[s]++
			}
		}
	}
	if count != d.live || d.lru.Len() != d.live {
		return fail("%d links reachable, %d counted live, %d in the LRU order", count, d.live, d.lru.Len())
	}
	for s := range d.segs.len() {
		seg := d.segs.at(s)
		if refs[s] != seg.refs {
			return fail("segment %d has %d references but %d links use it", s, seg.refs, refs[s])
		}
		for i := range int(seg.nRegions) {
			if err := see(d.region(seg, i), inUse, "", int(s)); err != nil {
				return err
			}
		}
	}
	for r, w := range where {
		if w == 0 {
			return fail("region %d is in neither FIFO nor any segment (leaked)", r)
		}
	}
	return nil
}

// lruFiled returns, for each link, the access number plus one under
// which the LRU order files it (0: not filed), in one walk of the order: a
// lookup of every live link's entry cost the store replay's end-of-run
// check a third of its time.
func (d *Directory) lruFiled() []uint64 {
	filed := make([]uint64, d.links.len())
	d.lru.Ascend(func(it lruItem) bool {
		if it.id >= 0 && it.id < int32(len(filed)) {
			filed[it.id] = it.touched + 1
		}
		return true
	})
	return filed
}

// InvariantError is a violated invariant: a bug in the model, which stops
// the simulation, as opposed to a store too small for an object.
type InvariantError struct{ msg string }

func (e *InvariantError) Error() string { return e.msg }

// InjectStateFault marks region r free in FIFO 2 without taking it from
// the object that holds it: a fault for checking that the invariant check,
// and the engine that runs it, stop the simulation and name the region.
func (d *Directory) InjectStateFault(r int32) { d.regionState[r] = inFIFO2 }
