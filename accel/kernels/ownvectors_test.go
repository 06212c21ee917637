package kernels

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/internal/golden"
)

// Own golden vectors, in the public files' schemas, with the expected
// results computed by the reference implementations. Their cases aim at
// the boundaries the public sample avoids: top-p exactly at a cumulative
// sum, ties, float16 and bfloat16 rows, k outside [1, ks_max], min-p at 0
// and at 1, q present and absent, both output modes. `-update` regenerates.

// jsonFloat writes a float32 exactly, or a non-finite value as a string.
func jsonFloat(f float32) any {
	switch {
	case math.IsInf(float64(f), -1):
		return "-inf"
	case math.IsInf(float64(f), 1):
		return "inf"
	}
	return float64(f)
}

func jsonRows(v []float32, width int) [][]any {
	var out [][]any
	for i := 0; i < len(v); i += width {
		row := make([]any, width)
		for j := range row {
			row[j] = jsonFloat(v[i+j])
		}
		out = append(out, row)
	}
	return out
}

// genInput draws a random operator input; boundary makes top-p fall
// exactly on a cumulative sum of the row's top-k probabilities.
func genInput(r *rand.Rand, v2 bool, boundary bool) SampleInput {
	batch, vocab := 1+r.IntN(4), 2+r.IntN(90)
	in := SampleInput{Batch: batch, Vocab: vocab, Eps: 1e-8, TopKGuess: 1 + r.IntN(40), KsMax: 1024,
		InputIsLogits: true, IsNeedLogits: r.IntN(3) == 0}
	in.DType = DType(r.IntN(3))
	if !v2 {
		in.DType = Float16
	}
	if v2 && r.IntN(4) == 0 {
		in.KsMax = 1 + r.IntN(vocab)
	}
	for range batch * vocab {
		x := float32(r.NormFloat64() * 4)
		if r.IntN(3) == 0 {
			x = float32(r.IntN(6)) // ties
		}
		in.Logits = append(in.Logits, in.DType.Round(x))
	}
	for b := range batch {
		k := []int32{0, -3, 1, int32(1 + r.IntN(vocab)), int32(vocab + 5), int32(1 + r.IntN(8))}[r.IntN(6)]
		p := []float32{1, 1.5, 0, -0.5, r.Float32(), r.Float32(), 0.9}[r.IntN(7)]
		if !v2 {
			p = Float16.Round(p)
		}
		if boundary {
			k = int32(2 + r.IntN(vocab-1))
			p = exactCut(&in, b, int(k), v2, r)
		}
		in.TopK, in.TopP = append(in.TopK, k), append(in.TopP, p)
	}
	if v2 && r.IntN(2) == 0 {
		for range batch {
			in.MinPs = append(in.MinPs, []float32{0, -1, 1, 1.5, r.Float32() * 0.6}[r.IntN(5)])
		}
	}
	if r.IntN(3) != 0 {
		for range batch * vocab {
			in.Q = append(in.Q, float32(r.ExpFloat64()))
		}
	}
	in.IsNeedSampleResult = v2 && in.Q == nil && r.IntN(2) == 0
	return in
}

// exactCut returns a p equal to a float32 cumulative sum of the row's
// top-k probabilities, as both operators accumulate them.
func exactCut(in *SampleInput, b, k int, v2 bool, r *rand.Rand) float32 {
	vals := make([]float32, in.Vocab)
	for i := range vals {
		vals[i] = in.DType.Round(in.Logits[b*in.Vocab+i])
	}
	k = min(k, in.Vocab)
	probs := refSoftmax(refValues(refSorted(vals)[:k]))
	cum := float32(0)
	cut := 1 + r.IntN(k-1)
	for _, p := range probs[:cut] {
		cum += float32(p)
	}
	if !v2 {
		cum = Float16.Round(cum)
	}
	return min(cum, 0.999)
}

