package accel

import (
	"math"

	"github.com/kvcosim/kvcosim/internal/names"
	"github.com/kvcosim/kvcosim/sim"
)

// Engine is the serving software around the GPU's work: with CUDA graphs
// an iteration is one launch and a fixed overhead; an eager engine
// launches each layer's kernels from the host, and the GPU cannot finish
// an iteration sooner than the host has launched it.
type Engine struct {
	Name string
	// IterationOverhead is added to every iteration (scheduling, graph
	// launch, host work of the step).
	IterationOverhead sim.Time
	// LayerLaunch is the host's time to launch one layer's kernels (0: a
	// captured graph).
	LayerLaunch sim.Time
	// PrefillLayerLaunch replaces LayerLaunch in iterations with prompt
	// tokens (their eager path launches more kernels; 0: LayerLaunch).
	PrefillLayerLaunch sim.Time
	// SequenceOverhead is the host's work per sequence of an iteration
	// (preparing its inputs, reading its token back).
	SequenceOverhead sim.Time
	// PromptOverhead is the time each prompt of an iteration after its
	// first adds: Splitwise's A100 runs take 6-56 ms longer per extra
	// prompt than one prompt of the same tokens (their H100 runs do not).
	PromptOverhead sim.Time
	// Overlap is how far the host's launches hide behind the GPU's work
	// (the exponent of their norm: 1 adds them, large takes the larger).
	Overlap float64
}

// around is an iteration of seqs sequences, of which prompts are prompts:
// the GPU's work and the host's launches, overlapped (their Overlap-norm:
// the larger of the two when Overlap is large, their sum at 1), plus the
// overheads.
func (e Engine) around(gpu sim.Time, layers, seqs, prompts int) sim.Time {
	perLayer := e.LayerLaunch
	if prompts > 0 && e.PrefillLayerLaunch > 0 {
		perLayer = e.PrefillLayerLaunch
	}
	launch := float64(sim.Time(layers) * perLayer)
	both := gpu     // without launches, the GPU's time as it is (as a float64 it was exact below 2^53 ps)
	if launch > 0 { // the norm as larger x (1 + (smaller / larger)^k)^(1/k): no overflow
		k := max(e.Overlap, 1)
		hi, lo := max(float64(gpu), launch), min(float64(gpu), launch)
		both = sim.TimeOf(hi * math.Pow(1+math.Pow(lo/hi, k), 1/k))
	} else if gpu >= 1<<53 {
		both = sim.TimeOf(float64(gpu))
	}
	return sim.SumTime(both, e.IterationOverhead, sim.Time(seqs)*e.SequenceOverhead,
		sim.Time(max(prompts-1, 0))*e.PromptOverhead)
}

// EngineNames lists the engines' names.
func EngineNames() []string { return names.Of(Engines, engineName) }

// ParseEngine reads an engine's name.
func ParseEngine(name string) (Engine, error) { return names.Find("engine", Engines, engineName, name) }

func engineName(e Engine) string { return e.Name }
