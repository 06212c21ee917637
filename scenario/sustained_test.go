package scenario

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/memory"
)

// The sustained rates are the run's totals per session at the sessions per
// second it delivered while they arrived: the output tokens of
// requests.csv, and each drive's bytes written over the drive sold; a run
// too short to judge its load has none.
func TestSustainedRatesAreTheTotalsAtTheDeliveredRate(t *testing.T) {
	s, rows := run(t, "system.design=fpga", "workload.sessions=40", "storage.drives=2")
	require.True(t, s.Load.Judged)
	table, err := csv.NewReader(bytes.NewReader(rows)).ReadAll()
	require.NoError(t, err)
	var output int64
	for _, r := range table[1:] {
		if r[len(r)-1] == "false" { // not rejected
			n, err := strconv.ParseInt(r[11], 10, 64) // output_tokens
			require.NoError(t, err)
			output += n
		}
	}
	perSession := s.Load.DeliveredSessionsPerS / 40
	assert.InDelta(t, float64(output)*perSession, s.SustainedOutputTokensPerS, 1e-9*s.SustainedOutputTokensPerS)
	tier := s.Tiers[0]
	require.Equal(t, 2, tier.Drives)
	want := float64(tier.BytesWritten) / 2 * perSession * 86400 / float64(memory.KioxiaCM6().CapacityBytes)
	assert.InDelta(t, want, tier.SustainedDriveWritesPerDay, 1e-9*want)
	assert.Greater(t, tier.SustainedDriveWritesPerDay, tier.DriveWritesPerDay, "the sessions stop arriving long before the run ends")

	few, _ := run(t, "system.design=fpga", "workload.sessions=4")
	assert.False(t, few.Load.Judged)
	assert.Zero(t, few.SustainedOutputTokensPerS)
	assert.Zero(t, few.Tiers[0].SustainedDriveWritesPerDay)
}
