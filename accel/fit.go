package accel

import (
	_ "embed"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kvcosim/kvcosim/sim"
)

// target is one measured time a fit matches: an iteration on a node.
type target struct {
	group   string
	node    *Node
	it      Iteration
	seconds float64
}

// splitwiseTargets are a device's Splitwise runs on an engine as targets.
func splitwiseTargets(m Model, d Device, ms []measurement, engine Engine) []target {
	var out []target
	for _, x := range ms {
		prefill, decode := splitwiseIterations(x)
		n := splitwiseNode(m, d, x.tp, engine)
		out = append(out, target{"splitwise prompt", n, prefill, x.promptMs / 1e3}, target{"splitwise token", n, decode, x.tokenMs / 1e3})
	}
	return out
}

// profileTargets are a measured profile's iterations on a device, each
// with the engine it was measured with.
func profileTargets(p *Profile, d Device) []target {
	var out []target
	for _, r := range p.Rows {
		if !slices.Contains(fittedGroups, r.Group) {
			continue
		}
		e, _ := ParseEngine(r.engine)
		out = append(out, target{r.Group, &Node{Model: r.model, Device: d, TP: 1, WeightDType: BF16, KVDType: BF16, Engine: e}, r.iter, r.Measured})
	}
	return out
}

// fitError is the mean |log(model / measured)| over the targets, each
// group weighing the same.
func fitError(ts []target, d Device, engines map[string]Engine) float64 {
	errs := map[string][]float64{}
	for _, t := range ts {
		n := *t.node
		n.Device = d
		if e, ok := engines[n.Engine.Name]; ok {
			n.Engine = e
		}
		errs[t.group] = append(errs[t.group], math.Abs(math.Log(n.Cost(t.it).Total.Seconds()/t.seconds)))
	}
	total := 0.0
	for _, g := range slices.Sorted(maps.Keys(errs)) { // a fixed order: the same sum every run
		es := errs[g]
		sum := 0.0
		for _, e := range es {
			sum += e
		}
		total += sum / float64(len(es))
	}
	return total / float64(len(errs))
}

// coefficient is one fitted number: its name, range, and how to read and
// set it.
type coefficient struct {
	name   string
	lo, hi float64
	get    func(d *Device, e map[string]Engine) float64
	set    func(d *Device, e map[string]Engine, v float64)
}

// engineCoefficients are an engine's fitted overheads (in us: per
// iteration, per sequence and per prompt after the first) and, for an
// engine that launches its layers from the host, its launch times and
// their overlap with the GPU's work.
func engineCoefficients(engine string, launches bool) []coefficient {
	out := []coefficient{
		engineTime(engine, "iteration overhead", 20000, func(e *Engine) *sim.Time { return &e.IterationOverhead }),
		engineTime(engine, "sequence overhead", 2000, func(e *Engine) *sim.Time { return &e.SequenceOverhead }),
		engineTime(engine, "prompt overhead", 100000, func(e *Engine) *sim.Time { return &e.PromptOverhead }),
	}
	if !launches {
		return out
	}
	return append(out, coefficient{engine + " overlap", 1, 20,
		func(_ *Device, e map[string]Engine) float64 { return e[engine].Overlap },
		func(_ *Device, e map[string]Engine, v float64) {
			x := e[engine]
			x.Overlap = v
			e[engine] = x
		}},
		engineTime(engine, "layer launch", 3000, func(e *Engine) *sim.Time { return &e.LayerLaunch }),
		engineTime(engine, "prefill layer launch", 3000, func(e *Engine) *sim.Time { return &e.PrefillLayerLaunch }))
}

// engineTime is one of an engine's times as a coefficient in us, from 0
// to hiUs.
func engineTime(engine, name string, hiUs float64, field func(*Engine) *sim.Time) coefficient {
	return coefficient{engine + " " + name + " (us)", 0, hiUs,
		func(_ *Device, e map[string]Engine) float64 {
			x := e[engine]
			return float64(*field(&x)) / 1e6
		},
		func(_ *Device, e map[string]Engine, v float64) {
			x := e[engine]
			*field(&x) = sim.TimeOf(v * 1e6)
			e[engine] = x
		}}
}

