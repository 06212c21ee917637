package sim

// FIFO is a growable first-in first-out queue of values that reuses its
// storage, so a queue in steady state allocates nothing. The zero value is
// an empty queue. Its storage is a power of two long, so positions wrap
// with a mask.
type FIFO[T any] struct {
	buf        []T
	head, size int
}

// Len returns the number of queued values.
func (r *FIFO[T]) Len() int { return r.size }

// Push appends v.
func (r *FIFO[T]) Push(v T) {
	if r.size == len(r.buf) {
		grown := make([]T, max(16, 2*len(r.buf)))
		for i := range r.size {
			grown[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
		}
		r.buf, r.head = grown, 0
	}
	r.buf[(r.head+r.size)&(len(r.buf)-1)] = v
	r.size++
}

// Peek returns the oldest value without removing it; the queue must not be
// empty.
func (r *FIFO[T]) Peek() T { return r.buf[r.head] }

// At returns the i-th oldest value (0 is the oldest).
func (r *FIFO[T]) At(i int) T { return r.buf[(r.head+i)&(len(r.buf)-1)] }

// Pop removes and returns the oldest value; the queue must not be empty.
func (r *FIFO[T]) Pop() T {
	var zero T
	v := r.buf[r.head]
	r.buf[r.head] = zero
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.size--
	if r.size == 0 && len(r.buf) > fifoKeepCap {
		r.buf, r.head = nil, 0 // a drained large queue gives its storage back
	}
	return v
}

// fifoKeepCap is the capacity a drained FIFO keeps for reuse.
const fifoKeepCap = 4096

// Slots is a table of values addressed by small integer slots, with a free
// list, for state that an event refers to by index (an Event carries the
// slot in Arg). The zero value is an empty table.
//
// Values never move: the table grows by whole pages, so a pointer from At
// stays valid however many values are put after it, until its slot is
// taken. A pointer kept past Take points at whatever reuses the slot.
type Slots[T any] struct {
	pages [][]T
	used  int // slots ever handed out
	free  []int
}

// slotPageBits sets the page size of Slots: 256 values a page.
const slotPageBits = 8

// Put stores v and returns its slot.
func (s *Slots[T]) Put(v T) int {
	if n := len(s.free); n > 0 {
		i := s.free[n-1]
		s.free = s.free[:n-1]
		*s.At(i) = v
		return i
	}
	if s.used == len(s.pages)<<slotPageBits {
		s.pages = append(s.pages, make([]T, 1<<slotPageBits))
	}
	i := s.used
	s.used++
	*s.At(i) = v
	return i
}

// At returns a pointer to the value in slot i, valid until the slot is
// taken (puts of other values never move it).
func (s *Slots[T]) At(i int) *T {
	return &s.pages[i>>slotPageBits][i&(1<<slotPageBits-1)]
}

// Len returns the number of slots in use.
func (s *Slots[T]) Len() int { return s.used - len(s.free) }

// Take removes and returns the value in slot i, freeing the slot.
func (s *Slots[T]) Take(i int) T {
	p := s.At(i)
	v := *p
	var zero T
	*p = zero
	s.free = append(s.free, i)
	return v
}
