package accel

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"math"
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
// the generation) for a measured configuration, in ms.
func predict(m Model, d Device, ms measurement) (promptMs, tokenMs float64) {
	n := &Node{Model: m, Device: d, TP: ms.tp, WeightDType: BF16, KVDType: BF16, Kernels: DefaultSampling()}
	var prefill, decode Iteration
	for range ms.batch {
		prefill.Prefills = append(prefill.Prefills, Chunk{New: int64(ms.prompt), Last: true})
		decode.Decodes = append(decode.Decodes, int64(ms.prompt+ms.gen/2))
	}
	return float64(n.Cost(prefill).Total) / 1e9, float64(n.Cost(decode).Total) / 1e9
}

// logError is the mean |log(model/measured)| over both times of the runs.
func logError(m Model, d Device, ms []measurement) float64 {
	sum := 0.0
	for _, x := range ms {
		p, t := predict(m, d, x)
		sum += math.Abs(math.Log(p/x.promptMs)) + math.Abs(math.Log(t/x.tokenMs))
	}
	return sum / float64(len(ms))
}

// FitDevice fits a device's efficiencies, overheads and all-reduce
// parameters to measured runs by coordinate descent on the mean absolute
// log error, from the device's current values.
func FitDevice(m Model, d Device, ms []measurement) Device {
	// overheads (ms) and the hop latency (us) are fitted as floats
	vals := []float64{d.Prefill.Compute, d.Prefill.Memory, float64(d.Prefill.Overhead) / 1e9,
		d.Decode.Compute, d.Decode.Memory, float64(d.Decode.Overhead) / 1e9, d.AllReduceEfficiency, float64(d.NVLinkHopLatency) / 1e6}
	lo := []float64{0.05, 0.05, 0, 0.02, 0.05, 0, 0.01, 0}
	hi := []float64{1, 1, 200, 1, 1, 100, 1, 20}
	apply := func(v []float64) Device {
		e := d
		e.Prefill = Efficiency{v[0], v[1], sim.TimeOf(v[2] * 1e9)}
		e.Decode = Efficiency{v[3], v[4], sim.TimeOf(v[5] * 1e9)}
		e.AllReduceEfficiency, e.NVLinkHopLatency = v[6], sim.TimeOf(v[7]*1e6)
		return e
	}
	step := make([]float64, len(vals))
	for i := range step {
		step[i] = (hi[i] - lo[i]) / 4
	}
	best := logError(m, apply(vals), ms)
	for range 60 {
		for i := range vals {
			for _, s := range []float64{step[i], -step[i]} {
				try := append([]float64(nil), vals...)
				try[i] = min(max(vals[i]+s, lo[i]), hi[i])
				if e := logError(m, apply(try), ms); e < best {
					vals, best = try, e
				}
			}
			step[i] *= 0.7
		}
	}
	return apply(vals)
}

// heldOutErrors returns the absolute relative errors of prompt and token
// times over runs.
func heldOutErrors(m Model, d Device, ms []measurement) (prompt, token []float64) {
	for _, x := range ms {
		p, t := predict(m, d, x)
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

// FitSplitwise fits each measured device (Llama2-70B, TP 2/4/8) on half of
// the configurations and measures the other half.
func FitSplitwise() (map[string]FitResult, error) {
	ms, err := loadMeasurements()
	if err != nil {
		return nil, err
	}
	model := modelPresets["llama-2-70b"]
	out := map[string]FitResult{}
	for hw, preset := range map[string]string{"a100-80gb": "a100-80gb", "h100-80gb": "h100-sxm"} {
		var runs []measurement
		for _, m := range ms {
			if m.model == "llama2-70b" && m.hardware == hw {
				runs = append(runs, m)
			}
		}
		fitRuns, held := splitByConfig(runs)
		fitted := FitDevice(model, devicePresets[preset], fitRuns)
		p, t := heldOutErrors(model, fitted, held)
		out[hw] = FitResult{Device: fitted, PromptMedian: quantile(p, 0.5), PromptP90: quantile(p, 0.9),
			TokenMedian: quantile(t, 0.5), TokenP90: quantile(t, 0.9), FitRuns: len(fitRuns), HeldRuns: len(held)}
	}
	return out, nil
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
	fits, err := FitSplitwise()
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
