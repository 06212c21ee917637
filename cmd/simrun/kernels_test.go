package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const vectorsDir = "../../accel/kernels/testdata/vectors"

func TestKernelsPassesEveryVectorFile(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(vectorsDir, "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 6, "three public and three own files")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			code, stdout, stderr := simrun("kernels", "--vectors", f)
			require.Equal(t, 0, code, stderr+stdout)
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			assert.Regexp(t, `^[1-9]\d* passed, 0 failed$`, lines[len(lines)-1])
			for _, l := range lines[:len(lines)-1] {
				assert.True(t, strings.HasPrefix(l, "PASS "), l)
			}
		})
	}
}

func TestKernelsReportsAFailingCase(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(vectorsDir, "ascend_topktopp_sample_v2.public.json"))
	require.NoError(t, err)
	// Corrupt the first expected selected index.
	re := regexp.MustCompile(`"logits_select_idx":\s*\[\s*(\d+)`)
	loc := re.FindSubmatchIndex(data)
	require.NotNil(t, loc)
	bad := append(append(append([]byte{}, data[:loc[2]]...), []byte("999999")...), data[loc[3]:]...)
	path := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(path, bad, 0o644))
	code, stdout, _ := simrun("kernels", "--vectors", path)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "FAIL ")
	assert.Regexp(t, `\d+ passed, 1 failed\n$`, stdout)
}

func TestKernelsRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	unknown := filepath.Join(dir, "unknown.json")
	require.NoError(t, os.WriteFile(unknown, []byte(`{"schema":"nope/v1","cases":[]}`), 0o644))
	garbage := filepath.Join(dir, "garbage.json")
	require.NoError(t, os.WriteFile(garbage, []byte(`{not json`), 0o644))
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"missing", []string{"--vectors", filepath.Join(dir, "absent.json")}, "absent.json"},
		{"unknown schema", []string{"--vectors", unknown}, `unknown schema "nope/v1"`},
		{"not json", []string{"--vectors", garbage}, "not a golden-vector file"},
		{"no flag", nil, "usage: simrun kernels"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := simrun(append([]string{"kernels"}, c.args...)...)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr, c.want)
		})
	}
}

// TestKernelsMalformedCaseExitsTwo: a case whose inputs are malformed (a
// shape that does not match batch x vocab, an unknown dtype, a NaN logit,
// a field of the wrong type) used to count as a kernel failure (exit 1,
// nothing on stderr); it is the file's fault: exit 2, naming the file and
// case on stderr. A file that never ends is refused, not read until memory
// runs out.
func TestKernelsMalformedCaseExitsTwo(t *testing.T) {
	const good = `"batch": 1, "vocab": 4, "logits_dtype": "float16", "logits": [[1, 2, 3, 4]], "top_k": [1], "top_p": [1.0], "q": null, "eps": 1e-08, "is_need_logits": false, "top_k_guess": 4`
	file := func(inputs string) string {
		body := `{"schema": "ascend-topktoppsample-v1-golden/v1", "cases": [{"name": "c0", "inputs": {` + inputs +
			`}, "expected": {"logits_select_idx": [3], "logits_top_kp_select": null}}]}`
		path := filepath.Join(t.TempDir(), "v.json")
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		return path
	}
	code, stdout, stderr := simrun("kernels", "--vectors", file(good))
	require.Equal(t, 0, code, "the unchanged case passes: "+stdout+stderr)
	for _, c := range []struct{ name, from, to, want string }{
		{"short logits", `[[1, 2, 3, 4]]`, `[[1, 2, 3]]`, "logits: 3 values, want batch x vocab = 4"},
		{"batch past the rows", `"batch": 1`, `"batch": 2`, "logits: 4 values, want batch x vocab = 8"},
		{"unknown dtype", `"float16"`, `"int3"`, `unknown dtype "int3"`},
		{"NaN logit", `[[1, 2, 3, 4]]`, `[[1, "nan", 3, 4]]`, "logits[0][1] is NaN"},
		{"top_k_guess 0", `"top_k_guess": 4`, `"top_k_guess": 0`, "top_k_guess = 0"},
		{"eps a string", `"eps": 1e-08`, `"eps": "x"`, "unreadable case"},
		// NaN parameters passed: the operator compared against them and gave a result
		{"NaN top_p", `"top_p": [1.0]`, `"top_p": ["nan"]`, "inputs.top_p[0] is NaN"},
		{"NaN q", `"q": null`, `"q": [[0.1, "nan", 0.2, 0.3]]`, "inputs.q[1] is NaN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := file(strings.Replace(good, c.from, c.to, 1))
			code, stdout, stderr := simrun("kernels", "--vectors", path)
			assert.Equal(t, 2, code, stdout)
			assert.Contains(t, stderr, path+": case c0: ")
			assert.Contains(t, stderr, c.want)
		})
	}
	t.Run("endless file", func(t *testing.T) {
		if _, err := os.Stat("/dev/zero"); err != nil {
			t.Skip("no /dev/zero")
		}
		code, _, stderr := simrun("kernels", "--vectors", "/dev/zero")
		assert.Equal(t, 2, code)
		assert.Contains(t, stderr, "/dev/zero: larger than the 1024 MiB limit of a golden-vector file")
	})
}
