package accel

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/kvcosim/kvcosim/accel/kernels"
	"github.com/kvcosim/kvcosim/internal/bounded"
	"github.com/kvcosim/kvcosim/internal/jsonkeys"
	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
)

// A measured profile is a GPU measured the way
// accel/calibdata/measure.py measures it: JSON
// with the GPU's name and, per group, rows of shapes and measured seconds
// (docs/accel.md describes every field). ReadProfile turns it into rows
// the model can price; MeasuredGroups are the groups, in report order.
// The eager group is Hugging Face's eager decode steps, the eager engine's
// own check. The layerwise rows of a profile give five groups: resume (the
// chunk alone), import (its KV's copy alone), whole (the copy, then the
// chunk), layerwise (the two overlapped layer by layer, priced with the
// model's copy and chunk) and overlap (the same run priced by LayerwiseEnd
// on the measured copy and chunk: the overlap's closed form alone).
var MeasuredGroups = []string{"prefill", "chunk", "decode", "eager", "pcie", "export", "sampling",
	"resume", "import", "whole", "layerwise", "overlap"}

// fittedGroups are the groups whose iterations a device's fit reads
// (FitProfile); the layerwise rows' groups are held out of it.
var fittedGroups = []string{"prefill", "chunk", "decode", "eager"}

// MeasuredRow is one measured time and the shape the model prices it at.
type MeasuredRow struct {
	Group, Label string
	// Where names the row in its file ("decode.llama-3-8b[4].step_s").
	Where    string
	Measured float64   // seconds, as measured
	model    Model     // the shape measured (a slice of layers, if the profile says so)
	engine   string    // the engine the iteration ran on (iterations only)
	iter     Iteration // prefill, chunk, decode
	bytes    int64     // pcie, export, import, whole, layerwise: the bytes copied
	batch    int       // sampling
	vocab    int
	// parts are an overlap row's measured copy and chunk, in seconds.
	parts struct{ importS, computeS float64 }
}

// Profile is a measured profile's rows and the GPU they were measured on.
type Profile struct {
	Path, GPU string
	Rows      []MeasuredRow
}

// profileFile is the file's layout.
type profileFile struct {
	GPU      string                          `json:"gpu"`
	PCIe     []map[string]float64            `json:"pcie"`
	Prefill  map[string][]map[string]float64 `json:"prefill"`
	Chunk    map[string][]map[string]float64 `json:"chunk"`
	Decode   map[string][]map[string]float64 `json:"decode"`
	Sampling []map[string]float64            `json:"sampling"`
	// Layerwise are chunks resumed on a KV cache imported layer by layer.
	Layerwise map[string][]map[string]float64 `json:"layerwise"`
	// DryRun marks a file of dummy times (tools/gpuprofile --dry-run).
	DryRun bool `json:"dry_run"`
	// Layers gives, per model, the layers measured when fewer than the
	// model's (a slice of a model too big for the GPU).
	Layers map[string]int `json:"layers"`
	// Shapes are models that are no preset, by the names the rows use.
	Shapes map[string]ProfileShape `json:"shapes"`
}

// ProfileShape is a model's shape as a profile gives it (from its
// config.json): a dense decoder with a gated MLP.
type ProfileShape struct {
	Layers       int `json:"layers"`
	Hidden       int `json:"hidden"`
	Heads        int `json:"heads"`
	KVHeads      int `json:"kv_heads"`
	HeadDim      int `json:"head_dim"`
	Intermediate int `json:"intermediate"`
	Vocab        int `json:"vocab"`
}

// profileKeys are the top-level keys a profile may have.
var profileKeys = []string{"gpu", "torch", "sms", "how", "pcie", "hbm_d2d_copy_1GiB_s", "prefill", "chunk", "decode", "sampling",
	"layerwise", "dry_run", "layers", "shapes"}

// layerCopies is the copies per layer of a session's KV export: K and V.
const layerCopies = 2

