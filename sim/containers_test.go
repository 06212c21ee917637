package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSlotsMatchReferenceAndNeverMove runs random puts and takes against a
// map and keeps, for every live slot, the pointer At gave when it was put:
// writes through an old pointer must reach the table however far it grew.
func TestSlotsMatchReferenceAndNeverMove(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var s Slots[int]
		ref := map[int]int{}
		ptrs := map[int]*int{}
		for step := range 5000 {
			if len(ref) > 0 && rng.IntN(3) == 0 {
				i := anyKey(ref, rng)
				require.Equal(t, ref[i], s.Take(i), "seed %d step %d: take %d", seed, step, i)
				delete(ref, i)
				delete(ptrs, i)
				continue
			}
			i := s.Put(step)
			_, live := ref[i]
			require.False(t, live, "seed %d step %d: slot %d handed out twice", seed, step, i)
			ref[i], ptrs[i] = step, s.At(i)
			j := anyKey(ref, rng) // a late completion writes through its old pointer
			*ptrs[j]++
			ref[j]++
		}
		assert.Equal(t, len(ref), s.Len())
		for i, v := range ref {
			assert.Equal(t, v, *s.At(i), "seed %d: slot %d", seed, i)
		}
	}
}

func anyKey(m map[int]int, rng *rand.Rand) int {
	n := rng.IntN(len(m))
	for k := range m {
		if n == 0 {
			return k
		}
		n--
	}
	panic("unreachable")
}

// TestSlotsReuseFreedSlotsLastFirst pins the slot numbering that runs'
// determinism rests on: a freed slot is reused before a new one, the last
// freed first.
func TestSlotsReuseFreedSlotsLastFirst(t *testing.T) {
	var s Slots[string]
	for i, v := range []string{"a", "b", "c"} {
		require.Equal(t, i, s.Put(v))
	}
	s.Take(0)
	s.Take(2)
	assert.Equal(t, 2, s.Put("d"))
	assert.Equal(t, 0, s.Put("e"))
	assert.Equal(t, 3, s.Put("f"))
	assert.Equal(t, "b", *s.At(1))
}
