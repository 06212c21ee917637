package memory

import (
	"fmt"

	"github.com/kvcosim/kvcosim/sim"
)

// Striped is several identical drives as one (RAID 0): consecutive
// stripes of the address space go to consecutive drives, so a long
// transfer keeps every drive busy and they add up their bandwidth. An
// access is split at the stripe boundaries, each drive gets one request
// for its part (its stripes of the access are contiguous on it), and the
// access ends when its last part does.
type Striped struct {
	eng         *sim.Engine
	drives      []Device
	stripeBytes int64
	joins       sim.Slots[stripedJoin]
	// ssds: every drive is an SSD, which raises a part's end as an event at
	// the time the part ends (partEnds)
	ssds bool
}

// stripedJoin is an access waiting for its parts.
type stripedJoin struct {
	left int
	done sim.Event
}

// StripeBytes is the stripe of a Striped device: a drive's largest
// command (MaxIOBytes of the SSD presets), so a stripe is one command.
const StripeBytes = 1 << 20

// NewStriped stripes drives, each holding stripeBytes at a time.
func NewStriped(eng *sim.Engine, drives []Device, stripeBytes int64) (*Striped, error) {
	if len(drives) < 2 || stripeBytes < 1 {
		return nil, fmt.Errorf("striped device: %d drives of %d B stripes: need at least 2 drives and a positive stripe", len(drives), stripeBytes)
	}
	ssds := true
	for _, d := range drives {
		_, isSSD := d.(*SSD)
		ssds = ssds && isSSD
	}
	return &Striped{eng: eng, drives: drives, stripeBytes: stripeBytes, ssds: ssds}, nil
}

// Access splits the request among the drives: drive d gets the stripes
// d, d+N, d+2N, ... of the access, which lie back to back at its own
// addresses.
func (s *Striped) Access(r Request) {
	if r.Bytes <= 0 {
		if r.Done.Handler != nil {
			s.eng.Schedule(s.eng.Now(), r.Done)
		}
		return
	}
	n := int64(len(s.drives))
	first, last := r.Addr/s.stripeBytes, (r.Addr+r.Bytes-1)/s.stripeBytes
	parts := int(min(n, last-first+1))
	id := int64(s.joins.Put(stripedJoin{left: parts, done: r.Done}))
	for k := range int64(parts) {
		unit := first + k // the drive's first stripe of the access
		start := max(r.Addr, unit*s.stripeBytes)
		var bytes int64
		for u := unit; u <= last; u += n { // its stripes, back to back on the drive
			bytes += min(r.Addr+r.Bytes, (u+1)*s.stripeBytes) - max(r.Addr, u*s.stripeBytes)
		}
		local := unit/n*s.stripeBytes + start%s.stripeBytes
		s.drives[unit%n].Access(Request{Addr: local, Bytes: bytes, Write: r.Write, Done: sim.Event{Handler: s, Arg: id}})
	}
}

// partEnds is a drive's word that a part of access arg ends now, before
// it raises the part's end as an event; it reports whether to raise it.
// The parts' events would each fall at the time it was raised, so the
// last raised is the last handled, and the others' only count: with
// every drive an SSD (each raises its parts' ends so) an earlier part is
// counted here and raises nothing, and the last raises the one event,
// at the place in the event order it had, which ends the access.
func (s *Striped) partEnds(arg int64) bool {
	j := s.joins.At(int(arg))
	if !s.ssds || j.left == 1 {
		return true
	}
	j.left--
	return false
}

// Handle counts an access's part; with the last the access ends.
func (s *Striped) Handle(ev sim.Event) {
	j := s.joins.At(int(ev.Arg))
	if j.left--; j.left > 0 {
		return
	}
	done := s.joins.Take(int(ev.Arg)).done
	if done.Handler != nil {
		done.Handler.Handle(done)
	}
}

// Traffic adds up the drives' bytes; ReadBusy and WriteBusy are their links' means, so
// that a busy share stays a share of one path.
func (s *Striped) Traffic() Traffic {
	var t Traffic
	for _, d := range s.drives {
		dt := d.Traffic()
		t.BytesRead += dt.BytesRead
		t.BytesWritten += dt.BytesWritten
		t.ReadBusy += dt.ReadBusy
		t.WriteBusy += dt.WriteBusy
		t.DrainedAt = max(t.DrainedAt, dt.DrainedAt)
	}
	t.ReadBusy /= sim.Time(len(s.drives))
	t.WriteBusy /= sim.Time(len(s.drives))
	return t
}

// Drives returns the striped drives.
func (s *Striped) Drives() []Device { return s.drives }