// ReadProfile reads a measured profile. Errors name the file, the row and
// the field: no rows, an unknown group, a time that is not positive, a
// model the presets do not know.
func ReadProfile(path string) (*Profile, error) {
	data, tooLarge, err := bounded.ReadFile(path, maxProfileBytes)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: cannot read the profile: %w", path, err)
	case tooLarge:
		return nil, fmt.Errorf("%s: more than %d MiB: not a profile", path, maxProfileBytes>>20)
	}
	return parseProfile(path, data)
}

// maxProfileBytes bounds a profile file: the shared H100 profile is 7 KB.
const maxProfileBytes = 16 << 20

// profileCounts bounds each count a profile's row may give: whole numbers,
// at least 1 where a row of none measures nothing, at most what a GPU run
// could have (a batch of 65,536, 2^24 tokens, 1 TiB copied, a vocabulary
// of 2^22). A row of batch 2e9 built that many decodes and ran out of
// memory; a negative one was priced as batch 0.
var profileCounts = map[string][2]float64{"batch": {1, 1 << 16}, "context": {0, 1 << 24}, "tokens": {1, 1 << 24}, "new": {1, 1 << 24},
	"cached": {0, 1 << 24}, "bytes": {1, 1 << 40}, "kv_bytes": {0, 1 << 40}, "vocab": {1, 1 << 22}, "layers": {1, 1 << 16}}

// rowNeeds is the counts a row of each group must give.
var rowNeeds = map[string][]string{"prefill": {"tokens"}, "chunk": {"new", "cached"}, "decode": {"batch", "context"},
	"pcie": {"bytes"}, "sampling": {"batch", "vocab"}, "layerwise": {"cached", "new", "kv_bytes"}}

// checkRow refuses a row of group that lacks a count the group needs or
// any time, a count that is not a whole number in range, or a time
// (isTime) that is not positive: every row, whether the model
// prices it or not.
func checkRow(path, group, where string, row map[string]float64) error {
	for _, key := range rowNeeds[group] {
		if _, ok := row[key]; !ok {
			return fmt.Errorf("%s: %s: no %s (a %s row gives %s and its times)", path, where, key, group, strings.Join(rowNeeds[group], ", "))
		}
	}
	times := 0
	for _, key := range slices.Sorted(maps.Keys(row)) {
		v := row[key]
		if r, ok := profileCounts[key]; ok && !(v >= r[0] && v <= r[1] && v == math.Trunc(v)) {
			return fmt.Errorf("%s: %s.%s = %v: want a whole number in [%d, %d]", path, where, key, v, int64(r[0]), int64(r[1]))
		}
		if isTime(key) {
			times++
			if !(v > 0) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: %s.%s = %v: a time must be positive", path, where, key, v)
			}
		}
	}
	if times == 0 {
		return fmt.Errorf("%s: %s: no time (a field such as step_s or argmax_s_graph): the row measures nothing", path, where)
	}
	return nil
}

// isTime reports whether a row's field is a time in seconds: its name ends
// in _s, or has _s before how it was run (sort_topk_topp_s_graph).
func isTime(field string) bool {
	return strings.HasSuffix(field, "_s") || strings.Contains(field, "_s_")
}

