package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// measuredProfile is the project's copy of the shared H100 profile.
const measuredProfile = "../../accel/calibdata/h100-llama-3-8b-2026-11-23.json"

// TestOutputFlagsRefuseWhatARenameWouldReplace holds issue 38's
// reproducers: an output file is put in place by a rename, which replaced
// a --trace symbolic link (its target never written) and a named pipe or
// device given to calibrate --out. Each output file flag now refuses a
// path that exists and is not a regular file, naming the flag, and leaves
// the path as it was.
func TestOutputFlagsRefuseWhatARenameWouldReplace(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.json")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o644))
	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.Symlink(target, link))
	pipe := filepath.Join(dir, "pipe")
	require.NoError(t, syscall.Mkfifo(pipe, 0o644))
	paths := []struct{ what, path string }{{"a symbolic link", link}, {"a named pipe", pipe}, {"a folder", dir}}
	// a device node of its own (null's numbers), never the system's
	// /dev/null: code that renames onto a device would replace it
	device := filepath.Join(dir, "null")
	if syscall.Mknod(device, syscall.S_IFCHR|0o666, 1<<8|3) == nil {
		paths = append(paths, struct{ what, path string }{"a device", device})
	} else {
		t.Log("no device node case: making one needs root")
	}
	flags := []struct {
		flag string
		args func(path string) []string
	}{
		{"--trace", func(p string) []string {
			return []string{"run", "-o", filepath.Join(dir, "r"), "--trace", p, "--set", "workload.sessions=2"}
		}},
		{"--vcd", func(p string) []string {
			return []string{"run", "-o", filepath.Join(dir, "r"), "--vcd", p, "--set", "workload.sessions=2"}
		}},
		{"--out", func(p string) []string {
			return []string{"calibrate", "--measured", measuredProfile, "--fit", "--out", p}
		}},
	}
	for _, f := range flags {
		for _, p := range paths {
			t.Run(f.flag+" "+p.what, func(t *testing.T) {
				code, _, stderr := simrun(f.args(p.path)...)
				assert.Equal(t, 2, code, stderr)
				assert.Contains(t, stderr, f.flag+" "+p.path+": "+p.what+", not a regular file: name a regular file or a new path")
				assert.NoDirExists(t, filepath.Join(dir, "r"))
			})
		}
	}
	st, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, st.Mode()&os.ModeSymlink, "the link is still a link")
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(data))
	st, err = os.Lstat(pipe)
	require.NoError(t, err)
	assert.NotZero(t, st.Mode()&os.ModeNamedPipe, "the pipe is still a pipe")
}
