package accel

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
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
	n := splitwiseNode(m, d, ms.tp, engine)
	return float64(n.Cost(prefill).Total) / 1e9, float64(n.Cost(decode).Total) / 1e9
}

func splitwiseNode(m Model, d Device, tp int, engine Engine) *Node {
	return &Node{Model: m, Device: d, TP: tp, WeightDType: BF16, KVDType: BF16, Kernels: SortSampling{}, Engine: engine}
}

func splitwiseIterations(ms measurement) (prefill, decode Iteration) {
	for range ms.batch {
		prefill.Prefills = append(prefill.Prefills, Chunk{New: int64(ms.prompt), Last: true})
		decode.Decodes = append(decode.Decodes, int64(ms.prompt+ms.gen/2))
	}
	return prefill, decode
}

// possible tells whether a run's prompt took at least the time its linear
// layers need at the devices' peak: Splitwise's runs of 64 prompts of 512
// tokens on two GPUs report a tenth of that (the batch cannot have run
// whole), and are left out of the fit and of the held-out errors.
func possible(m Model, d Device, x measurement) bool {
	flops := 2 * m.linearParamsPerToken() * float64(x.prompt*x.batch)
	return x.promptMs/1e3 >= flops/(float64(x.tp)*d.PeakFLOPS)
}

// possibleRuns are the runs that are possible.
func possibleRuns(m Model, d Device, ms []measurement) []measurement {
	return slices.DeleteFunc(slices.Clone(ms), func(x measurement) bool { return !possible(m, d, x) })
}

// splitwiseModels are the presets of the models of Splitwise's runs, by
// Splitwise's names.
var splitwiseModels = map[string]string{"llama2-70b": "llama-2-70b", "bloom-176b": "bloom-176b"}

// splitwisePreset is the preset of a model of Splitwise's runs.
func splitwisePreset(model string) Model { return modelPresets[splitwiseModels[model]] }

// splitwiseClasses are Splitwise's hardware, the presets that stand for
// them and the engines of their runs: vLLM 0.x on both, but its A100 runs
// pay for each extra prompt of a batch and its H100 runs do not, so each
// machine's stack is an engine of its own.
var splitwiseClasses = []splitwiseClass{{"a100-80gb", "a100-80gb", "vllm-v0-a100"}, {"h100-80gb", "h100-sxm", "vllm-v0"}}

// splitwiseClass is one of Splitwise's hardware: its preset and engine.
type splitwiseClass struct{ hardware, preset, engine string }

// splitwiseEngine is the engine of a hardware's Splitwise runs.
func splitwiseEngine(hardware string) string {
	i := slices.IndexFunc(splitwiseClasses, func(c splitwiseClass) bool { return c.hardware == hardware })
	return splitwiseClasses[i].engine
}

// splitwiseRuns are a hardware's runs of a model, the impossible ones too.
func splitwiseRuns(ms []measurement, model, hardware string) []measurement {
	var runs []measurement
	for _, m := range ms {
		if m.model == model && m.hardware == hardware {
			runs = append(runs, m)
		}
	}
	return runs
}

// splitwiseHalves are a hardware's runs of a model split into the fitting
// and the held-out half, each without the impossible runs.
func splitwiseHalves(ms []measurement, model, hardware string, d Device) (fit, held []measurement) {
	fit, held = splitByConfig(splitwiseRuns(ms, model, hardware))
	return possibleRuns(splitwisePreset(model), d, fit), possibleRuns(splitwisePreset(model), d, held)
}

// heldOut measures a device and Splitwise's engine on a hardware's
// held-out runs of a model.
func heldOut(ms []measurement, model, hardware string, d Device, engine Engine) FitResult {
	fit, held := splitwiseHalves(ms, model, hardware, d)
	r := errorsOn(model, held, d, engine)
	r.FitRuns = len(fit)
	return r
}

// errorsOn is the quantiles of the prompt and per-token times' absolute
// relative errors over a model's runs.
func errorsOn(model string, runs []measurement, d Device, engine Engine) FitResult {
	var prompt, token []float64
	for _, x := range runs {
		p, t := predict(splitwisePreset(model), d, x, engine)
		prompt = append(prompt, math.Abs(p/x.promptMs-1))
		token = append(token, math.Abs(t/x.tokenMs-1))
	}
	return FitResult{Device: d, PromptMedian: quantile(prompt, 0.5), PromptP90: quantile(prompt, 0.9),
		TokenMedian: quantile(token, 0.5), TokenP90: quantile(token, 0.9), HeldRuns: len(runs)}
}