// parseProfile reads a profile's bytes; path names it in errors.
func parseProfile(path string, data []byte) (*Profile, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object: %w", path, err)
	}
	if err := jsonkeys.Check(data); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if !slices.Contains(profileKeys, k) {
			return nil, fmt.Errorf("%s: key %q: unknown group (known: %s)", path, k, strings.Join(profileKeys, ", "))
		}
	}
	var f profileFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.DryRun {
		return nil, fmt.Errorf(`%s: key "dry_run": a dry run's times are dummies, not a measurement: measure on the GPU`, path)
	}
	p := &Profile{Path: path, GPU: f.GPU}
	add := func(r MeasuredRow, field string, row map[string]float64) error {
		v, ok := row[field] // checkRow has checked it
		if !ok {
			return nil
		}
		r.Where, r.Measured = r.Where+"."+field, v
		p.Rows = append(p.Rows, r)
		return nil
	}
	if err := p.readModels(f, add); err != nil {
		return nil, err
	}
	if err := f.checkModelKeys(path); err != nil {
		return nil, err
	}
	for i, row := range f.PCIe {
		where := fmt.Sprintf("pcie[%d]", i)
		if err := checkRow(path, "pcie", where, row); err != nil {
			return nil, err
		}
		b := int64(row["bytes"])
		if b < 16<<20 {
			continue // below 16 MiB a copy is its launch and sync
		}
		for _, dir := range []string{"h2d_pinned_s", "d2h_pinned_s"} {
			r := MeasuredRow{Group: "pcie", Label: fmt.Sprintf("%s %s", dir[:3], sizeText(b)), Where: where, bytes: b}
			if err := add(r, dir, row); err != nil {
				return nil, err
			}
		}
	}
	for i, row := range f.Sampling {
		if err := checkRow(path, "sampling", fmt.Sprintf("sampling[%d]", i), row); err != nil {
			return nil, err
		}
		r := MeasuredRow{Group: "sampling", Label: fmt.Sprintf("sort top-k/top-p batch %d", int(row["batch"])),
			Where: fmt.Sprintf("sampling[%d]", i), batch: int(row["batch"]), vocab: int(row["vocab"])}
		if r.batch < 16 {
			continue // batch 1 is its launches
		}
		if err := add(r, "sort_topk_topp_s_graph", row); err != nil {
			return nil, err
		}
	}
	if len(p.Rows) == 0 {
		return nil, fmt.Errorf("%s: no rows the model can price", path)
	}
	slices.SortStableFunc(p.Rows, func(a, b MeasuredRow) int {
		return slices.Index(MeasuredGroups, a.Group) - slices.Index(MeasuredGroups, b.Group)
	})
	return p, nil
}

// addRow adds a row's field, if the row gives it, as a measured row.
type addRow func(r MeasuredRow, field string, row map[string]float64) error

