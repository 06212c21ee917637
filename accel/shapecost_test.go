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

// TestDecodeRunIsItsSteps holds a decode run to the steps run one by one:
// the same ends, busy time and counts, and after a Cut at any moment the
// steps up to the first to end from then on, its done raised there once.
func TestDecodeRunIsItsSteps(t *testing.T) {
	m, err := ModelPreset("llama-3-8b")
	require.NoError(t, err)
	d, err := DevicePreset("h100-sxm")
	require.NoError(t, err)
	for _, kernels := range []KernelCost{DefaultSampling(), NewBeamSearch(m, 4, BF16)} {
		n, err := NewNode(m, d, 1, BF16, BF16, 0, kernels)
		require.NoError(t, err)
		const steps = 40
		it := Iteration{Decodes: []int64{7, 300, 4096}}
		stepped, ends := stepByStep(t, n, it, steps)
		for _, cutAt := range []int{-1, 0, 1, 17, steps - 2, steps - 1} {
			eng := sim.NewEngine(0)
			x, err := NewExecutor(eng, "accel", n, 8, 512)
			require.NoError(t, err)
			d := &doneAt{eng: eng}
			require.Equal(t, ends[steps-1], x.RunDecodes(it, steps, sim.Event{Handler: d}))
			want, wantEnd := stepped[steps-1], ends[steps-1]
			if cutAt >= 0 {
				at := ends[cutAt] - 1 // just before step cutAt ends: it is the last
				eng.RunUntil(at)
				back, end := x.Cut(at)
				require.Equal(t, steps-1-cutAt, back)
				want, wantEnd = stepped[cutAt], ends[cutAt]
				require.Equal(t, wantEnd, end)
			}
			eng.Run()
			require.Equal(t, []sim.Time{wantEnd}, d.at, "%T cut at %d: done once, at the last step's end", kernels, cutAt)
			require.Equal(t, want, x.Stats(), "%T cut at %d", kernels, cutAt)
		}
	}
}

// stepByStep runs steps decode iterations of it one at a time, each
// context a token longer, and returns the stats and end after each.
func stepByStep(t *testing.T, n *Node, it Iteration, steps int) ([]ExecutorStats, []sim.Time) {
	eng := sim.NewEngine(0)
	x, err := NewExecutor(eng, "accel", n, 8, 512)
	require.NoError(t, err)
	var stats []ExecutorStats
	var ends []sim.Time
	step := Iteration{Decodes: append([]int64(nil), it.Decodes...)}
	for range steps {
		c := x.Run(step, sim.Event{})
		eng.RunUntil(eng.Now() + c.Total)
		stats, ends = append(stats, x.Stats()), append(ends, eng.Now())
		for i := range step.Decodes {
			step.Decodes[i]++
		}
	}
	return stats, ends
}

// TestDecodeStepsPriceAsCost holds the decode run's pricing to the cost
// model: random decode-only iterations of every engine, on models and
// devices of different shapes and tensor parallelism, with kernels that
// read no context, a beam search's that does, and none.
func TestDecodeStepsPriceAsCost(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, engine := range Engines {
		for _, preset := range []struct {
			model, device string
			tp            int
		}{{"llama-3-8b", "h100-sxm", 1}, {"llama-3-70b", "a100-80gb", 4}, {"llama-2-13b", "a100-80gb", 2}} {
			m, err := ModelPreset(preset.model)
			require.NoError(t, err)
			d, err := DevicePreset(preset.device)
			require.NoError(t, err)
			slow := d // a device so slow that the steps are bound by compute, not memory
			slow.PeakFLOPS /= 1000
			for _, dev := range []Device{d, slow} {
				for _, kernels := range []KernelCost{DefaultSampling(), NewBeamSearch(m, 4, BF16), nil} {
					n, err := NewNode(m, dev, preset.tp, BF16, BF16, 0, kernels)
					require.NoError(t, err)
					n.Engine = engine
					memo := newShapeCosts(8, 512)
					for range 200 {
						contexts := make([]int64, 1+r.IntN(8))
						for i := range contexts {
							contexts[i] = r.Int64N(30_000)
						}
						price := newDecodeSteps(n, memo, len(contexts))
						it := Iteration{Decodes: contexts}
						require.Equal(t, n.Cost(it).Total, price.total(contexts), "%s %s %T: %v", engine.Name, preset.model, kernels, contexts)
					}
				}
			}
		}
	}
}
