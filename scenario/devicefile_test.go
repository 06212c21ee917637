package scenario

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/accel"
)

// writeDeviceFile writes a device file into its own folder beside a
// scenario that names it by a relative path; it returns the scenario.
func writeDeviceFile(t *testing.T, device string) string {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "my-gpu.yaml"), []byte(device), 0o644))
	scenario := filepath.Join(dir, "run.yaml")
	require.NoError(t, os.WriteFile(scenario, []byte("accelerator:\n  device_file: my-gpu.yaml\n"), 0o644))
	return scenario
}

func TestDeviceFileReplacesThePresetsFigures(t *testing.T) {
	h100, err := accel.DevicePreset("h100-sxm")
	require.NoError(t, err)
	whole := accel.DeviceFileOf("h100-sxm", h100)
	l, err := Load(writeDeviceFile(t, string(whole.YAML("the h100-sxm preset, every key"))), nil)
	require.NoError(t, err)
	got := l.resolved.node.Device
	assert.InDelta(t, h100.LinearEfficiency, got.LinearEfficiency, 1e-3*h100.LinearEfficiency, "four significant digits")
	assert.InDelta(t, float64(h100.MemBandwidth), float64(got.MemBandwidth), 1e-3*float64(h100.MemBandwidth))

	l, err = Load(writeDeviceFile(t, "base: h100-sxm\nname: slow-h100\nlinear_efficiency: 0.25\nmem_gb: 94\n"), nil)
	require.NoError(t, err)
	got = l.resolved.node.Device
	assert.Equal(t, "slow-h100", got.Name)
	assert.Equal(t, 0.25, got.LinearEfficiency)
	assert.Equal(t, int64(94e9), got.MemBytes)
	assert.Equal(t, h100.AttentionEfficiency, got.AttentionEfficiency, "a key left out keeps the preset's value")
}

func TestDeviceFileAndEngineRejectBadInput(t *testing.T) {
	cases := []struct{ name, device, want string }{
		{"unknown key", "base: h100-sxm\nlinear_eff: 0.5\n", "my-gpu.yaml:2: key linear_eff: unknown key (valid keys here: allreduce_efficiency,"},
		{"no base", "linear_efficiency: 0.5\n", "my-gpu.yaml: key base: missing: a device file names the preset it changes (a100-80gb, a40, a800, h100-sxm, h200, h800)"},
		{"a fraction of an SM", "base: h100-sxm\nsms: 1.9\n", `my-gpu.yaml:2: key sms: cannot use "1.9": want a whole number in range`},
		{"a number in quotes", "base: h100-sxm\npeak_tflops: \"989\"\n", `my-gpu.yaml:2: key peak_tflops: cannot use "989": want a number`},
		{"out of range", "base: h100-sxm\n\nmemory_efficiency: 1.5\n", "my-gpu.yaml:3: key memory_efficiency: 1.5 is out of range [0.001, 1]"},
		{"an efficiency far below any device", "base: h100-sxm\nlinear_efficiency: 1e-12\n", "my-gpu.yaml:2: key linear_efficiency: 1e-12 is out of range [0.001, 1]"},
		{"zero sms", "base: a100-80gb\nsms: 0\n", "my-gpu.yaml:2: key sms: 0 is out of range [1, 65536]"},
		{"not a number", "base: h100-sxm\npeak_tflops: fast\n", `my-gpu.yaml:2: key peak_tflops: cannot use "fast"`},
		{"empty", "", "is empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(writeDeviceFile(t, c.device), nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "key accelerator.device_file")
			assert.Contains(t, err.Error(), c.want)
		})
	}
	_, err := Load("", []string{"accelerator.device_file=/nonexistent/my-gpu.yaml"})
	assert.ErrorContains(t, err, "--set accelerator.device_file=/nonexistent/my-gpu.yaml: key accelerator.device_file: cannot read the device file")
	_, err = Load("", []string{"accelerator.engine=tensorrt"})
	assert.ErrorContains(t, err, `key accelerator.engine: "tensorrt" is not allowed (allowed: cuda-graphs, eager, vllm-v0, vllm-v0-a100)`)
}

// An eager engine launches every layer from the host: the same run's
// requests take longer than with CUDA graphs.
func TestEngineKeyChangesTheIterationsPrice(t *testing.T) {
	mean := func(engine string) float64 {
		l, err := Load("", []string{"accelerator.engine=" + engine, "workload.sessions=20"})
		require.NoError(t, err)
		run, err := Build(l)
		require.NoError(t, err)
		s, err := run.Execute()
		require.NoError(t, err)
		return s.Summary().TTFTms.P50
	}
	assert.Greater(t, mean("eager"), 1.2*mean("cuda-graphs"))
}
