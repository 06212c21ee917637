package memory

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
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

// TestFlatHBM2MatchesTheCycleModel keeps the flat model's constants equal
// to what the cycle-level model measures.
func TestFlatHBM2MatchesTheCycleModel(t *testing.T) {
	stream := ioPattern{Size: 16 << 20, Depth: 1, Count: 4}
	r, err := runDRAM(HBM2_U55C(), stream)
	require.NoError(t, err)
	assert.InDelta(t, HBM2U55CStreamBandwidth.GBps(), r.GBps(stream), 0.5)
	idle, err := idleReadLatency(HBM2_U55C())
	require.NoError(t, err)
	assert.InDelta(t, float64(HBM2U55CIdleLatency), float64(idle), 1)
}

func TestFlatFromDRAM(t *testing.T) {
	eng := sim.NewEngine(0)
	m, err := FlatFromDRAM(eng, "host", HostMemoryConfig())
	require.NoError(t, err)
	c := newCompletions(eng)
	m.Access(Request{Addr: 0, Bytes: 64, Done: c.done(1)})
	eng.Run()
	assert.InDelta(t, 90, c.at[1].Seconds()*1e9, 0.5, "idle access as the cycle model's: 90 ns")
	assert.InDelta(t, 193, m.link.Config().Bandwidth.GBps(), 2, "8 channels of DDR4-3200 streaming")
}
