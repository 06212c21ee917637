package accel

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

// measuredH100 is the project's first H100 profile
// (measured for this project with accel/calibdata/measure.py).
const measuredH100 = "calibdata/h100-llama-3-8b-2026-11-23.json"

// measuredProfiles are the measured profiles in calibdata, each with the
// GPU it names, its device preset and the points per group the model
// prices. heldOut names the groups held to 10 % in a profile the presets
// were not fitted on.
var measuredProfiles = []struct {
	file, gpu, device string
	counts            map[string]int
	heldOut           []string
}{
	{file: measuredH100, gpu: "NVIDIA H100 80GB HBM3", device: "h100-sxm",
		counts: map[string]int{"prefill": 5, "chunk": 3, "decode": 11, "eager": 3, "pcie": 6, "export": 5, "sampling": 3}},
	// tools/gpuprofile's first run on a GPU. Not fitted on: every group but
	// eager within 10 %. The eager rows (one Hugging Face decode step,
	// Python and launches) are host-bound and moved 37-55 ms between two
	// runs on the same machine (docs/accel.md).
	{file: "calibdata/h100-llama-3-8b-2026-11-26-gpuprofile.json", gpu: "NVIDIA H100 80GB HBM3", device: "h100-sxm",
		counts:  map[string]int{"prefill": 5, "chunk": 3, "decode": 11, "eager": 3, "pcie": 6, "export": 5, "sampling": 3},
		heldOut: []string{"prefill", "chunk", "decode", "pcie", "export", "sampling"}},
	// The first H200 profile, with the layerwise group; the h200 preset is
	// the H100 class's coefficients and was never fitted on an H200. The
	// band, 10 % as for the H100 profile, was set before the run; these
	// groups met it. Over it (docs/accel.md): eager 57.5 % (host-bound),
	// sampling 19.1 % (the sort ran as fast as on the H100, where the
	// model scales it with the H200's bandwidth), and the host-bound
	// chunks of 128 and 512 new tokens in resume 27.2 %, whole 16.5 %
	// and layerwise 22.9 %.
	{file: "calibdata/h200-llama-3-8b-2026-11-27-gpuprofile.json", gpu: "NVIDIA H200", device: "h200",
		counts: map[string]int{"prefill": 5, "chunk": 3, "decode": 11, "eager": 3, "pcie": 6, "export": 5, "sampling": 3,
			"resume": 9, "import": 9, "whole": 9, "layerwise": 9, "overlap": 9},
		heldOut: []string{"prefill", "chunk", "decode", "pcie", "export", "import", "overlap"}},
	// The same tool on an H100 the same day, the layerwise group included.
	// The 10 % band, set before the run, held for every group but eager
	// and the host-bound chunks of 128 and 512 new tokens (resume 27.8 %,
	// whole 16.6 %, layerwise 21.4 %), as on the H200; sampling met it
	// here (7.0 %) on the H100's own preset.
	{file: "calibdata/h100-llama-3-8b-2026-11-27-gpuprofile.json", gpu: "NVIDIA H100 80GB HBM3", device: "h100-sxm",
		counts: map[string]int{"prefill": 5, "chunk": 3, "decode": 11, "eager": 3, "pcie": 6, "export": 5, "sampling": 3,
			"resume": 9, "import": 9, "whole": 9, "layerwise": 9, "overlap": 9},
		heldOut: []string{"prefill", "chunk", "decode", "pcie", "export", "sampling", "import", "overlap"}},
}

// TestMeasuredProfileGroupsAndShapes reads every measured profile in
// calibdata: every group, in order, with the points each one counts.
func TestMeasuredProfileGroupsAndShapes(t *testing.T) {
	files, err := filepath.Glob("calibdata/*.json")
	require.NoError(t, err)
	var listed []string
	for _, c := range measuredProfiles {
		listed = append(listed, c.file)
	}
	assert.ElementsMatch(t, listed, files, "every profile in calibdata is in measuredProfiles")
	for _, c := range measuredProfiles {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			p, err := ReadProfile(c.file)
			require.NoError(t, err)
			assert.Equal(t, c.gpu, p.GPU)
			d, err := ProfileDevice(p.GPU)
			require.NoError(t, err)
			assert.Equal(t, c.device, d)
			counts := map[string]int{}
			for _, r := range p.Rows {
				counts[r.Group]++
				assert.Positive(t, r.Measured, r.Where)
			}
			assert.Equal(t, c.counts, counts)
			dev, err := DevicePreset(d)
			require.NoError(t, err)
			rows, err := Compare(p, dev, "")
			require.NoError(t, err)
			groups := GroupErrors(rows)
			require.Len(t, groups, len(c.counts))
			for i, g := range groups {
				if i > 0 {
					assert.Less(t, slices.Index(MeasuredGroups, groups[i-1].Group), slices.Index(MeasuredGroups, g.Group), "groups in MeasuredGroups' order")
				}
				assert.GreaterOrEqual(t, g.P90, g.MAPE*0.5, g.Group)
				if slices.Contains(c.heldOut, g.Group) {
					assert.LessOrEqual(t, g.MAPE, 0.10, g.Group)
				}
			}
		})
	}
}

