package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A sweep with objectives writes the goodput's columns, and its report
// plots them; goodput rises with the load while the design keeps up and
// its share never passes 1. Without objectives a sweep's table is as it
// was (TestSweepWritesTableAndManifest and the goldens hold that).
func TestSweepWithObjectivesReportsGoodput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep")
	code, _, stderr := simrun("sweep", "-c", writeSweepFile(t, `set:
  workload.sessions: 24
  slo.ttft_ms: 2000
  slo.tpot_ms: 100
grid:
  workload.session_rate_per_s: [0.2, 0.4]
`), "-o", out)
	require.Equal(t, 0, code, stderr)
	f, err := os.Open(filepath.Join(out, "sweep.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	rate, share := slices.Index(rows[0], "goodput_requests_per_s"), slices.Index(rows[0], "goodput_share")
	require.Equal(t, []int{len(rows[0]) - 2, len(rows[0]) - 1}, []int{rate, share}, "the goodput's columns, last")
	value := func(row, col int) float64 {
		v, err := strconv.ParseFloat(rows[row][col], 64)
		require.NoError(t, err, rows[row][col])
		return v
	}
	assert.Greater(t, value(2, rate), value(1, rate), "more good requests a second at the higher load")
	for _, row := range []int{1, 2} {
		assert.InDelta(t, 0.5, value(row, share), 0.5, "a share")
	}
	code, _, stderr = simrun("report", "-i", out)
	require.Equal(t, 0, code, stderr)
	assert.FileExists(t, filepath.Join(out, "sweep_goodput_requests_per_s.svg"))
	assert.FileExists(t, filepath.Join(out, "sweep_goodput_share.svg"))
}
