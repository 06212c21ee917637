package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var regressDir = filepath.Join("..", "..", "testdata", "regress")

func TestRegressMatchesTheGoldens(t *testing.T) {
	code, stdout, stderr := simrun("regress", "--dir", regressDir)
	require.Equal(t, 0, code, stdout+stderr)
	for _, name := range []string{"patent-query-hit", "patent-query-miss", "export-full", "export-delta", "block-query",
		"migrated-resume", "decode-sample", "decode-beam"} {
		assert.Contains(t, stdout, "ok "+name+"\n")
	}
}

func TestRegressReportsAChange(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{".yaml", ".jsonl", ".golden"} {
		data, err := os.ReadFile(filepath.Join(regressDir, "decode-beam"+ext))
		require.NoError(t, err)
		if ext == ".golden" { // a stored figure the model no longer gives
			data = []byte(strings.Replace(string(data), "bytes=", "bytes=1", 1))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "decode-beam"+ext), data, 0o644))
	}
	code, stdout, _ := simrun("regress", "--dir", dir)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "CHANGED decode-beam (golden -, now +):\nline 1:\n- span ")
	assert.Contains(t, stdout, "1 of 1 micro-scenarios changed")

	code, _, _ = simrun("regress", "--dir", dir, "--update")
	require.Equal(t, 0, code)
	code, _, _ = simrun("regress", "--dir", dir)
	assert.Equal(t, 0, code, "--update rewrote the golden")

	code, _, stderr := simrun("regress", "--dir", t.TempDir())
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "no micro-scenarios")
}

// TestRegressUpdateWritesAllOrNone: a micro-scenario that fails to run stops
// an update before it rewrites any golden, even those of the scenarios that
// come before it.
func TestRegressUpdateWritesAllOrNone(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{".yaml", ".jsonl"} {
		data, err := os.ReadFile(filepath.Join(regressDir, "decode-beam"+ext))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "a-good"+ext), data, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "b-bad"+ext), data, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b-bad.yaml"), []byte("seed: [1]\n"), 0o644))
	code, _, stderr := simrun("regress", "--dir", dir, "--update")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "b-bad")
	assert.NoFileExists(t, filepath.Join(dir, "a-good.golden"), "the good scenario's golden is not written either")
}
