package scenario

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/reports"
)

// TestDecodeRunsChangeNothing holds the decode runs (hostcpu/decoderun.go:
// one event for a run of decode steps) to the step-by-step run: on every
// design and engine, with layer-wise loads, preemption, tiers, a cluster
// and the request resolution, the requests and the summary are the same
// bytes but for the events counted, which are fewer.
func TestDecodeRunsChangeNothing(t *testing.T) {
	cases := [][]string{
		{"system.design=fpga"},
		{"system.design=recompute", "workload.session_rate_per_s=2"},
		{"system.design=cpu", "accelerator.kv_alloc=reserve"},
		{"system.design=lmcache"},
		{"system.design=cachedattention", "workload.max_concurrency=8"},
		{"system.design=lmcache", "store.load_wait=request"},
		{"system.design=fpga", "accelerator.kv_capacity=8GB", "workload.session_rate_per_s=2", "accelerator.preemption=swap"},
		{"system.design=cpu", "accelerator.kv_capacity=8GB", "workload.session_rate_per_s=2", "accelerator.preemption=store"},
		{"system.design=recompute", "accelerator.kv_capacity=8GB", "workload.session_rate_per_s=2"},
		{"system.design=fpga", "system.nodes=4", "storage.resolution=request", "workload.session_rate_per_s=2"},
		{"system.design=cpu", "accelerator.chunked_prefill=off", "workload.arrival=spike", "workload.spike_at_s=20"},
	}
	if testing.Short() {
		cases = cases[:3]
	}
	for _, sets := range cases {
		t.Run(strings.Join(sets, ","), func(t *testing.T) {
			sets := append(slices.Clone(sets), "workload.sessions=150")
			stepped, steppedEvents := decodeRun(t, true, sets)
			runs, runEvents := decodeRun(t, false, sets)
			require.Equal(t, string(stepped), string(runs))
			require.Less(t, runEvents, steppedEvents, "the runs stand for steps with fewer events")
		})
	}
}

// decodeRun runs the default scenario with sets, step by step or with
// decode runs, and returns its requests.csv and summary.json (events
// zeroed) and its events.
func decodeRun(t *testing.T, stepByStep bool, sets []string) ([]byte, uint64) {
	l, err := Load("", sets)
	require.NoError(t, err)
	l.resolved.host.StepByStep = stepByStep
	r, err := Build(l)
	require.NoError(t, err)
	res, err := r.Execute()
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, reports.WriteRequestsCSV(&out, res.Rows()))
	s := res.Summary()
	events := s.Events
	s.Events = 0
	require.NoError(t, json.NewEncoder(&out).Encode(s))
	return out.Bytes(), events
}
