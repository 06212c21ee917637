package memory

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCalibrations(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every calibration workload")
	}
	checks, err := Calibrations()
	require.NoError(t, err)
	require.NotEmpty(t, checks)
	for _, c := range checks {
		t.Logf("%-55s target %10.4g model %10.4g %-11s (%+.1f %%)", c.Name, c.Target, c.Model, c.Unit, 100*c.RelativeError())
		assert.True(t, c.OK, "%s: model %v %s, target %v within %.0f %% (%s)", c.Name, c.Model, c.Unit, c.Target, 100*c.Tolerance, c.Source)
	}
}
