package kernels

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// publicVectors are the project's copies of conformance/*.public.json.
var publicVectors = []string{"ascend_topktopp_sample_v2.public.json", "ascend_topktopp_sample_v1.public.json", "hf_beam_v4_38_2.public.json"}

func TestPublicVectors(t *testing.T) {
	for _, name := range publicVectors {
		f, err := ReadVectors(filepath.Join("testdata", "vectors", name))
		require.NoError(t, err)
		for _, r := range f.Run() {
			assert.Empty(t, r.Err, "%s: %s", name, r.Name)
		}
	}
}

// vectorCases reads a bundled vector file's schema and cases.
func vectorCases(t *testing.T, name string) (string, []map[string]any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "vectors", name))
	require.NoError(t, err)
	var f struct {
		Schema string           `json:"schema"`
		Cases  []map[string]any `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &f))
	return f.Schema, f.Cases
}

// runOneCase writes a file of one case and runs it, failing on a panic.
func runOneCase(t *testing.T, schema string, c map[string]any) CaseResult {
	t.Helper()
	out, err := json.Marshal(map[string]any{"schema": schema, "cases": []any{c}})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "v.json")
	require.NoError(t, os.WriteFile(path, out, 0o644))
	f, err := ReadVectors(path)
	require.NoError(t, err)
	var res []CaseResult
	require.NotPanics(t, func() { res = f.Run() })
	require.Len(t, res, 1)
	return res[0]
}

// mutatedTopKPCase runs file name's first case that expects
// logits_top_kp_select after edit has changed it.
func mutatedTopKPCase(t *testing.T, name string, edit func(inputs, expected map[string]any)) CaseResult {
	t.Helper()
	schema, cases := vectorCases(t, name)
	for _, c := range cases {
		if exp := c["expected"].(map[string]any); exp["logits_top_kp_select"] != nil {
			edit(c["inputs"].(map[string]any), exp)
			return runOneCase(t, schema, c)
		}
	}
	t.Fatalf("%s: no case expects logits_top_kp_select", name)
	return CaseResult{}
}

// TestExpectedIndicesAreRangeChecked holds issue 38's reproducers: an index
// or a row count the file gives is checked against the case's shape before
// the output is read by it (each panicked with index out of range).
func TestExpectedIndicesAreRangeChecked(t *testing.T) {
	setEntry := func(idx float64) func(_, exp map[string]any) {
		return func(_, exp map[string]any) {
			entries := exp["logits_top_kp_select"].(map[string]any)["entries"].([]any)
			entries[0].([]any)[0] = []any{idx, 0}
		}
	}
	vocabOne := func(in, exp map[string]any) {
		in["vocab"] = 1
		rows := in["logits"].([]any)
		for i := range rows {
			rows[i] = []any{1.0}
		}
		delete(exp, "kept_count")
		delete(exp, "logits_select_idx")
	}
	extraRow := func(field string) func(in, exp map[string]any) {
		return func(in, exp map[string]any) {
			in["is_need_sample_result"] = false
			rows := make([]any, 100)
			for i := range rows {
				rows[i] = []any{0}
			}
			exp[field] = rows
		}
	}
	for _, v := range []string{"ascend_topktopp_sample_v1.public.json", "ascend_topktopp_sample_v2.public.json"} {
		for _, c := range []struct {
			name string
			edit func(in, exp map[string]any)
			want string
		}{
			{"entry 1000", setEntry(1000), "entries[0][0] index 1000: want a whole number from 0 to inputs.vocab-1"},
			{"entry -7", setEntry(-7), "entries[0][0] index -7: want a whole number from 0 to"},
			{"entry 1.5", setEntry(1.5), "entries[0][0] index 1.5: want a whole number"},
			{"vocab 1, expected unchanged", vocabOne, "want a whole number from 0 to inputs.vocab-1 = 0"},
			{"logits_idx rows past the batch", extraRow("logits_idx"), "expected.logits_idx has 100 rows: want at most inputs.batch"},
			{"a negative batch", func(in, _ map[string]any) { in["batch"] = -1 }, "inputs.batch = -1: want at least 1"},
			{"logits_sort_masked rows past the batch", extraRow("logits_sort_masked"), "expected.logits_sort_masked has 100 rows: want at most inputs.batch"},
		} {
			t.Run(v+"/"+c.name, func(t *testing.T) {
				res := mutatedTopKPCase(t, v, c.edit)
				assert.True(t, res.BadInput, res.Err)
				assert.Contains(t, res.Err, c.want)
			})
		}
	}
}

// TestBeamExpectedScoresPastTheOutput: a beam case listing more
// sequence_scores than the search returns fails the case (it panicked).
func TestBeamExpectedScoresPastTheOutput(t *testing.T) {
	schema, cases := vectorCases(t, "hf_beam_v4_38_2.public.json")
	exp := cases[0]["expected"].(map[string]any)
	exp["sequence_scores"] = append(exp["sequence_scores"].([]any), 0, 0, 0)
	assert.Contains(t, runOneCase(t, schema, cases[0]).Err, "sequence_scores: ")
}

// TestVectorFileKeysAreDistinct: a key written twice in a golden-vector
// file is an error naming it (the last was read).
func TestVectorFileKeysAreDistinct(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.json")
	body := `{"schema": "hf-beam-golden/v1", "cases": [{"name": "a", "expected": {"num_steps": 1,` + "\n" + `"num_steps": 2}}]}`
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	_, err := ReadVectors(path)
	assert.ErrorContains(t, err, path+": line 2: key cases[0].expected.num_steps: written twice (first on line 1)")
}