// readModels reads the per-model groups: prefills, chunks, decode steps,
// KV exports and chunks on a layer-wise import.
func (p *Profile) readModels(f profileFile, add addRow) error {
	groups := []struct {
		name string
		rows map[string][]map[string]float64
		each func(m Model, where string, row map[string]float64) error
	}{
		{"prefill", f.Prefill, func(m Model, where string, row map[string]float64) error {
			tokens := int64(row["tokens"])
			if tokens < 1024 {
				return nil // an eager engine's launches, not the GPU's work
			}
			r := MeasuredRow{Group: "prefill", Label: fmt.Sprintf("%s prefill %d", m.Name, tokens), Where: where, model: m,
				engine: "eager", iter: Iteration{Prefills: []Chunk{{New: tokens, Last: true}}}}
			if err := add(r, "prefill_s", row); err != nil {
				return err
			}
			x := MeasuredRow{Group: "export", Label: fmt.Sprintf("%s export %s", m.Name, sizeText(int64(row["kv_bytes"]))), Where: where,
				model: m, bytes: int64(row["kv_bytes"])}
			return add(x, "export_d2h_s", row)
		}},
		{"chunk", f.Chunk, func(m Model, where string, row map[string]float64) error {
			c := Chunk{New: int64(row["new"]), Cached: int64(row["cached"]), Last: true}
			if c.New == 1 { // one eager decode step
				return add(MeasuredRow{Group: "eager", Label: fmt.Sprintf("%s eager decode on %d cached", m.Name, c.Cached), Where: where,
					model: m, engine: "eager", iter: Iteration{Decodes: []int64{c.Cached}}}, "hf_eager_decode_s", row)
			}
			if c.New < 2048 {
				return nil // an eager engine's launches, not the GPU's work
			}
			return add(MeasuredRow{Group: "chunk", Label: fmt.Sprintf("%s %d on %d cached", m.Name, c.New, c.Cached), Where: where,
				model: m, engine: "eager", iter: Iteration{Prefills: []Chunk{c}}}, "prefill_s", row)
		}},
		{"decode", f.Decode, func(m Model, where string, row map[string]float64) error {
			var it Iteration
			for range int(row["batch"]) {
				it.Decodes = append(it.Decodes, int64(row["context"]))
			}
			return add(MeasuredRow{Group: "decode", Label: fmt.Sprintf("%s batch %d context %d", m.Name, len(it.Decodes), int64(row["context"])),
				Where: where, model: m, engine: "cuda-graphs", iter: it}, "step_s", row)
		}},
		{"layerwise", f.Layerwise, func(m Model, where string, row map[string]float64) error {
			return layerwiseRows(m, where, row, add)
		}},
	}
	for _, g := range groups {
		for _, model := range slices.Sorted(maps.Keys(g.rows)) {
			m, err := f.model(model)
			if err != nil {
				return fmt.Errorf("%s: %s.%s: %w", p.Path, g.name, model, err)
			}
			for i, row := range g.rows[model] {
				where := fmt.Sprintf("%s.%s[%d]", g.name, model, i)
				if err := checkRow(p.Path, g.name, where, row); err != nil {
					return err
				}
				if err := g.each(m, where, row); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// layerwiseRows adds a layerwise row's times, each a group: the chunk
// alone (resume), its KV's import alone (import), the import then the
// chunk (whole), the two layer by layer (layerwise) and, when the row
// gives the import's and the chunk's times, the layer-wise time against
// LayerwiseEnd of those two (overlap).
func layerwiseRows(m Model, where string, row map[string]float64, add addRow) error {
	c := Chunk{New: int64(row["new"]), Cached: int64(row["cached"]), Last: true}
	b := int64(row["kv_bytes"])
	shape := fmt.Sprintf("%s %d on %d cached", m.Name, c.New, c.Cached)
	base := MeasuredRow{Where: where, model: m, engine: "eager", iter: Iteration{Prefills: []Chunk{c}}, bytes: b}
	for _, g := range []struct{ group, label, field string }{
		{"resume", shape, "compute_s"},
		{"import", fmt.Sprintf("%s import %s (beside %d new)", m.Name, sizeText(b), c.New), "import_h2d_s"},
		{"whole", shape + ", import then chunk", "whole_s"},
		{"layerwise", shape + ", layer by layer", "layerwise_s"},
	} {
		r := base
		r.Group, r.Label = g.group, g.label
		if err := add(r, g.field, row); err != nil {
			return err
		}
	}
	importS, copied := row["import_h2d_s"]
	computeS, computed := row["compute_s"]
	if !copied || !computed {
		return nil
	}
	r := base
	r.Group, r.Label = "overlap", shape+", layer by layer on the measured parts"
	r.parts.importS, r.parts.computeS = importS, computeS
	return add(r, "layerwise_s", row)
}

// checkModelKeys refuses a model under "layers" or "shapes" that no
// prefill, chunk, decode or layerwise rows measure (a misspelt name
// changed nothing), and a shape that is no model.
func (f profileFile) checkModelKeys(path string) error {
	measured := func(name string) bool {
		return slices.ContainsFunc(f.modelGroups(), func(g map[string][]map[string]float64) bool { _, ok := g[name]; return ok })
	}
	for _, key := range []struct {
		name  string
		names []string
	}{{"layers", slices.Sorted(maps.Keys(f.Layers))}, {"shapes", slices.Sorted(maps.Keys(f.Shapes))}} {
		for _, name := range key.names {
			if !measured(name) {
				return fmt.Errorf("%s: %s.%s: no prefill, chunk, decode or layerwise rows of %s (models with rows: %s)", path, key.name, name, name, strings.Join(f.rowModels(), ", "))
			}
		}
	}
	return nil
}

// modelGroups are the groups of rows per model.
func (f profileFile) modelGroups() []map[string][]map[string]float64 {
	return []map[string][]map[string]float64{f.Prefill, f.Chunk, f.Decode, f.Layerwise}
}

// rowModels names the models of the per-model groups' rows.
func (f profileFile) rowModels() []string {
	var out []string
	for _, g := range f.modelGroups() {
		out = append(out, slices.Collect(maps.Keys(g))...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// model is the shape of a profile's model: one of its shapes, else a
// preset, cut to the layers the profile says were measured.
func (f profileFile) model(name string) (Model, error) {
	m, err := ModelPreset(name)
	if s, ok := f.Shapes[name]; ok {
		m, err = s.model(name)
		if err != nil {
			return Model{}, fmt.Errorf("shapes.%s: %w", name, err)
		}
	}
	if err != nil {
		return Model{}, fmt.Errorf("%w (a model of your own goes in the profile's \"shapes\")", err)
	}
	n, sliced := f.Layers[name]
	if !sliced {
		return m, nil
	}
	if n < 1 || n > m.Layers || m.Experts > 0 {
		return Model{}, fmt.Errorf("layers.%s = %d: a slice of 1 to %d layers of a dense model", name, n, m.Layers)
	}
	cut := m
	cut.Name, cut.Layers = fmt.Sprintf("%s (%d of %d layers)", name, n, m.Layers), n
	cut.Params -= int64(float64(m.Layers-n) * m.linearParamsPerLayer())
	cut.ActiveParams = cut.Params
	return cut, nil
}

// model is the shape as a model: its parameters are its layers' linear
// weights and an embedding and LM head of hidden x vocab each.
func (s ProfileShape) model(name string) (Model, error) {
	headDim := s.HeadDim
	if headDim == 0 && s.Heads > 0 {
		headDim = s.Hidden / s.Heads
	}
	m := Model{Name: name, Layers: s.Layers, Hidden: s.Hidden, Heads: s.Heads, KVHeads: s.KVHeads, HeadDim: headDim,
		Intermediate: s.Intermediate, Vocab: s.Vocab, Attention: GQA}
	if s.Layers < 1 || s.Hidden < 1 || s.Heads < 1 || s.KVHeads < 1 || s.Intermediate < 1 || s.Vocab < 1 {
		return Model{}, fmt.Errorf("layers, hidden, heads, kv_heads, intermediate and vocab must be positive")
	}
	m.Params = int64(float64(s.Layers)*m.linearParamsPerLayer()) + 2*int64(s.Hidden)*int64(s.Vocab)
	m.ActiveParams = m.Params
	return m, m.Validate(1)
}

func sizeText(b int64) string {
	if b >= 1<<30 {
		return fmt.Sprintf("%d GiB", b>>30)
	}
	return fmt.Sprintf("%d MiB", b>>20)
}

// ProfileDevice is the device preset of a profile's GPU: "H100" in its
// name is h100-sxm, "H200" h200.
func ProfileDevice(gpu string) (string, error) {
	for _, d := range []struct{ in, preset string }{{"H200", "h200"}, {"H100", "h100-sxm"}, {"A100", "a100-80gb"}} {
		if strings.Contains(gpu, d.in) {
			return d.preset, nil
		}
	}
	return "", fmt.Errorf("gpu %q: no device preset for it: name one with --device", gpu)
}

// Compared is a measured row beside the model's price.
type Compared struct {
	Group     string  `json:"group"`
	Label     string  `json:"label"`
	ModelS    float64 `json:"model_s"`
	MeasuredS float64 `json:"measured_s"`
}

// Error is (model - measured) / measured.
func (c Compared) Error() float64 { return (c.ModelS - c.MeasuredS) / c.MeasuredS }

// hostLink is the measured GPUs' host link (H100 SXM5 and H200 boards:
// PCIe Gen5 x16).
const hostLink = "gen5x16"

// Compare prices every row of a profile with the device: iterations on
// one device (tp 1, bf16, the sampling kernels of the decode step left
// out: the measured steps end at the logits), copies over the host link
// through the link model, sampling by the sort-based path's cost model.
// The iterations run on the engine each was measured with, or on engine
// when it is not empty.
func Compare(p *Profile, d Device, engine string) ([]Compared, error) {
	if engine != "" {
		if _, err := ParseEngine(engine); err != nil {
			return nil, fmt.Errorf("engine %w", err)
		}
	}
	link, err := memory.PCIePreset(hostLink)
	if err != nil {
		return nil, err
	}
	var out []Compared
	for _, r := range p.Rows {
		t, err := price(r, d, cmp.Or(engine, r.engine), link)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", p.Path, r.Where, err)
		}
		out = append(out, Compared{Group: r.Group, Label: r.Label, ModelS: t.Seconds(), MeasuredS: r.Measured})
	}
	return out, nil
}

// price is the model's time for a measured row; iterations run on engine.
// A layerwise row's KV is layer-major (each layer's K and V copied in
// turn), so layer 0's has landed after 1/L of the import.
func price(r MeasuredRow, d Device, engine string, link memory.PCIeConfig) (sim.Time, error) {
	layers := int64(r.model.Layers)
	switch r.Group {
	case "pcie":
		return copyTime(link, r.bytes, 1, false), nil
	case "export":
		return copyTime(link, r.bytes, layerCopies*r.model.Layers, false), nil
	case "import":
		return copyTime(link, r.bytes, layerCopies*r.model.Layers, true), nil
	case "sampling":
		return d.KernelTime(kernels.SortBasedWork(r.batch, r.vocab)), nil
	case "overlap":
		return LayerwiseEnd(secondsTime(r.parts.importS), secondsTime(r.parts.computeS), layers, 1, layers), nil
	}
	n, err := NewNode(r.model, d, 1, BF16, BF16, 0, nil)
	if err != nil {
		return 0, err
	}
	n.Engine, _ = ParseEngine(engine)
	c := n.Cost(r.iter).Total
	switch r.Group {
	case "whole":
		return sim.SumTime(copyTime(link, r.bytes, layerCopies*r.model.Layers, true), c), nil
	case "layerwise":
		return LayerwiseEnd(copyTime(link, r.bytes, layerCopies*r.model.Layers, true), c, layers, 1, layers), nil
	}
	return c, nil // prefill, chunk, decode, eager, resume
}

// secondsTime is a measured time in seconds as a time.
func secondsTime(s float64) sim.Time { return sim.TimeOf(s * float64(sim.Second)) }

// copyTime is the time to copy bytes to the host, or to the card, in
// copies equal DMA copies, one after another, through the PCIe model.
func copyTime(cfg memory.PCIeConfig, bytes int64, copies int, toCard bool) sim.Time {
	eng := sim.NewEngine(4)
	link, err := memory.NewPCIe(eng, cfg)
	if err != nil {
		panic(err) // a preset is valid
	}
	dir := link.CardToHost
	if toCard {
		dir = link.HostToCard
	}
	each := bytes / int64(copies)
	for range copies {
		dir.Transfer(each, sim.Event{})
	}
	eng.Run()
	return dir.FreeAt() + cfg.Latency
}

// GroupError is a group's mean absolute percentage error and 90th
// percentile of |error|, as fractions.
type GroupError struct {
	Group     string
	Points    int
	MAPE, P90 float64
}

// GroupErrors summarises compared rows per group, in MeasuredGroups'
// order.
func GroupErrors(rows []Compared) []GroupError {
	var out []GroupError
	for _, g := range MeasuredGroups {
		var errs []float64
		for _, r := range rows {
			if r.Group == g {
				errs = append(errs, math.Abs(r.Error()))
			}
		}
		if len(errs) == 0 {
			continue
		}
		sort.Float64s(errs)
		sum := 0.0
		for _, e := range errs {
			sum += e
		}
		out = append(out, GroupError{Group: g, Points: len(errs), MAPE: sum / float64(len(errs)),
			P90: errs[int(math.Ceil(0.9*float64(len(errs))))-1]})
	}
	return out
}
