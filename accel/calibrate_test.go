package accel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCalibrations(t *testing.T) {
	checks, err := Calibrations()
	require.NoError(t, err)
	for _, c := range checks {
		t.Logf("%-55s target %8.4g model %8.4g %-9s ok=%v", c.Name, c.Target, c.Model, c.Unit, c.OK)
		assert.True(t, c.OK, "%s: model %v, target %v (tolerance %v)", c.Name, c.Model, c.Target, c.Tolerance)
	}
}

func TestFitSplitwiseIsReproducible(t *testing.T) {
	fits, err := FitSplitwise()
	require.NoError(t, err)
	for hw, f := range fits {
		t.Logf("%s: prefill %+v decode %+v allreduce %.3f hop %v | held-out prompt median %.3f p90 %.3f token median %.3f p90 %.3f (%d fit runs, %d held out)",
			hw, f.Device.Prefill, f.Device.Decode, f.Device.AllReduceEfficiency, f.Device.NVLinkHopLatency,
			f.PromptMedian, f.PromptP90, f.TokenMedian, f.TokenP90, f.FitRuns, f.HeldRuns)
		assert.Equal(t, 315, f.FitRuns+f.HeldRuns, "every Llama2-70B run of the device, on one side")
		assert.InDelta(t, 157, f.HeldRuns, 20, "about half held out")
	}
}

func TestSplitKeepsRepeatsTogether(t *testing.T) {
	ms, err := loadMeasurements()
	require.NoError(t, err)
	fit, held := splitByConfig(ms)
	inFit := map[[4]int]bool{}
	for _, m := range fit {
		inFit[m.config()] = true
	}
	for _, m := range held {
		assert.False(t, inFit[m.config()], "a configuration is on one side only")
	}
	assert.Equal(t, len(ms), len(fit)+len(held))
}
