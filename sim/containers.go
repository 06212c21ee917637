package sim

// ring is a growable FIFO queue of values that reuses its storage, so a
// queue in steady state allocates nothing.
type ring[T any] struct {
	buf        []T
	head, size int
}

func (r *ring[T]) len() int { return r.size }

func (r *ring[T]) push(v T) {
	if r.size == len(r.buf) {
		grown := make([]T, max(16, 2*len(r.buf)))
		for i := range r.size {
			grown[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = grown, 0
	}
	r.buf[(r.head+r.size)%len(r.buf)] = v
	r.size++
}

func (r *ring[T]) pop() T {
	var zero T
	v := r.buf[r.head]
	r.buf[r.head] = zero
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return v
}

// slots is a table of values addressed by small integer slots, with a free
// list, for state that an event refers to by index.
type slots[T any] struct {
	vals []T
	free []int
}

func (s *slots[T]) put(v T) int {
	if n := len(s.free); n > 0 {
		i := s.free[n-1]
		s.free = s.free[:n-1]
		s.vals[i] = v
		return i
	}
	s.vals = append(s.vals, v)
	return len(s.vals) - 1
}

func (s *slots[T]) take(i int) T {
	var zero T
	v := s.vals[i]
	s.vals[i] = zero
	s.free = append(s.free, i)
	return v
}
