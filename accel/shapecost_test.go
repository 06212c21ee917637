package accel

import (
	"math/rand/v2"
	"testing"

	"github.com/kvcosim/kvcosim/sim"
	"github.com/stretchr/testify/require"
)

// TestExecutorPricesAsCost holds what an executor remembers of its
// iterations' shapes to the cost model: random iterations, each shape seen
// many times, priced by Run and by Cost alike, with kernels that read no
// context, with a beam search's that does, and with none; and iterations
// past the tokens remembered.
func TestExecutorPricesAsCost(t *testing.T) {
	m, err := ModelPreset("llama-3-70b")
	require.NoError(t, err)
	d, err := DevicePreset("h100-sxm")
	require.NoError(t, err)
	for _, kernels := range []KernelCost{DefaultSampling(), SortSampling{}, NewBeamSearch(m, 4, BF16), nil} {
		n, err := NewNode(m, d, 4, BF16, BF16, 0, kernels)
		require.NoError(t, err)
		for _, budget := range []int64{512, maxShapeTokens + 100} {
			eng := sim.NewEngine(0)
			x, err := NewExecutor(eng, "accel", n, 8, budget)
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(1, 2))
			for range 2000 {
				it := randomIteration(r, budget)
				c := x.Run(it, sim.Event{})
				require.Equal(t, n.Cost(it), c, "%T, budget %d: %+v", kernels, budget, it)
				if kernels != nil && it.Sequences() > 0 {
					want := d.KernelTime(kernels.DecodeStep(it.Sequences(), m.Vocab, meanContext(it)))
					require.Equal(t, want, c.Kernels, "%T: the kernels of %+v", kernels, it)
				}
				eng.RunUntil(eng.Now() + c.Total) // the iteration ends
			}
		}
	}
}

// randomIteration is up to 8 sequences of at most budget tokens: decodes
// of random contexts and prefill chunks, few tokens or close to budget.
func randomIteration(r *rand.Rand, budget int64) Iteration {
	var it Iteration
	left := budget
	for range 1 + r.IntN(8) {
		if r.IntN(2) == 0 && left > 0 {
			it.Decodes = append(it.Decodes, r.Int64N(20_000))
			left--
			continue
		}
		if left > 0 {
			chunk := 1 + r.Int64N(min(left, 3+r.Int64N(budget)))
			it.Prefills = append(it.Prefills, Chunk{New: chunk, Cached: r.Int64N(8000), Last: r.IntN(2) == 0})
			left -= chunk
		}
	}
	if it.Tokens() == 0 {
		it.Decodes = []int64{1}
	}
	return it
}
