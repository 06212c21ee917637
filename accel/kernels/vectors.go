package kernels

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kvcosim/kvcosim/internal/bounded"
	"github.com/kvcosim/kvcosim/internal/jsonkeys"
)

// The golden-vector schemas of testdata/vectors/FORMAT.md.
const (
	SchemaBeam     = "hf-beam-golden/v1"
	SchemaSampleV2 = "ascend-topktoppsample-v2-golden/v1"
	SchemaSampleV1 = "ascend-topktoppsample-v1-golden/v1"
)

// jfloat is a JSON number, or "-inf", "inf" or "nan".
type jfloat float64

// UnmarshalJSON reads a number or one of the non-finite strings.
func (f *jfloat) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		switch s {
		case "-inf":
			*f = jfloat(math.Inf(-1))
		case "inf":
			*f = jfloat(math.Inf(1))
		case "nan":
			*f = jfloat(math.NaN())
		default:
			return fmt.Errorf("number %q: want a number, \"-inf\", \"inf\" or \"nan\"", s)
		}
		return nil
	}
	var x float64
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*f = jfloat(x)
	return nil
}

// CaseResult is one case's outcome: Err is empty when it passed. BadInput
// says the case itself is malformed (unreadable, out of range, nothing
// expected) rather than the kernel's output differing from it.
type CaseResult struct {
	Name, Err string
	BadInput  bool
}

// badCase is the error of a malformed case.
type badCase struct{ error }

// malformed marks err as a malformed case's.
func malformed(err error) error { return badCase{err} }

// VectorFile is a golden-vector file's schema and raw cases.
type VectorFile struct {
	Schema string            `json:"schema"`
	Cases  []json.RawMessage `json:"cases"`
}

// ReadVectors reads a file and checks its schema is known.
func ReadVectors(path string) (*VectorFile, error) {
	data, tooLarge, err := bounded.ReadFile(path, maxVectorFileBytes)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %v", path, err)
	case tooLarge:
		return nil, fmt.Errorf("%s: larger than the %d MiB limit of a golden-vector file", path, maxVectorFileBytes>>20)
	}
	var f VectorFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: not a golden-vector file: %v", path, err)
	}
	if err := jsonkeys.Check(data); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch f.Schema {
	case SchemaBeam, SchemaSampleV1, SchemaSampleV2:
	default:
		return nil, fmt.Errorf("%s: unknown schema %q (known: %s, %s, %s)", path, f.Schema, SchemaBeam, SchemaSampleV2, SchemaSampleV1)
	}
	if len(f.Cases) == 0 {
		return nil, fmt.Errorf("%s: no cases: an empty vector file checks nothing", path)
	}
	return &f, nil
}

// maxVectorFileBytes bounds a golden-vector file (the bundled ones are
// under 150 kB): a device such as /dev/zero never ends.
const maxVectorFileBytes = 1 << 30

// maxVectorVocab bounds a case's vocabulary: the toy model and the kernels
// hold a few float32 rows of it per beam, so 2^24 tokens (64 MiB a row,
// 64 x a real model's vocabulary) is the most a case may ask for.
const maxVectorVocab = 1 << 24

// checkVocab refuses a vocabulary size out of 1..maxVectorVocab before
// anything of that size is allocated; field is the case's key for it.
func checkVocab(field string, vocab int) error {
	if vocab < 1 || vocab > maxVectorVocab {
		return malformed(fmt.Errorf("%s = %d: want 1 to %d (a row of float32 logits would take %.3g GB)",
			field, vocab, maxVectorVocab, 4*float64(vocab)/1e9))
	}
	return nil
}

