package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSweepWhenPairsASettingWithAGridValue: a when override reaches only
// the points with its grid value, after set's, so that it wins.
func TestSweepWhenPairsASettingWithAGridValue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sweep.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`set:
  accelerator.tp: 4
grid:
  model: [llama-2-13b, llama-2-70b]
  seed: [1, 2]
when:
  model=llama-2-13b:
    accelerator.tp: 2
`), 0o644))
	sw, err := LoadSweep(path)
	require.NoError(t, err)
	want := [][]string{
		{"accelerator.tp=4", "model=llama-2-13b", "seed=1", "accelerator.tp=2"},
		{"accelerator.tp=4", "model=llama-2-13b", "seed=2", "accelerator.tp=2"},
		{"accelerator.tp=4", "model=llama-2-70b", "seed=1"},
		{"accelerator.tp=4", "model=llama-2-70b", "seed=2"},
	}
	for i, p := range sw.Points() {
		assert.Equal(t, want[i], p.Sets)
	}
	l, err := Load("", sw.Points()[0].Sets)
	require.NoError(t, err)
	assert.Equal(t, 2, l.Scenario.Accelerator.TP)
}

// A point's folder name is its index and values, cut to maxPointName bytes
// on a character's start: the index keeps it unique.
func TestSweepPointNameIsShortEnoughForAFolder(t *testing.T) {
	tiers := "[{name: dram, device: ddr5-4800, capacity: 64GB}, {name: ssd, device: kioxia-cm6, capacity: 2TB}]"
	cases := []struct {
		name   string
		values []string
		want   string
	}{
		{"short values as they are", []string{"fpga", "2TB"}, "0007-fpga-2TB"},
		{"slashes, spaces and colons made safe", []string{"a/b c:d"}, "0007-a_b_c_d"},
		{"a long value cut", []string{tiers, tiers}, ("0007-" + strings.NewReplacer(" ", "_", ":", "_").Replace(tiers+"-"+tiers))[:maxPointName]},
		{"never inside a character", []string{strings.Repeat("é", 100)}, "0007-" + strings.Repeat("é", 61)},
	}
	for _, c := range cases {
		got := SweepPoint{Index: 7, Values: c.values}.Name()
		assert.Equal(t, c.want, got, c.name)
		assert.LessOrEqual(t, len(got), maxPointName, c.name)
		assert.True(t, utf8.ValidString(got), c.name)
	}
}

// A sweep's base given as an absolute path is that file; a relative one is
// read from the sweep's folder. The absolute one was joined to the folder.
func TestSweepBaseAbsoluteOrRelative(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.yaml")
	require.NoError(t, os.WriteFile(base, []byte("seed: 7\n"), 0o644))
	for name, ref := range map[string]string{"absolute": base, "relative": "base.yaml"} {
		sub := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(sub, 0o755))
		if name == "relative" {
			sub = dir
		}
		path := filepath.Join(sub, "sweep-"+name+".yaml")
		require.NoError(t, os.WriteFile(path, []byte("base: "+ref+"\ngrid:\n  seed: [1, 2]\n"), 0o644))
		sw, err := LoadSweep(path)
		require.NoError(t, err, name)
		assert.Equal(t, base, sw.Base, name)
	}
}
