package scenario

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/workloads"
)

// The chosen process's parameters left out are recorded at their
// defaults, those given as given; without arrival keys the record has
// none (every Poisson scenario.yaml as before); a tenant's length left out
// is the workload's.
func TestArrivalsAreRecordedAsUsed(t *testing.T) {
	l, err := Load("", []string{"workload.arrival=spike", "workload.spike_height=4"})
	require.NoError(t, err)
	def := workloads.DefaultArrival()
	assert.Equal(t, []float64{def.SpikeAtS, def.SpikeLengthS, 4}, []float64{l.Workload.SpikeAtS, l.Workload.SpikeLengthS, l.Workload.SpikeHeight})
	assert.Contains(t, string(l.YAML()), "spike_at_s: 200\n")
	assert.Zero(t, l.Workload.GammaCV, "another process's parameter is not recorded")
	assert.Equal(t, workloads.ArrivalSpike, l.resolved.synthetic.Arrival.Process)

	plain, err := Load("", nil)
	require.NoError(t, err)
	assert.NotContains(t, string(plain.YAML()), "arrival")
	assert.NotContains(t, string(plain.YAML()), "slo")

	l, err = Load("", []string{"workload.tenants=[{name: a, share: 0.5, output_median_tokens: 60}, {name: b, share: 0.5}]"})
	require.NoError(t, err)
	tenants := l.resolved.synthetic.Tenants
	require.Len(t, tenants, 2)
	assert.Equal(t, workloads.LengthFit{Median: 60, P90: 424}, tenants[0].Output, "the median given, the p90 the workload's")
	assert.Equal(t, l.resolved.synthetic.FirstPrompt, tenants[1].FirstPrompt)
}
