package accel

import (
	"fmt"
	"math"
	"strings"

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
	// SequenceOverhead is the host's work per sequence of an iteration
	// (preparing its inputs, reading its token back).
	SequenceOverhead sim.Time
	// Overlap is how far the host's launches hide behind the GPU's work
	// (the exponent of their norm: 1 adds them, large takes the larger).
	Overlap float64
}

// around is an iteration of seqs sequences: the GPU's work and the host's
// launches, overlapped (their Overlap-norm: the larger of the two when
// Overlap is large, their sum at 1), plus the overheads.
func (e Engine) around(gpu sim.Time, layers, seqs int) sim.Time {
	launch := float64(sim.Time(layers) * e.LayerLaunch)
	both := float64(gpu)
	if launch > 0 {
		k := max(e.Overlap, 1)
		both = math.Pow(math.Pow(float64(gpu), k)+math.Pow(launch, k), 1/k)
	}
	return sim.TimeOf(both) + e.IterationOverhead + sim.Time(seqs)*e.SequenceOverhead
}

// Engines are the serving stacks, by name (fitted: docs/accel.md):
// cuda-graphs (vLLM, SGLang, TensorRT-LLM decode steps; the default),
// eager (Hugging Face transformers), and vllm-v0 (vLLM 0.x without CUDA
// graphs, the engine of Splitwise's measured runs).
var Engines = []Engine{
	{Name: "cuda-graphs", IterationOverhead: 350 * sim.Microsecond},
	{Name: "eager", IterationOverhead: 1 * sim.Millisecond, LayerLaunch: 1150 * sim.Microsecond, Overlap: 8},
	{Name: "vllm-v0", IterationOverhead: 2 * sim.Millisecond, LayerLaunch: 500 * sim.Microsecond, Overlap: 8},
}

// EngineNames lists the engines' names.
func EngineNames() []string {
	out := make([]string, len(Engines))
	for i, e := range Engines {
		out[i] = e.Name
	}
	return out
}

// ParseEngine reads an engine's name.
func ParseEngine(name string) (Engine, error) {
	for _, e := range Engines {
		if e.Name == name {
			return e, nil
		}
	}
	return Engine{}, fmt.Errorf("%q is not allowed (allowed: %s)", name, strings.Join(EngineNames(), ", "))
}