// runCase runs one case of the file's schema; a case without an expected
// block fails: it would check nothing.
func (f *VectorFile) runCase(raw json.RawMessage) error {
	var head struct {
		Expected json.RawMessage `json:"expected"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return malformed(fmt.Errorf("unreadable case: %v", err))
	}
	if e := strings.TrimSpace(string(head.Expected)); e == "" || e == "null" || e == "{}" {
		return malformed(fmt.Errorf("no expected block: the case checks nothing"))
	}
	switch f.Schema {
	case SchemaBeam:
		return runBeamCase(raw)
	case SchemaSampleV2:
		return runSampleCase(raw, true)
	default:
		return runSampleCase(raw, false)
	}
}

// Run runs every case of the file.
func (f *VectorFile) Run() []CaseResult {
	out := make([]CaseResult, len(f.Cases))
	for i, raw := range f.Cases {
		var head struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(raw, &head)
		if head.Name == "" {
			head.Name = "case " + strconv.Itoa(i)
		}
		out[i] = CaseResult{Name: head.Name}
		if err := f.runCase(raw); err != nil {
			out[i].Err = err.Error()
			out[i].BadInput = errors.As(err, new(badCase))
		}
	}
	return out
}

// sampleCase is a case of either sampling schema.
type sampleCase struct {
	Inputs struct {
		Batch         int        `json:"batch"`
		Vocab         int        `json:"vocab"`
		LogitsDType   string     `json:"logits_dtype"`
		Logits        [][]jfloat `json:"logits"`
		TopK          []int32    `json:"top_k"`
		TopP          []jfloat   `json:"top_p"`
		MinPs         []jfloat   `json:"min_ps"`
		Q             [][]jfloat `json:"q"`
		Eps           float64    `json:"eps"`
		NeedLogits    bool       `json:"is_need_logits"`
		TopKGuess     int        `json:"top_k_guess"`
		KsMax         int        `json:"ks_max"`
		InputIsLogits *bool      `json:"input_is_logits"`
		NeedSample    bool       `json:"is_need_sample_result"`
	} `json:"inputs"`
	Expected struct {
		KeptCount   []int   `json:"kept_count"`
		SelectIdx   []int64 `json:"logits_select_idx"`
		TopKPSelect *struct {
			Fill    jfloat        `json:"fill"`
			Entries [][][2]jfloat `json:"entries"`
		} `json:"logits_top_kp_select"`
		LogitsIdx  [][]int64  `json:"logits_idx"`
		SortMasked [][]jfloat `json:"logits_sort_masked"`
	} `json:"expected"`
}

func flat(rows [][]jfloat) []float32 {
	if rows == nil {
		return nil
	}
	var out []float32
	for _, r := range rows {
		for _, x := range r {
			out = append(out, float32(x))
		}
	}
	return out
}

func floats(v []jfloat) []float32 {
	if v == nil {
		return nil
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// input converts a case's inputs to the operator's.
func (c *sampleCase) input() (SampleInput, error) {
	i := c.Inputs
	if err := checkVocab("inputs.vocab", i.Vocab); err != nil {
		return SampleInput{}, err
	}
	if i.Batch < 1 {
		return SampleInput{}, fmt.Errorf("inputs.batch = %d: want at least 1", i.Batch)
	}
	in := SampleInput{Batch: i.Batch, Vocab: i.Vocab, Logits: flat(i.Logits), TopK: i.TopK, TopP: floats(i.TopP),
		MinPs: floats(i.MinPs), Q: flat(i.Q), Eps: float32(i.Eps), IsNeedLogits: i.NeedLogits, TopKGuess: i.TopKGuess,
		KsMax: i.KsMax, InputIsLogits: i.InputIsLogits == nil || *i.InputIsLogits, IsNeedSampleResult: i.NeedSample}
	if i.LogitsDType != "" {
		d, err := ParseDType(i.LogitsDType)
		if err != nil {
			return in, err
		}
		in.DType = d
	}
	for _, v := range []struct {
		name   string
		values []float32
	}{{"inputs.top_p", in.TopP}, {"inputs.min_ps", in.MinPs}, {"inputs.q", in.Q}, {"inputs.eps", []float32{in.Eps}}} {
		if k := slices.IndexFunc(v.values, func(x float32) bool { return x != x }); k >= 0 {
			return in, fmt.Errorf("%s[%d] is NaN: the operator's result is undefined", v.name, k)
		}
	}
	return in, nil
}

func runSampleCase(raw json.RawMessage, v2 bool) error {
	var c sampleCase
	if err := json.Unmarshal(raw, &c); err != nil {
		return malformed(fmt.Errorf("unreadable case: %v", err))
	}
	in, err := c.input()
	if err != nil {
		return malformed(err)
	}
	if err := c.checkExpected(); err != nil {
		return malformed(err)
	}
	op := TopKTopPSampleV1
	if v2 {
		op = TopKTopPSampleV2
	}
	var results [2]SampleOutput
	for i, force := range []bool{false, true} { // fast path and full sort
		if results[i], err = op(in, force); err != nil {
			return malformed(err) // the operators fail only on their input: its shape, a NaN logit
		}
	}
	if err := c.compare(&results[0], v2); err != nil {
		return err
	}
	if err := c.compare(&results[1], v2); err != nil {
		return fmt.Errorf("full-sort path: %v", err)
	}
	return nil
}

// checkExpected range-checks the expected block against the case's shape
// before anything indexes the output by it: at most a row per batch row in
// every per-row field, and every listed logits_top_kp_select index a whole
// number from 0 to vocab-1.
func (c *sampleCase) checkExpected() error {
	e, batch, vocab := &c.Expected, c.Inputs.Batch, c.Inputs.Vocab
	var entries [][][2]jfloat
	if e.TopKPSelect != nil {
		entries = e.TopKPSelect.Entries
	}
	for _, r := range [...]struct {
		field string
		n     int
	}{{"logits_idx", len(e.LogitsIdx)}, {"logits_sort_masked", len(e.SortMasked)}, {"logits_top_kp_select.entries", len(entries)}} {
		if r.n > batch {
			return fmt.Errorf("expected.%s has %d rows: want at most inputs.batch = %d", r.field, r.n, batch)
		}
	}
	for b, row := range entries {
		for j, en := range row {
			if idx := float64(en[0]); idx != math.Trunc(idx) || idx < 0 || idx >= float64(vocab) {
				return fmt.Errorf("expected.logits_top_kp_select.entries[%d][%d] index %v: want a whole number from 0 to inputs.vocab-1 = %d", b, j, idx, vocab-1)
			}
		}
	}
	return nil
}

// compare checks an output against the case's expectations.
func (c *sampleCase) compare(o *SampleOutput, v2 bool) error {
	e := &c.Expected
	if e.KeptCount != nil && fmt.Sprint(e.KeptCount) != fmt.Sprint(o.KeptCount) {
		return fmt.Errorf("kept_count %v, want %v", o.KeptCount, e.KeptCount)
	}
	if e.SelectIdx != nil && fmt.Sprint(e.SelectIdx) != fmt.Sprint(o.SelectIdx) {
		return fmt.Errorf("logits_select_idx %v, want %v", o.SelectIdx, e.SelectIdx)
	}
	if e.TopKPSelect != nil {
		if err := compareTopKP(o, e.TopKPSelect.Entries, float32(e.TopKPSelect.Fill), c.Inputs.Vocab, v2); err != nil {
			return err
		}
	}
	if len(e.LogitsIdx) > len(o.LogitsIdx) || len(e.SortMasked) > len(o.LogitsSortMasked) {
		return fmt.Errorf("logits_idx and logits_sort_masked: %d and %d rows, want %d and %d", len(o.LogitsIdx), len(o.LogitsSortMasked), len(e.LogitsIdx), len(e.SortMasked))
	}
	for b, ids := range e.LogitsIdx {
		if fmt.Sprint(ids) != fmt.Sprint(o.LogitsIdx[b]) {
			return fmt.Errorf("logits_idx row %d: %v, want %v", b, o.LogitsIdx[b], ids)
		}
	}
	for b, probs := range e.SortMasked {
		if len(probs) != len(o.LogitsSortMasked[b]) {
			return fmt.Errorf("logits_sort_masked row %d: %d values, want %d", b, len(o.LogitsSortMasked[b]), len(probs))
		}
		for j, want := range probs {
			got := float64(o.LogitsSortMasked[b][j])
			if math.Abs(got-float64(want)) > 1e-6+1e-5*math.Abs(float64(want)) {
				return fmt.Errorf("logits_sort_masked[%d][%d] = %v, want %v", b, j, got, float64(want))
			}
		}
	}
	return nil
}

// compareTopKP checks the listed entries exactly and, for V2, that every
// other position holds the fill (V1 files dispute the fill: only entries).
func compareTopKP(o *SampleOutput, entries [][][2]jfloat, fill float32, vocab int, v2 bool) error {
	if o.TopKPSelect == nil {
		return fmt.Errorf("logits_top_kp_select missing")
	}
	for b, row := range entries {
		listed := map[int]bool{}
		for _, en := range row {
			idx := int(en[0])
			listed[idx] = true
			if got := o.TopKPSelect[b*vocab+idx]; got != float32(en[1]) {
				return fmt.Errorf("logits_top_kp_select[%d][%d] = %v, want %v", b, idx, got, float32(en[1]))
			}
		}
		if !v2 {
			continue
		}
		for v := range vocab {
			if got := o.TopKPSelect[b*vocab+v]; !listed[v] && got != fill && !(math.IsInf(float64(got), -1) && math.IsInf(float64(fill), -1)) {
				return fmt.Errorf("logits_top_kp_select[%d][%d] = %v, want the fill %v", b, v, got, fill)
			}
		}
	}
	return nil
}