// expectCase runs the reference over an input and returns the case JSON.
func expectCase(name string, in SampleInput, v2 bool) map[string]any {
	exp := map[string]any{}
	var kept []int
	var selected []int64
	var entries [][][2]any
	var idx [][]int
	var masked [][]any
	for b := range in.Batch {
		var ids []int
		var probs []float64
		if v2 {
			ids, probs = refV2Row(&in, b)
		} else {
			ids, probs = refV1Row(&in, b)
		}
		kept = append(kept, len(ids))
		var q []float32
		if in.Q != nil {
			q = in.Q[b*in.Vocab : b*in.Vocab+len(ids)]
		}
		selected = append(selected, int64(ids[refPick(probs, q, in.Eps)]))
		var row [][2]any
		for _, id := range ids {
			row = append(row, [2]any{id, jsonFloat(in.DType.Round(in.Logits[b*in.Vocab+id]))})
		}
		entries = append(entries, row)
		idx = append(idx, ids)
		var m []any
		for _, p := range probs {
			m = append(m, jsonFloat(float32(p)))
		}
		masked = append(masked, m)
	}
	exp["kept_count"] = kept
	exp["logits_select_idx"] = selected
	exp["logits_top_kp_select"], exp["logits_idx"], exp["logits_sort_masked"] = nil, nil, nil
	if in.IsNeedLogits {
		exp["logits_top_kp_select"] = map[string]any{"fill": "-inf", "entries": entries}
	}
	if in.IsNeedSampleResult {
		exp["logits_select_idx"], exp["logits_idx"], exp["logits_sort_masked"] = nil, idx, masked
	}
	inputs := map[string]any{"batch": in.Batch, "vocab": in.Vocab, "logits": jsonRows(in.Logits, in.Vocab),
		"top_k": in.TopK, "top_p": jsonRows(in.TopP, len(in.TopP))[0], "eps": float64(in.Eps),
		"is_need_logits": in.IsNeedLogits, "top_k_guess": in.TopKGuess}
	inputs["q"] = nil
	if in.Q != nil {
		inputs["q"] = jsonRows(in.Q, in.Vocab)
	}
	if v2 {
		inputs["min_ps"] = nil
		if in.MinPs != nil {
			inputs["min_ps"] = jsonRows(in.MinPs, len(in.MinPs))[0]
		}
		inputs["ks_max"], inputs["input_is_logits"], inputs["is_need_sample_result"] = in.KsMax, true, in.IsNeedSampleResult
		inputs["logits_dtype"] = in.DType.String()
	} else {
		inputs["logits_dtype"] = "float16"
		delete(exp, "kept_count")
		delete(exp, "logits_idx")
		delete(exp, "logits_sort_masked")
	}
	return map[string]any{"name": name, "inputs": inputs, "expected": exp}
}

func ownVectorFile(v2 bool) []byte {
	r := rand.New(rand.NewPCG(2026, map[bool]uint64{true: 2, false: 1}[v2]))
	schema := SchemaSampleV1
	if v2 {
		schema = SchemaSampleV2
	}
	var cases []map[string]any
	for i := range 200 {
		boundary := i%4 == 0
		name := fmt.Sprintf("own_%03d", i)
		if boundary {
			name += "_exact_p"
		}
		cases = append(cases, expectCase(name, genInput(r, v2, boundary), v2))
	}
	out, err := json.MarshalIndent(map[string]any{"schema": schema,
		"reference": "kvcosim's reference implementation (accel/kernels/reference_test.go): full sort, plain loops",
		"cases":     cases}, "", " ")
	if err != nil {
		panic(err)
	}
	return append(out, '\n')
}

func TestOwnVectors(t *testing.T) {
	for _, v2 := range []bool{true, false} {
		name := map[bool]string{true: "own_topktopp_sample_v2.json", false: "own_topktopp_sample_v1.json"}[v2]
		path := filepath.Join("testdata", "vectors", name)
		golden.Check(t, path, string(ownVectorFile(v2)))
		f, err := ReadVectors(path)
		require.NoError(t, err)
		failed := 0
		for _, r := range f.Run() {
			if !assert.Empty(t, r.Err, "%s %s", name, r.Name) {
				failed++
			}
		}
		assert.Zero(t, failed)
	}
}
