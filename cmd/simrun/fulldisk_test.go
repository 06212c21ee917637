package main

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/reports"
)

// fullDisk is a disk with room for so many bytes more, shared by every
// file written through reports.WriteFile.
type fullDisk struct{ room int }

var errDiskFull = errors.New("no space left on device (simulated)")

// hook wraps a file's writer so that it fails once the disk is full.
func (d *fullDisk) hook(w io.Writer) io.Writer { return diskWriter{d, w} }

type diskWriter struct {
	d *fullDisk
	w io.Writer
}

func (dw diskWriter) Write(p []byte) (int, error) {
	if len(p) > dw.d.room {
		n, _ := dw.w.Write(p[:dw.d.room])
		dw.d.room = 0
		return n, errDiskFull
	}
	dw.d.room -= len(p)
	return dw.w.Write(p)
}

// withFullDisk runs f with a disk that has room for so many bytes.
func withFullDisk(t *testing.T, room int, f func()) {
	t.Helper()
	reports.OutputHook = (&fullDisk{room: room}).hook
	defer func() { reports.OutputHook = nil }()
	f()
}

// leftovers lists the temporary files left under dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var tmp []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err == nil && strings.Contains(filepath.Base(path), ".tmp-") {
			tmp = append(tmp, path)
		}
		return err
	}))
	return tmp
}

// TestFullDiskLeavesNoPartialOutput fills the disk at points through each
// writing command's outputs: the command exits 2 naming the file, and the
// output folder it was creating is absent, with no temporary file left.
func TestFullDiskLeavesNoPartialOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the default study")
	}
	dir := t.TempDir()
	sweepFile := writeSweepFile(t, "set:\n  workload.sessions: 10\ngrid:\n  system.design: [cpu, fpga]\n")
	cases := []struct {
		name string
		room int
		args func(out string) []string
	}{
		{"run, marker only", len(markerText), func(out string) []string { return []string{"run", "-o", out, "--set", "workload.sessions=20"} }},
		{"run, mid-file", 3000, func(out string) []string { return []string{"run", "-o", out, "--set", "workload.sessions=20"} }},
		{"run, mid-trace", 200000, func(out string) []string {
			return []string{"run", "-o", out, "--set", "workload.sessions=20", "--trace", filepath.Join(out, "trace.json"),
				"--vcd", filepath.Join(out, "fpga.vcd")}
		}},
		{"study, points written", 20000, func(out string) []string { return []string{"-o", out, "--set", "workload.sessions=20"} }},
		{"study, mid-plots", 200000, func(out string) []string { return []string{"-o", out, "--set", "workload.sessions=20"} }},
		{"sweep", 3000, func(out string) []string { return []string{"sweep", "-c", sweepFile, "-o", out} }},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.Repeat("x", i+1))
			var code int
			var stderr string
			withFullDisk(t, c.room, func() { code, _, stderr = simrun(c.args(out)...) })
			assert.NotEqual(t, 0, code)
			assert.Contains(t, stderr, "no space left on device (simulated)")
			assert.Contains(t, stderr, "cannot write "+out)
			assert.NoDirExists(t, out, "a failed run leaves no folder")
		})
	}
	assert.Empty(t, leftovers(t, dir))
}

// TestFullDiskInMergeAndReport: merge removes the folder it created; report
// writes into the sweep's folder and leaves what was there untouched.
func TestFullDiskInMergeAndReport(t *testing.T) {
	m := sweepManifest{Points: 1, Keys: []string{"system.design"}, Shard: "all", Scenario: "a", Values: [][]string{{"cpu"}}}
	shard := fakeSweep(t, m, []string{"0", "cpu"})
	before, err := os.ReadFile(filepath.Join(shard, "sweep.csv"))
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "merged")
	var code int
	var stderr string
	withFullDisk(t, len(markerText)+10, func() { code, _, stderr = simrun("merge", "-o", out, shard) })
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "cannot write "+filepath.Join(out, "sweep.csv"))
	assert.NoDirExists(t, out)

	withFullDisk(t, 100, func() { code, _, stderr = simrun("report", "-i", shard) })
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "no space left on device (simulated)")
	after, err := os.ReadFile(filepath.Join(shard, "sweep.csv"))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
	assert.Empty(t, leftovers(t, shard))
}