// decodeRow is a profile's decode group of one valid row.
const decodeRow = `"decode": {"llama-3-8b": [{"batch": 1, "context": 512, "step_s": 0.01}]}`

func TestMeasuredProfileBadInput(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"not JSON", "[", "not a JSON object"},
		{"no rows", `{"gpu": "NVIDIA H100"}`, "no rows the model can price"},
		{"unknown group", `{"gpu": "H100", "training": []}`, `key "training": unknown group`},
		{"zero time", `{"gpu": "H100", "decode": {"llama-3-8b": [{"batch": 1, "context": 512, "step_s": 0}]}}`,
			"decode.llama-3-8b[0].step_s = 0: a time must be positive"},
		{"negative time", `{"gpu": "H100", "pcie": [{"bytes": 16777216, "h2d_pinned_s": -1}]}`, "pcie[0].h2d_pinned_s = -1: a time must be positive"},
		{"unknown model", `{"gpu": "H100", "decode": {"gpt-9": [{"batch": 1, "context": 512, "step_s": 0.01}]}}`, `decode.gpt-9: unknown model "gpt-9"`},
		{"dry run", `{"gpu": "dry run", "dry_run": true, "pcie": [{"bytes": 16777216, "h2d_pinned_s": 0.001}]}`, `key "dry_run": a dry run's times are dummies`},
		{"heads not dividing", `{"gpu": "H100", "shapes": {"mine": {"layers": 2, "hidden": 4096, "heads": 32, "kv_heads": 5, "intermediate": 8192, "vocab": 1000}},
			"decode": {"mine": [{"batch": 1, "context": 512, "step_s": 0.01}]}}`, `decode.mine: shapes.mine: model "mine": 32 heads must be a multiple of 5 KV heads`},
		{"empty shape", `{"gpu": "H100", "shapes": {"mine": {}}, "decode": {"mine": [{"batch": 1, "context": 512, "step_s": 0.01}]}}`,
			"shapes.mine: layers, hidden, heads, kv_heads, intermediate and vocab must be positive"},
		{"slice too deep", `{"gpu": "H100", "layers": {"llama-3-8b": 40}, "decode": {"llama-3-8b": [{"batch": 1, "context": 512, "step_s": 0.01}]}}`,
			"decode.llama-3-8b: layers.llama-3-8b = 40: a slice of 1 to 32 layers of a dense model"},
		{"a batch no GPU runs", `{"gpu": "H100", "decode": {"llama-3-8b": [{"batch": 2e9, "context": 512, "step_s": 0.01}]}}`,
			"decode.llama-3-8b[0].batch = 2e+09: want a whole number in [1, 65536]"},
		{"a negative batch", `{"gpu": "H100", "sampling": [{"batch": -5, "vocab": 128256, "sort_topk_topp_s_graph": 0.001}]}`,
			"sampling[0].batch = -5: want a whole number in [1, 65536]"},
		// issue 38: a key given twice was read as the last; rows the model
		// does not price were never checked
		{"gpu twice", "{\"gpu\": \"NVIDIA H100\",\n \"gpu\": \"NVIDIA A100\", " + decodeRow + "}", "line 2: key gpu: written twice (first on line 1)"},
		{"a time twice", `{"gpu": "H100", "decode": {"llama-3-8b": [{"batch": 1, "context": 512, "step_s": 0.01, "step_s": 9}]}}`,
			"line 1: key decode.llama-3-8b[0].step_s: written twice"},
		{"several unknown groups", `{"gpu": "H100", "zeta": 1, "beta": 2, "alpha": 3, "gamma": 4, ` + decodeRow + "}", `key "alpha": unknown group`},
		{"a negative prefill the model skips", `{"gpu": "H100", "prefill": {"llama-3-8b": [{"tokens": 128, "prefill_s": -1}]}, ` + decodeRow + "}",
			"prefill.llama-3-8b[0].prefill_s = -1: a time must be positive"},
		{"a zero copy the model skips", `{"gpu": "H100", "pcie": [{"bytes": 4096, "h2d_pinned_s": 0, "d2h_pinned_s": 0.0001}], ` + decodeRow + "}",
			"pcie[0].h2d_pinned_s = 0: a time must be positive"},
		{"an empty decode row", `{"gpu": "H100", "decode": {"llama-3-8b": [{"batch": 1, "context": 512, "step_s": 0.01}, {}]}}`,
			"decode.llama-3-8b[1]: no batch (a decode row gives batch, context and its times)"},
		{"a decode row without a time", `{"gpu": "H100", "decode": {"llama-3-8b": [{"batch": 1, "context": 512, "step_s": 0.01}, {"batch": 2, "context": 512}]}}`,
			"decode.llama-3-8b[1]: no time (a field such as step_s or argmax_s_graph): the row measures nothing"},
		{"a sampling time the model skips", `{"gpu": "H100", "sampling": [{"batch": 1, "vocab": 128256, "argmax_s_eager": -0.5}], ` + decodeRow + "}",
			"sampling[0].argmax_s_eager = -0.5: a time must be positive"},
		{"an unknown model under layers", `{"gpu": "H100", "layers": {"llama-9": 8}, ` + decodeRow + "}",
			"layers.llama-9: no prefill, chunk, decode or layerwise rows of llama-9 (models with rows: llama-3-8b)"},
		{"a shape no row measures", `{"gpu": "H100", "shapes": {"mine": {"layers": 2, "hidden": 64, "heads": 2, "kv_heads": 2, "intermediate": 128, "vocab": 100}}, ` + decodeRow + "}",
			"shapes.mine: no prefill, chunk, decode or layerwise rows of mine"},
		{"a layerwise row without its KV's bytes", `{"gpu": "H100", "layerwise": {"llama-3-8b": [{"cached": 2048, "new": 128, "layerwise_s": 0.03}]}}`,
			"layerwise.llama-3-8b[0]: no kv_bytes (a layerwise row gives cached, new, kv_bytes and its times)"},
		{"a layerwise row of a negative time", `{"gpu": "H100", "layerwise": {"llama-3-8b": [{"cached": 2048, "new": 128, "kv_bytes": 268435456, "whole_s": -0.01}]}}`,
			"layerwise.llama-3-8b[0].whole_s = -0.01: a time must be positive"},
		{"a fraction of a token", `{"gpu": "H100", "prefill": {"llama-3-8b": [{"tokens": 2048.5, "prefill_s": 0.1}]}}`,
			"prefill.llama-3-8b[0].tokens = 2048.5: want a whole number"},
		{"a context past any window", `{"gpu": "H100", "decode": {"llama-3-8b": [{"batch": 1, "context": 1e18, "step_s": 0.01}]}}`,
			"decode.llama-3-8b[0].context = 1e+18: want a whole number in [0, 16777216]"},
		{"a negative copy", `{"gpu": "H100", "pcie": [{"bytes": -1, "h2d_pinned_s": 0.001}]}`, "pcie[0].bytes = -1: want a whole number"},
		{"not a profile's size", `{"gpu": "H100", "pad": "` + strings.Repeat("x", maxProfileBytes) + `"}`, "more than 16 MiB: not a profile"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "profile.json")
			require.NoError(t, os.WriteFile(path, []byte(c.body), 0o644))
			_, err := ReadProfile(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), path)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	_, err := ProfileDevice("Tesla T4")
	assert.ErrorContains(t, err, `gpu "Tesla T4": no device preset for it: name one with --device`)
}

