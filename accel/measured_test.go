package accel

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// measuredH100 is the project's copy of the shared H100 profile
// (../shared/data/calibration/gpu-measured, measured for this project).
const measuredH100 = "calibdata/h100-llama-3-8b-2026-11-23.json"

// TestMeasuredProfileGroupsAndShapes reads the H100 profile: every group,
// in order, with the points the table counts.
func TestMeasuredProfileGroupsAndShapes(t *testing.T) {
	p, err := ReadProfile(measuredH100)
	require.NoError(t, err)
	assert.Equal(t, "NVIDIA H100 80GB HBM3", p.GPU)
	d, err := ProfileDevice(p.GPU)
	require.NoError(t, err)
	assert.Equal(t, "h100-sxm", d)
	counts := map[string]int{}
	for _, r := range p.Rows {
		counts[r.Group]++
		assert.Positive(t, r.Measured, r.Where)
	}
	assert.Equal(t, map[string]int{"prefill": 5, "chunk": 3, "decode": 11, "eager": 3, "pcie": 6, "export": 5, "sampling": 3}, counts)
	dev, err := DevicePreset(d)
	require.NoError(t, err)
	rows, err := Compare(p, dev, "")
	require.NoError(t, err)
	groups := GroupErrors(rows)
	require.Len(t, groups, len(MeasuredGroups))
	for i, g := range groups {
		assert.Equal(t, MeasuredGroups[i], g.Group)
		assert.GreaterOrEqual(t, g.P90, g.MAPE*0.5, g.Group)
	}
}

func TestMeasuredProfileBadInput(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"not JSON", "[", "not a JSON object"},
		{"no rows", `{"gpu": "NVIDIA H100"}`, "no rows the model can price"},
		{"unknown group", `{"gpu": "H100", "training": []}`, `key "training": unknown group`},
		{"zero time", `{"gpu": "H100", "decode": {"llama-3-8b": [{"batch": 1, "context": 512, "step_s": 0}]}}`,
			"decode.llama-3-8b[0].step_s = 0: a time must be positive"},
		{"negative time", `{"gpu": "H100", "pcie": [{"bytes": 16777216, "h2d_pinned_s": -1}]}`, "pcie[0].h2d_pinned_s = -1: a time must be positive"},
		{"unknown model", `{"gpu": "H100", "decode": {"gpt-9": [{"batch": 1, "context": 512, "step_s": 0.01}]}}`, `decode.gpt-9: unknown model "gpt-9"`},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), "profile.json")
		require.NoError(t, os.WriteFile(path, []byte(c.body), 0o644))
		_, err := ReadProfile(path)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), path, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
	_, err := ProfileDevice("Tesla T4")
	assert.ErrorContains(t, err, `gpu "Tesla T4": no device preset for it: name one with --device`)
}
