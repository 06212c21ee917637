package accel

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/kvcosim/kvcosim/accel/kernels"
	"github.com/kvcosim/kvcosim/sim"
)

// perfModelCSV is Splitwise's measured runs (Mutinifni/splitwise-sim,
// data/perf_model.csv, MIT; see calibdata/LICENSE).
//
//go:embed calibdata/perf_model.csv
var perfModelCSV []byte

// measurement is one measured run.
type measurement struct {
	model, hardware        string
	tp, prompt, batch, gen int
	promptMs, tokenMs      float64
}

// config identifies a distinct configuration; repeated runs share one.
func (m measurement) config() [4]int { return [4]int{m.tp, m.prompt, m.batch, m.gen} }

func loadMeasurements() ([]measurement, error) {
	rows, err := csv.NewReader(bytes.NewReader(perfModelCSV)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("perf_model.csv: %w", err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	var out []measurement
	for line, r := range rows[1:] {
		num := func(name string) float64 {
			v, perr := strconv.ParseFloat(r[col[name]], 64)
			if perr != nil && err == nil {
				err = fmt.Errorf("perf_model.csv line %d, %s: %v", line+2, name, perr)
			}
			return v
		}
		out = append(out, measurement{model: r[col["model"]], hardware: r[col["hardware"]], tp: int(num("tensor_parallel")),
			prompt: int(num("prompt_size")), batch: int(num("batch_size")), gen: int(num("token_size")),
			promptMs: num("prompt_time"), tokenMs: num("token_time")})
	}
	return out, err
}

// splitByConfig puts every other distinct configuration (in sorted order)
// in the fitting half, and the rest, with all their repeats, in the
// held-out half.
func splitByConfig(ms []measurement) (fit, held []measurement) {
	var configs [][4]int
	seen := map[[4]int]bool{}
	for _, m := range ms {
		if !seen[m.config()] {
			seen[m.config()] = true
			configs = append(configs, m.config())
		}
	}
	sort.Slice(configs, func(i, j int) bool {
		a, b := configs[i], configs[j]
		for k := range a {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return false
	})
	inFit := map[[4]int]bool{}
	for i, c := range configs {
		inFit[c] = i%2 == 0
	}
	for _, m := range ms {
		if inFit[m.config()] {
			fit = append(fit, m)
		} else {
			held = append(held, m)
		}
	}
	return fit, held
}

// predict returns the model's prompt time (a prefill of batch prompts) and
// per-token time (a decode step of batch sequences at the mean context of
// the generation) for a Splitwise run, in ms: vLLM 0.x without CUDA graphs
// and its PyTorch sort-based sampler.
func predict(m Model, d Device, ms measurement, engine Engine) (promptMs, tokenMs float64) {
	prefill, decode := splitwiseIterations(ms)
	n := splitwiseNode(m, d, ms.tp)
	n.Engine = engine
	return float64(n.Cost(prefill).Total) / 1e9, float64(n.Cost(decode).Total) / 1e9
}

func splitwiseNode(m Model, d Device, tp int) *Node {
	e, _ := ParseEngine("vllm-v0")
	return &Node{Model: m, Device: d, TP: tp, WeightDType: BF16, KVDType: BF16, Kernels: SortSampling{}, Engine: e}
}

func splitwiseIterations(ms measurement) (prefill, decode Iteration) {
	for range ms.batch {
		prefill.Prefills = append(prefill.Prefills, Chunk{New: int64(ms.prompt), Last: true})
		decode.Decodes = append(decode.Decodes, int64(ms.prompt+ms.gen/2))
	}
	return prefill, decode
}

// target is one measured time a fit matches: an iteration on a node.
type target struct {
	group   string
	node    *Node
	it      Iteration
	seconds float64
}

// splitwiseTargets are a device's Splitwise runs as targets.
func splitwiseTargets(m Model, d Device, ms []measurement) []target {
	var out []target
	for _, x := range ms {
		prefill, decode := splitwiseIterations(x)
		n := splitwiseNode(m, d, x.tp)
		out = append(out, target{"splitwise prompt", n, prefill, x.promptMs / 1e3}, target{"splitwise token", n, decode, x.tokenMs / 1e3})
	}
	return out
}

// profileTargets are a measured profile's iterations on a device, each
// with the engine it was measured with.
func profileTargets(p *Profile, d Device) []target {
	var out []target
	for _, r := range p.Rows {
		if r.engine == "" {
			continue
		}
		m, _ := ModelPreset(r.model)
		e, _ := ParseEngine(r.engine)
		out = append(out, target{r.Group, &Node{Model: m, Device: d, TP: 1, WeightDType: BF16, KVDType: BF16, Engine: e}, r.iter, r.Measured})
	}
	return out
}

// fitError is the mean |log(model / measured)| over the targets, each
// group weighing the same.
func fitError(ts []target, d Device, engines map[string]Engine) float64 {
	sums, counts := map[string]float64{}, map[string]int{}
	for _, t := range ts {
		n := *t.node
		n.Device = d
		if e, ok := engines[n.Engine.Name]; ok {
			n.Engine = e
		}
		sums[t.group] += math.Abs(math.Log(n.Cost(t.it).Total.Seconds() / t.seconds))
		counts[t.group]++
	}
	total := 0.0
	for g, s := range sums {
		total += s / float64(counts[g])
	}
	return total / float64(len(sums))
}

// coefficient is one fitted number: its name, range, and how to read and
// set it.
type coefficient struct {
	name   string
	lo, hi float64
	get    func(d *Device, e map[string]Engine) float64
	set    func(d *Device, e map[string]Engine, v float64)
}

// engineCoefficients are an engine's overhead per iteration and launch
// time per layer (in us), fitted.
func engineCoefficients(engine string, launches bool) []coefficient {
	out := []coefficient{{engine + " iteration overhead (us)", 0, 20000,
		func(_ *Device, e map[string]Engine) float64 { return float64(e[engine].IterationOverhead) / 1e6 },
		func(_ *Device, e map[string]Engine, v float64) {
			x := e[engine]
			x.IterationOverhead = sim.TimeOf(v * 1e6)
			e[engine] = x
		}}}
	out = append(out, coefficient{engine + " sequence overhead (us)", 0, 2000,
		func(_ *Device, e map[string]Engine) float64 { return float64(e[engine].SequenceOverhead) / 1e6 },
		func(_ *Device, e map[string]Engine, v float64) {
			x := e[engine]
			x.SequenceOverhead = sim.TimeOf(v * 1e6)
			e[engine] = x
		}})
	if launches {
		out = append(out, coefficient{engine + " overlap", 1, 20,
			func(_ *Device, e map[string]Engine) float64 { return e[engine].Overlap },
			func(_ *Device, e map[string]Engine, v float64) {
				x := e[engine]
				x.Overlap = v
				e[engine] = x
			}})
		out = append(out, coefficient{engine + " layer launch (us)", 0, 3000,
			func(_ *Device, e map[string]Engine) float64 { return float64(e[engine].LayerLaunch) / 1e6 },
			func(_ *Device, e map[string]Engine, v float64) {
				x := e[engine]
				x.LayerLaunch = sim.TimeOf(v * 1e6)
				e[engine] = x
			}})
	}
	return out
}

// deviceCoefficients are a device's fitted coefficients.
var deviceCoefficients = []coefficient{
	{"linear efficiency", 0.1, 1, func(d *Device, _ map[string]Engine) float64 { return d.LinearEfficiency },
		func(d *Device, _ map[string]Engine, v float64) { d.LinearEfficiency = v }},
	{"linear half tokens", 0, 2000, func(d *Device, _ map[string]Engine) float64 { return d.LinearHalfTokens },
		func(d *Device, _ map[string]Engine, v float64) { d.LinearHalfTokens = v }},
	{"linear sustain tokens", 2000, 1000000, func(d *Device, _ map[string]Engine) float64 { return d.LinearSustainTokens },
		func(d *Device, _ map[string]Engine, v float64) { d.LinearSustainTokens = v }},
	{"attention efficiency", 0.05, 1, func(d *Device, _ map[string]Engine) float64 { return d.AttentionEfficiency },
		func(d *Device, _ map[string]Engine, v float64) { d.AttentionEfficiency = v }},
	{"cached attention efficiency", 0.02, 1, func(d *Device, _ map[string]Engine) float64 { return d.CachedAttentionEfficiency },
		func(d *Device, _ map[string]Engine, v float64) { d.CachedAttentionEfficiency = v }},
	{"memory efficiency", 0.2, 1, func(d *Device, _ map[string]Engine) float64 { return d.MemoryEfficiency },
		func(d *Device, _ map[string]Engine, v float64) { d.MemoryEfficiency = v }},
	{"all-reduce efficiency", 0.01, 1, func(d *Device, _ map[string]Engine) float64 { return d.AllReduceEfficiency },
		func(d *Device, _ map[string]Engine, v float64) { d.AllReduceEfficiency = v }},
	{"nvlink hop latency (us)", 0, 20, func(d *Device, _ map[string]Engine) float64 { return float64(d.NVLinkHopLatency) / 1e6 },
		func(d *Device, _ map[string]Engine, v float64) { d.NVLinkHopLatency = sim.TimeOf(v * 1e6) }},
}

// descend fits coefficients by coordinate descent on fitError from their
// current values.
func descend(ts []target, d Device, engines map[string]Engine, cs []coefficient) (Device, map[string]Engine) {
	step := make([]float64, len(cs))
	best := fitError(ts, d, engines)
	for round := range 240 {
		if round%80 == 0 { // restart the steps: out of a valley the first pass settled in
			for i, c := range cs {
				step[i] = (c.hi - c.lo) / 4
			}
		}
		for i, c := range cs {
			for _, s := range []float64{step[i], -step[i]} {
				td, te := d, maps.Clone(engines)
				c.set(&td, te, min(max(c.get(&d, engines)+s, c.lo), c.hi))
				if e := fitError(ts, td, te); e < best {
					d, engines, best = td, te, e
				}
			}
			step[i] *= 0.75
		}
	}
	return d, engines
}

// heldOutErrors returns the absolute relative errors of prompt and token
// times over runs, on Splitwise's engine.
func heldOutErrors(m Model, d Device, ms []measurement, engine Engine) (prompt, token []float64) {
	for _, x := range ms {
		p, t := predict(m, d, x, engine)
		prompt = append(prompt, math.Abs(p/x.promptMs-1))
		token = append(token, math.Abs(t/x.tokenMs-1))
	}
	return prompt, token
}

// quantile is the nearest-rank quantile of values.
func quantile(values []float64, q float64) float64 {
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	return s[max(0, int(math.Ceil(q*float64(len(s))))-1)]
}

// FitResult is one device's fit and its held-out errors.
type FitResult struct {
	Device                  Device
	PromptMedian, PromptP90 float64
	TokenMedian, TokenP90   float64
	FitRuns, HeldRuns       int
}

// measuredProfileH100 is the H100 profile measured for this project
// (../shared/data/calibration/gpu-measured, copied into calibdata).
//
//go:embed calibdata/h100-llama-3-8b-2026-11-23.json
var measuredProfileH100 []byte

// FitPresets fits the H100 class on the H100 profile and on half of
// Splitwise's H100 configurations together (the device's coefficients and
// the three engines'), then the A100 class on half of Splitwise's A100
// configurations with the engines held; each is measured on the other
// half. The presets' coefficients are what it returns.
func FitPresets() (map[string]FitResult, map[string]Engine, error) {
	ms, err := loadMeasurements()
	if err != nil {
		return nil, nil, err
	}
	profile, err := parseProfile("calibdata/h100-llama-3-8b-2026-11-23.json", measuredProfileH100)
	if err != nil {
		return nil, nil, err
	}
	model := modelPresets["llama-2-70b"]
	engines := map[string]Engine{}
	for _, e := range Engines {
		engines[e.Name] = e
	}
	out := map[string]FitResult{}
	for _, hw := range []struct {
		name, preset string
		withProfile  bool
	}{{"h100-80gb", "h100-sxm", true}, {"a100-80gb", "a100-80gb", false}} {
		var runs []measurement
		for _, m := range ms {
			if m.model == "llama2-70b" && m.hardware == hw.name {
				runs = append(runs, m)
			}
		}
		fitRuns, held := splitByConfig(runs)
		d := devicePresets[hw.preset]
		ts := splitwiseTargets(model, d, fitRuns)
		cs := deviceCoefficients
		if hw.withProfile {
			ts = append(ts, profileTargets(profile, d)...)
			cs = append(append(append(slices.Clone(cs), engineCoefficients("cuda-graphs", false)...),
				engineCoefficients("eager", true)...), engineCoefficients("vllm-v0", true)...)
		}
		d, engines = descend(ts, d, engines, cs)
		p, t := heldOutErrors(model, d, held, engines["vllm-v0"])
		out[hw.name] = FitResult{Device: d, PromptMedian: quantile(p, 0.5), PromptP90: quantile(p, 0.9),
			TokenMedian: quantile(t, 0.5), TokenP90: quantile(t, 0.9), FitRuns: len(fitRuns), HeldRuns: len(held)}
	}
	return out, engines, nil
}

// BreakEvenBandwidth is the storage bandwidth above which loading a
// prefix's KV cache beats recomputing it, with the recomputation at the tp
// devices' peak (the Mooncake paper's assumption): KV bytes / (prefill
// FLOPs / (tp x peak)).
func BreakEvenBandwidth(m Model, d Device, tp int, prefix int64) float64 {
	n := &Node{Model: m, Device: d, TP: tp, WeightDType: BF16, KVDType: BF16}
	flops, _ := n.Work(Iteration{Prefills: []Chunk{{New: prefix, Last: true}}})
	seconds := flops / (float64(tp) * d.PeakFLOPS)
	return float64(prefix*m.KVBytesPerToken(BF16)) / seconds
}

// Calibrations are the accelerator's checks for `simrun calibrate`: KV
// bytes per token of every preset, the held-out errors of the fit, and the
// Mooncake break-even bandwidths, and the sampling kernels' costs.
func Calibrations() ([]sim.Calibration, error) {
	var out []sim.Calibration
	kv := map[string]float64{"llama-2-7b": 524288, "llama-2-70b": 327680, "llama-3-8b": 131072, "llama-3-70b": 327680,
		"qwen2.5-7b": 57344, "qwen2.5-72b": 327680, "deepseek-v3": 70272}
	for _, name := range ModelNames() {
		out = append(out, sim.NewCalibration(name+" KV bytes per token (bf16)", kv[name],
			float64(modelPresets[name].KVBytesPerToken(BF16)), "B", 0, "config.json: layers x 2 x kv_heads x head_dim x 2 B (MLA: layers x (512 + 64) x 2 B)"))
	}
	fits, _, err := FitPresets()
	if err != nil {
		return nil, err
	}
	const src = "Splitwise perf_model.csv (Llama2-70B, TP 2/4/8), fitted on half the configurations"
	for _, hw := range []string{"a100-80gb", "h100-80gb"} {
		f := fits[hw]
		out = append(out,
			sim.NewCalibration(hw+" prompt_time held-out median |error|", 0, f.PromptMedian, "fraction", 0.15, src),
			sim.NewCalibration(hw+" token_time held-out median |error|", 0, f.TokenMedian, "fraction", 0.15, src),
			sim.NewCalibration(hw+" prompt_time held-out p90 |error|", 0, f.PromptP90, "fraction", 0.35, src+"; p90 reported, bounded at 35 %"),
			sim.NewCalibration(hw+" token_time held-out p90 |error|", 0, f.TokenP90, "fraction", 0.35, src+"; p90 reported, bounded at 35 %"))
	}
	llama3, _ := ModelPreset("llama-3-70b")
	const mooncake = "Mooncake (FAST'25): break-even 18.6 GB/s on 8 x H800, 5.9 GB/s on 8 x A800 for an 8,192-token prefix"
	for _, c := range []struct {
		dev    string
		target float64
	}{{"h800", 18.6}, {"a800", 5.9}} {
		out = append(out, sim.NewCalibration("llama-3-70b break-even storage bandwidth, 8 x "+c.dev, c.target,
			BreakEvenBandwidth(llama3, devicePresets[c.dev], 8, 8192)/1e9, "GB/s", 0.15, mooncake))
	}
	return append(out, samplingCalibrations()...), nil
}

// samplingVocab is the 128 K vocabulary of FlashInfer's sampling benchmark
// (Llama 3's 128,256 tokens).
const samplingVocab = 128256

// samplingCalibrations compare the sampling cost models on H100 with
// FlashInfer's published timings: its rejection-sampling kernel at three
// batches, and the PyTorch sort-based path at batch 128 (the fitted point
// of kernels.SortBandwidthFraction, so it checks the fit, not the model).
func samplingCalibrations() []sim.Calibration {
	const src = "FlashInfer blog 'Sorting-Free GPU Kernels for LLM Sampling' (2025-03-10), H100, vocab 128 K, top-k/top-p"
	h100 := devicePresets["h100-sxm"]
	ms := func(w kernels.Work) float64 { return h100.KernelTime(w).Seconds() * 1e3 }
	var out []sim.Calibration
	for _, c := range []struct {
		batch  int
		target float64
	}{{2, 0.56}, {32, 0.84}, {128, 1.27}} {
		out = append(out, sim.NewCalibration(fmt.Sprintf("flashinfer top-k/top-p sampling, h100, batch %d", c.batch), c.target,
			ms(kernels.FlashInferWork(c.batch, samplingVocab)), "ms", 0.15, src))
	}
	return append(out, sim.NewCalibration("pytorch sort-based top-k/top-p sampling, h100, batch 128", 5.4,
		ms(kernels.SortBasedWork(128, samplingVocab)), "ms", 0.15, src+"; bandwidth fraction fitted here"))
}