// compareBody reads a profile of body and prices its rows on device.
func compareBody(t *testing.T, body, device string) (*Profile, Device, []Compared) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "profile.json")
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	p, err := ReadProfile(path)
	require.NoError(t, err)
	d, err := DevicePreset(device)
	require.NoError(t, err)
	rows, err := Compare(p, d, "")
	require.NoError(t, err)
	return p, d, rows
}

// A slice of a model too big for one GPU is priced as the layers
// measured; a model of the profile's own shape as that shape.
func TestMeasuredProfileSlicesAndShapes(t *testing.T) {
	body := `{"gpu": "NVIDIA H100 80GB HBM3", "layers": {"llama-3-70b": 8},
		"shapes": {"mine": {"layers": 4, "hidden": 2048, "heads": 16, "kv_heads": 4, "intermediate": 8192, "vocab": 32000}},
		"decode": {"llama-3-70b": [{"batch": 1, "context": 512, "step_s": 0.002}], "mine": [{"batch": 1, "context": 512, "step_s": 0.0005}]},
		"prefill": {"llama-3-70b": [{"tokens": 2048, "prefill_s": 0.05, "kv_bytes": 67108864, "export_d2h_s": 0.003}]}}`
	_, d, rows := compareBody(t, body, "h100-sxm")
	labels := map[string]Compared{}
	for _, r := range rows {
		labels[r.Label] = r
	}
	require.Contains(t, labels, "llama-3-70b (8 of 80 layers) batch 1 context 512")
	require.Contains(t, labels, "mine batch 1 context 512")
	whole, _ := ModelPreset("llama-3-70b")
	n, err := NewNode(whole, d, 8, BF16, BF16, 0, nil)
	require.NoError(t, err)
	full := n.Cost(Iteration{Decodes: []int64{512}})
	slice := labels["llama-3-70b (8 of 80 layers) batch 1 context 512"].ModelS
	assert.Less(t, slice, full.Total.Seconds(), "a tenth of the layers on one GPU: less than the whole model on eight")
	export := labels["llama-3-70b (8 of 80 layers) export 64 MiB"]
	assert.Positive(t, export.ModelS, "the slice's export is its 16 per-layer copies")
}