// deviceCoefficients are a device's fitted coefficients.
var deviceCoefficients = []coefficient{
	{"linear efficiency", 0.1, 1, func(d *Device, _ map[string]Engine) float64 { return d.LinearEfficiency },
		func(d *Device, _ map[string]Engine, v float64) { d.LinearEfficiency = v }},
	{"linear half tokens", 0, 2000, func(d *Device, _ map[string]Engine) float64 { return d.LinearHalfTokens },
		func(d *Device, _ map[string]Engine, v float64) { d.LinearHalfTokens = v }},
	{"attention efficiency", 0.05, flashAttentionMax, func(d *Device, _ map[string]Engine) float64 { return d.AttentionEfficiency },
		func(d *Device, _ map[string]Engine, v float64) { d.AttentionEfficiency = v }},
	{"cached attention efficiency", 0.02, 1, func(d *Device, _ map[string]Engine) float64 { return d.CachedAttentionEfficiency },
		func(d *Device, _ map[string]Engine, v float64) { d.CachedAttentionEfficiency = v }},
	{"memory efficiency", 0.2, 1, func(d *Device, _ map[string]Engine) float64 { return d.MemoryEfficiency },
		func(d *Device, _ map[string]Engine, v float64) { d.MemoryEfficiency = v }},
	{"all-reduce efficiency", 0.01, 1, func(d *Device, _ map[string]Engine) float64 { return d.AllReduceEfficiency },
		func(d *Device, _ map[string]Engine, v float64) { d.AllReduceEfficiency = v }},
	{"all-reduce large bytes (MB)", 4, 160, func(d *Device, _ map[string]Engine) float64 { return d.AllReduceLargeBytes / 1e6 },
		func(d *Device, _ map[string]Engine, v float64) { d.AllReduceLargeBytes = v * 1e6 }},
	{"all-reduce large efficiency", 0.01, 1, func(d *Device, _ map[string]Engine) float64 { return d.AllReduceLargeEfficiency },
		func(d *Device, _ map[string]Engine, v float64) { d.AllReduceLargeEfficiency = v }},
	{"nvlink hop latency (us)", 0, 20, func(d *Device, _ map[string]Engine) float64 { return float64(d.NVLinkHopLatency) / 1e6 },
		func(d *Device, _ map[string]Engine, v float64) { d.NVLinkHopLatency = sim.TimeOf(v * 1e6) }},
}

// flashAttentionMax bounds the attention's efficiency: FlashAttention-2
// reaches 50-73 % of the A100's peak in its forward pass (Dao, 2023).
const flashAttentionMax = 0.75

// descend fits coefficients by coordinate descent on fitError from their
// current values.
func descend(ts []target, d Device, engines map[string]Engine, cs []coefficient) (Device, map[string]Engine) {
	best := fitError(ts, d, engines)
	for range descentSweeps {
		for _, c := range cs {
			try := func(v float64) {
				td, te := d, maps.Clone(engines)
				c.set(&td, te, v)
				if e := fitError(ts, td, te); e < best {
					d, engines, best = td, te, e
				}
			}
			// a coarse grid over the whole range, then a finer one around
			// the best value, twice: valleys narrower than the grid's step
			// are found on a later sweep.
			lo, hi := c.lo, c.hi
			for range 3 {
				step := (hi - lo) / descentGrid
				for k := range descentGrid + 1 {
					try(lo + float64(k)*step)
				}
				v := c.get(&d, engines)
				lo, hi = max(c.lo, v-step), min(c.hi, v+step)
			}
		}
	}
	return d, engines
}

// descentSweeps and descentGrid set the fit's search: sweeps over every
// coefficient, each a grid of this many steps refined twice.
const descentSweeps, descentGrid = 6, 16

// FitResult is one device class's fitted coefficients and their error on
// the Splitwise runs held out of the fit.
type FitResult struct {
	Device                  Device
	PromptMedian, PromptP90 float64
	TokenMedian, TokenP90   float64
	FitRuns, HeldRuns       int
}

// Fit is what FitPresets finds: each device class's coefficients and the
// engines'.
type Fit struct {
	Classes map[string]FitResult // by Splitwise hardware: h100-80gb, a100-80gb
	Engines []Engine
}

// measuredProfileH100 is the H100 profile measured for this project
// (with accel/calibdata/measure.py).
//
//go:embed calibdata/h100-llama-3-8b-2026-11-23.json
var measuredProfileH100 []byte

