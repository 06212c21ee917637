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
