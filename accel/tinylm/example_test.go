package tinylm_test

import (
	"fmt"
	"slices"

	"github.com/kvcosim/kvcosim/accel/tinylm"
)

// A prefill on a cache that already holds the first tokens gives exactly
// the logits of a prefill of all of them: what makes an imported KV cache
// as good as a recomputation.
func Example() {
	m, _ := tinylm.New(tinylm.DefaultConfig())
	history, turn := []uint32{17, 4, 99, 250}, []uint32{3, 77}

	cache := m.NewCache()
	m.Prefill(cache, history) // computed in an earlier turn, then stored
	resumed, _ := m.Prefill(cache, turn)

	recomputed, _ := m.Prefill(m.NewCache(), append(slices.Clone(history), turn...))
	fmt.Println("cached tokens:", cache.Len, "K per layer:", len(cache.K[0]))
	fmt.Println("bit-identical:", slices.Equal(resumed, recomputed))
	// Output:
	// cached tokens: 6 K per layer: 192
	// bit-identical: true
}
