package kvstore

// arena stores values in fixed-size chunks addressed by int32 ids, reusing
// freed ids. Chunks never move, so growth wastes no capacity and pointers
// stay valid.
type arena[T any] struct {
	chunks [][]T
	free   []int32
	size   int32
}

const arenaChunkBits = 14

func (a *arena[T]) at(id int32) *T {
	return &a.chunks[id>>arenaChunkBits][id&(1<<arenaChunkBits-1)]
}

// alloc returns a fresh id holding v.
func (a *arena[T]) alloc(v T) int32 {
	var id int32
	if n := len(a.free); n > 0 {
		id = a.free[n-1]
		a.free = a.free[:n-1]
	} else {
		if int(a.size>>arenaChunkBits) == len(a.chunks) {
			a.chunks = append(a.chunks, make([]T, 1<<arenaChunkBits))
		}
		id = a.size
		a.size++
	}
	*a.at(id) = v
	return id
}

// release frees id, resetting its value to zero.
func (a *arena[T]) release(id int32) {
	var zero T
	*a.at(id) = zero
	a.free = append(a.free, id)
}

// len returns one more than the highest id ever allocated.
func (a *arena[T]) len() int32 { return a.size }
