package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run that cannot keep up says so on standard error, in summary.json and
// on stdout's load line; one that keeps up says nothing.
func TestRunSaysWhenItIsSaturated(t *testing.T) {
	for _, c := range []struct {
		name            string
		sets            []string
		saturated, long bool
	}{
		{"a light load", []string{"workload.sessions=60"}, false, false},
		{"sessions faster than the node serves them", []string{"workload.sessions=300", "workload.session_rate_per_s=20"}, true, false},
		// one SmartSSD (2.36 GB/s); four keep up, and so, since its reads go
		// before queued programs (2026-11-27), does one CM6
		{"exports faster than the drive writes them", []string{"workload.sessions=1600", "workload.session_rate_per_s=2",
			"storage.drives=1", "storage.device=smartssd-p2p", "accelerator.kv_capacity=auto"}, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.long && testing.Short() {
				t.Skip("a run of 1,600 sessions")
			}
			dir := filepath.Join(t.TempDir(), "out")
			args := []string{"run", "-o", dir}
			for _, s := range c.sets {
				args = append(args, "--set", s)
			}
			code, stdout, stderr := simrun(args...)
			require.Equal(t, 0, code, stderr)
			js, err := os.ReadFile(filepath.Join(dir, "summary.json"))
			require.NoError(t, err)
			var sum struct {
				Saturated bool `json:"saturated"`
				Load      struct {
					DeliveredShare float64 `json:"delivered_share"`
					Why            string  `json:"why"`
				} `json:"load"`
			}
			require.NoError(t, json.Unmarshal(js, &sum))
			assert.Equal(t, c.saturated, sum.Saturated, sum.Load.Why)
			assert.Equal(t, c.saturated, sum.Load.Why != "")
			if c.saturated {
				assert.Contains(t, stderr, "warning: design fpga is saturated: "+sum.Load.Why)
				assert.Contains(t, stdout, "SATURATED")
			} else {
				assert.NotContains(t, stderr, "saturated")
				assert.InDelta(t, 1, sum.Load.DeliveredShare, 0.01)
			}
		})
	}
}