// h100Profile reads the embedded H100 profile.
func h100Profile() (*Profile, error) {
	return parseProfile("accel/calibdata/h100-llama-3-8b-2026-11-23.json", measuredProfileH100)
}

// fitStart is where the fit starts, whatever the presets say, so that a
// refit reproduces them: round figures of the right size.
var fitStart = fit{Linear: 0.6, LinearHalfTokens: 200, Attention: 0.5, CachedAttention: 0.3, Memory: 0.8,
	AllReduce: 0.3, AllReduceLargeBytes: 50e6, AllReduceLarge: 0.2, HopLatency: 6 * sim.Microsecond}

// engineStart are the engines the fit starts from, and whether each
// launches its layers from the host (its launch terms are fitted).
var engineStart = []struct {
	engine   Engine
	launches bool
}{
	{Engine{Name: "cuda-graphs", IterationOverhead: 300 * sim.Microsecond}, false},
	{Engine{Name: "eager", IterationOverhead: 1 * sim.Millisecond, LayerLaunch: 1 * sim.Millisecond, Overlap: 8}, true},
	{Engine{Name: "vllm-v0", IterationOverhead: 1 * sim.Millisecond, LayerLaunch: 500 * sim.Microsecond, Overlap: 8}, true},
}

// FitPresets fits the H100 class on the H100 profile and on half of
// Splitwise's H100 configurations together (the device's coefficients and
// the engines'), then the A100 class, from the H100's values, on half of
// Splitwise's A100 configurations with those engines held and the engine
// of its runs (vllm-v0-a100, from vllm-v0's values) fitted beside it;
// each is measured on the other half. TestFittedCoefficients writes the
// presets from it.
func FitPresets() (Fit, error) {
	ms, err := loadMeasurements()
	if err != nil {
		return Fit{}, err
	}
	profile, err := h100Profile()
	if err != nil {
		return Fit{}, err
	}
	out := Fit{Classes: map[string]FitResult{}}
	h100, engines := fitH100(ms, profile)
	out.Classes["h100-80gb"] = h100
	for _, s := range engineStart {
		out.Engines = append(out.Engines, engines[s.engine.Name])
	}
	a100, a100Engine := fitA100(ms, h100.Device, engines)
	out.Classes["a100-80gb"] = a100
	out.Engines = append(out.Engines, a100Engine)
	return out, nil
}

// fitH100 fits the H100 class and the engines of engineStart, from
// fitStart, on the profile and Splitwise's H100 fitting half.
func fitH100(ms []measurement, profile *Profile) (FitResult, map[string]Engine) {
	engines := map[string]Engine{}
	cs := slices.Clone(deviceCoefficients)
	for _, s := range engineStart {
		engines[s.engine.Name] = s.engine
		cs = append(cs, engineCoefficients(s.engine.Name, s.launches)...)
	}
	h100 := devicePresets["h100-sxm"].with(fitStart)
	return fitClass(ms, "h100-80gb", h100, profileTargets(profile, h100), engines, cs)
}

// fitA100 fits the A100 class from the H100's values, and the engine of
// its runs from vllm-v0's, with the other engines held.
func fitA100(ms []measurement, h100 Device, engines map[string]Engine) (FitResult, Engine) {
	e := engines["vllm-v0"]
	e.Name = splitwiseEngine("a100-80gb")
	engines = maps.Clone(engines)
	engines[e.Name] = e
	a100 := devicePresets["a100-80gb"].with(h100.fitted())
	cs := append(coefficientsBut("cached attention efficiency"), engineCoefficients(e.Name, true)...) // no A100 run has a cached context
	r, engines := fitClass(ms, "a100-80gb", a100, nil, engines, cs)
	return r, engines[e.Name]
}

// fitClass fits one Splitwise hardware's coefficients cs from d on half
// of its Llama2-70B configurations and the extra targets, and measures
// the fit on the other half.
func fitClass(ms []measurement, hardware string, d Device, extra []target, engines map[string]Engine,
	cs []coefficient) (FitResult, map[string]Engine) {
	fitRuns, _ := splitwiseHalves(ms, "llama2-70b", hardware, d)
	engine := splitwiseEngine(hardware)
	d, engines = descend(append(splitwiseTargets(splitwisePreset("llama2-70b"), d, fitRuns, engines[engine]), extra...), d, maps.Clone(engines), cs)
	return heldOut(ms, "llama2-70b", hardware, d, engines[engine]), engines
}