// quantile is the nearest-rank quantile of values.
func quantile(values []float64, q float64) float64 {
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	return s[max(0, int(math.Ceil(q*float64(len(s))))-1)]
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

// errorChecks are the median and p90 |error| of prompt and per-token
// times as checks named prefix + time + kind + quantile, bounded by
// tolerance and cited by source.
func errorChecks(prefix, kind string, f FitResult, tolerance float64, source string) []sim.Calibration {
	var out []sim.Calibration
	for _, q := range []struct {
		name          string
		prompt, token float64
	}{{"median", f.PromptMedian, f.TokenMedian}, {"p90", f.PromptP90, f.TokenP90}} {
		out = append(out,
			sim.NewCalibration(prefix+"prompt_time "+kind+q.name+" |error|", 0, q.prompt, "fraction", tolerance, source),
			sim.NewCalibration(prefix+"token_time "+kind+q.name+" |error|", 0, q.token, "fraction", tolerance, source))
	}
	return out
}

// profileCalibrations hold the presets to the H100 profile measured for
// this project: each group's mean absolute error at most 10 %.
func profileCalibrations() ([]sim.Calibration, error) {
	p, err := h100Profile()
	if err != nil {
		return nil, err
	}
	rows, err := Compare(p, devicePresets["h100-sxm"], "")
	if err != nil {
		return nil, err
	}
	var out []sim.Calibration
	for _, g := range GroupErrors(rows) {
		out = append(out, sim.NewCalibration(fmt.Sprintf("h100 profile %s: mean |error| of %d rows", g.Group, g.Points), 0, g.MAPE, "fraction", 0.10,
			"accel/calibdata/h100-llama-3-8b-2026-11-23.json (simrun calibrate --measured prints each row)"))
	}
	return out, nil
}

// Calibrations are the accelerator's checks for `simrun calibrate`: KV
// bytes per token of every preset, the held-out errors of the fit, and the
// Mooncake break-even bandwidths, and the sampling kernels' costs.
func Calibrations() ([]sim.Calibration, error) {
	var out []sim.Calibration
	kv := map[string]float64{"llama-2-7b": 524288, "llama-2-70b": 327680, "llama-3-8b": 131072, "llama-3-70b": 327680,
		"qwen2.5-7b": 57344, "qwen2.5-72b": 327680, "deepseek-v3": 70272, "bloom-176b": 4014080,
		"llama-2-13b": 819200, "llama-65b": 2621440, "falcon-40b": 122880}
	for _, name := range ModelNames() {
		out = append(out, sim.NewCalibration(name+" KV bytes per token (bf16)", kv[name],
			float64(modelPresets[name].KVBytesPerToken(BF16)), "B", 0, "config.json: layers x 2 x kv_heads x head_dim x 2 B (MLA: layers x (512 + 64) x 2 B)"))
	}
	ms, err := loadMeasurements()
	if err != nil {
		return nil, err
	}
	const src = "Splitwise perf_model.csv (Llama2-70B, TP 2/4/8), fitted on half the configurations"
	const unseen = "Splitwise perf_model.csv, BLOOM-176B (TP 8): every run, a model the fit never saw; reported, bounded at 40 %"
	engines := make([]Engine, len(splitwiseClasses))
	for i, c := range splitwiseClasses {
		if engines[i], err = ParseEngine(c.engine); err != nil {
			return nil, err
		}
		out = append(out, errorChecks(c.hardware+" ", "held-out ", heldOut(ms, "llama2-70b", c.hardware, devicePresets[c.preset], engines[i]),
			0.15, src)...)
	}
	for i, c := range splitwiseClasses {
		d, engine := devicePresets[c.preset], engines[i]
		f := errorsOn("bloom-176b", possibleRuns(splitwisePreset("bloom-176b"), d, splitwiseRuns(ms, "bloom-176b", c.hardware)), d, engine)
		out = append(out, errorChecks(c.hardware+" bloom-176b ", "", f, 0.40, unseen)...)
	}
	profile, err := profileCalibrations()
	if err != nil {
		return nil, err
	}
	out = append(out, profile...)
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
// FlashInfer's published timings of its rejection-sampling kernel at three
// batches, and with the PyTorch sort-based path measured for this project
// (PyTorch 2.11, in a CUDA graph; the fitted points of
// kernels.SortBandwidthFraction, so they check the fit, not the model).
// FlashInfer's blog measured that path on an older PyTorch at 5.4 ms for
// batch 128, twice what 2.11 takes.
func samplingCalibrations() []sim.Calibration {
	const flashinfer = "FlashInfer blog 'Sorting-Free GPU Kernels for LLM Sampling' (2025-03-10), H100, vocab 128 K, top-k/top-p"
	const measured = "accel/calibdata/h100-llama-3-8b-2026-11-23.json, sampling: PyTorch 2.11 sort path in a CUDA graph"
	h100 := devicePresets["h100-sxm"]
	var out []sim.Calibration
	for _, c := range []struct {
		path              string
		work              func(batch, vocab int) kernels.Work
		batch             int
		target, tolerance float64
		source            string
	}{
		{"flashinfer top-k/top-p sampling", kernels.FlashInferWork, 2, 0.56, 0.15, flashinfer},
		{"flashinfer top-k/top-p sampling", kernels.FlashInferWork, 32, 0.84, 0.15, flashinfer},
		{"flashinfer top-k/top-p sampling", kernels.FlashInferWork, 128, 1.27, 0.15, flashinfer},
		{"pytorch sort-based top-k/top-p sampling", kernels.SortBasedWork, 16, 0.617, 0.2, measured},
		{"pytorch sort-based top-k/top-p sampling", kernels.SortBasedWork, 64, 1.311, 0.2, measured},
		{"pytorch sort-based top-k/top-p sampling", kernels.SortBasedWork, 128, 2.755, 0.2, measured},
	} {
		out = append(out, sim.NewCalibration(fmt.Sprintf("%s, h100, batch %d", c.path, c.batch), c.target,
			h100.KernelTime(c.work(c.batch, samplingVocab)).Seconds()*1e3, "ms", c.tolerance, c.source))
	}
	return out
}
