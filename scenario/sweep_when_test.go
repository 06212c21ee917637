package scenario

import (
	"os"
	"path/filepath"
	"testing"

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