// GoSource is the fit as the Go source of accel/fitted.go: the device
// classes' coefficients (to four significant digits, times to the
// nanosecond) and the engines.
func (f Fit) GoSource() string {
	var b strings.Builder
	b.WriteString("// Code generated by `go test ./accel -run TestFittedCoefficients -update` from FitPresets; DO NOT EDIT.\n\n")
	b.WriteString("package accel\n\nimport \"github.com/kvcosim/kvcosim/sim\"\n\n")
	b.WriteString("// The device classes' coefficients FitPresets finds (docs/accel.md gives each one's provenance).\nvar (\n")
	for _, c := range []struct{ name, class string }{{"a100Fit", "a100-80gb"}, {"h100Fit", "h100-80gb"}} {
		x := f.Classes[c.class].Device.fitted()
		fmt.Fprintf(&b, "\t%s = fit{Linear: %s, LinearHalfTokens: %s, Attention: %s, CachedAttention: %s, Memory: %s,\n", c.name,
			g4(x.Linear), g4(x.LinearHalfTokens), g4(x.Attention), g4(x.CachedAttention), g4(x.Memory))
		fmt.Fprintf(&b, "\t\tAllReduce: %s, AllReduceLargeBytes: %s, AllReduceLarge: %s, HopLatency: %s}\n",
			g4(x.AllReduce), g4(x.AllReduceLargeBytes), g4(x.AllReduceLarge), ns(x.HopLatency))
	}
	b.WriteString(")\n\n// Engines are the serving stacks, by name, fitted with the H100 class: cuda-graphs (vLLM, SGLang and\n")
	b.WriteString("// TensorRT-LLM, whose decode steps are captured graphs; the default), eager (Hugging Face transformers)\n")
	b.WriteString("// and vllm-v0 (vLLM 0.x, the engine of Splitwise's H100 runs); and vllm-v0-a100, fitted with the A100\n")
	b.WriteString("// class (vLLM 0.x as Splitwise's A100 runs show it, paying for each extra prompt of a batch).\nvar Engines = []Engine{\n")
	for _, e := range f.Engines {
		fmt.Fprintf(&b, "\t{Name: %q, IterationOverhead: %s, LayerLaunch: %s, PrefillLayerLaunch: %s,\n\t\tSequenceOverhead: %s, PromptOverhead: %s, Overlap: %s},\n",
			e.Name, ns(e.IterationOverhead), ns(e.LayerLaunch), ns(e.PrefillLayerLaunch), ns(e.SequenceOverhead), ns(e.PromptOverhead), g4(e.Overlap))
	}
	b.WriteString("}\n")
	return b.String()
}

// g4 writes v to four significant digits as a Go literal.
func g4(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// ns writes t rounded to the nanosecond as a Go expression.
func ns(t sim.Time) string {
	return fmt.Sprintf("%d * sim.Nanosecond", (t+sim.Nanosecond/2)/sim.Nanosecond)
}

// coefficientsBut are the device's coefficients without the named ones.
func coefficientsBut(names ...string) []coefficient {
	return slices.DeleteFunc(slices.Clone(deviceCoefficients), func(c coefficient) bool { return slices.Contains(names, c.name) })
}

// FitProfile fits a device's single-GPU coefficients (the linear layers',
// the attention's and the memory's efficiencies) to a measured profile's
// iterations, from d's values, with the engines held: the device that
// `simrun calibrate --measured FILE --fit` writes. The all-reduce's
// coefficients stay d's: a profile measures one GPU.
func FitProfile(p *Profile, d Device) (Device, error) {
	ts := profileTargets(p, d)
	if len(ts) == 0 {
		return Device{}, fmt.Errorf("%s: no prefill, chunk or decode rows to fit", p.Path)
	}
	engines := map[string]Engine{}
	for _, e := range Engines {
		engines[e.Name] = e
	}
	d, _ = descend(ts, d, engines, coefficientsBut("all-reduce efficiency", "all-reduce large bytes (MB)",
		"all-reduce large efficiency", "nvlink hop latency (us)"))
	return d, nil
}