// A layerwise row gives five groups: the chunk, the import, the two in
// turn and overlapped as the model prices them, and overlapped by
// LayerwiseEnd on the measured import and chunk; a row without the
// chunk's time has no overlap row. None of them is a fit's target.
func TestMeasuredProfileLayerwise(t *testing.T) {
	body := `{"gpu": "NVIDIA H200", "layerwise": {"llama-3-8b": [
		{"cached": 8192, "new": 512, "layers": 32, "kv_bytes": 1073741824, "import_h2d_s": 0.02, "compute_s": 0.035, "whole_s": 0.053, "layerwise_s": 0.036},
		{"cached": 2048, "new": 2048, "layers": 32, "kv_bytes": 268435456, "import_h2d_s": 0.005, "layerwise_s": 0.076}]}}`
	p, d, rows := compareBody(t, body, "h200")
	byLabel := map[string]Compared{}
	var groups []string
	for _, r := range rows {
		byLabel[r.Label] = r
		groups = append(groups, r.Group)
	}
	assert.Equal(t, []string{"resume", "import", "import", "whole", "layerwise", "layerwise", "overlap"}, groups)
	const shape = "llama-3-8b 512 on 8192 cached"
	resume, copied := byLabel[shape], byLabel["llama-3-8b import 1 GiB (beside 512 new)"]
	whole, layerwise := byLabel[shape+", import then chunk"], byLabel[shape+", layer by layer"]
	overlap := byLabel[shape+", layer by layer on the measured parts"]
	assert.Equal(t, []float64{0.035, 0.02, 0.053, 0.036, 0.036},
		[]float64{resume.MeasuredS, copied.MeasuredS, whole.MeasuredS, layerwise.MeasuredS, overlap.MeasuredS})
	assert.InDelta(t, resume.ModelS+copied.ModelS, whole.ModelS, 1e-9, "whole: the import, then the chunk")
	hidden := min(resume.ModelS, copied.ModelS) * (1 - 1.0/32)
	assert.InDelta(t, whole.ModelS-hidden, layerwise.ModelS, 2e-9, "layer by layer hides all but one layer of the shorter")
	assert.InDelta(t, 0.02/32+0.035, overlap.ModelS, 1e-9, "compute-bound: the first layer's copy, then the chunk")
	for _, tg := range profileTargets(p, d) {
		assert.Contains(t, fittedGroups, tg.group)
	}
}

// TestLayerwiseEnd: the last layer ends after the first layer's share of
// the load and all the compute, or after the load and the last layer's
// compute, whichever is later; a token-major object (all of it before
// layer 0) serialises the two.
func TestLayerwiseEnd(t *testing.T) {
	ms := sim.Millisecond
	for _, c := range []struct {
		name          string
		load, compute sim.Time
		num, den      int64
		want          sim.Time
	}{
		{"copy-bound, layer-major", 40 * ms, 32 * ms, 1, 32, 41 * ms},
		{"compute-bound, layer-major", 32 * ms, 64 * ms, 1, 32, 65 * ms},
		{"claim 9: half and 1/(2L) before layer 0", 64 * ms, 32 * ms, 33, 64, 65 * ms},
		{"token-major: the load, then the compute", 40 * ms, 32 * ms, 1, 1, 72 * ms},
		{"no load", 0, 32 * ms, 1, 32, 32 * ms},
	} {
		assert.Equal(t, c.want, LayerwiseEnd(c.load, c.compute, 32, c.num, c.den), c.name)
	}
}
