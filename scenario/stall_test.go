package scenario

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStalledNodeSaysSo runs too little device KV memory for the sessions
// at once: the request at the head of a node's queue needs memory that only
// sessions whose next turns wait behind it hold, so nothing is admitted
// again. The run must say that and name the keys, where it ended in counts
// that did not add up (2026-11-26).
func TestStalledNodeSaysSo(t *testing.T) {
	for _, sets := range [][]string{
		{"accelerator.kv_capacity=1GB", "workload.max_concurrency=64"},
		// 1 GB stalled until the card streamed its imports (2026-11-27),
		// which moved the turns' timing; 1.2 GB stalls now
		{"accelerator.kv_capacity=1200MB", "cpu.request_overhead=1s"},
	} {
		l, err := Load("", sets)
		require.NoError(t, err)
		r, err := Build(l)
		require.NoError(t, err)
		_, err = r.Execute()
		require.Error(t, err, "%v", sets)
		assert.Contains(t, err.Error(), "stalled", sets)
		assert.Contains(t, err.Error(), "accelerator.kv_capacity", sets)
		assert.NotContains(t, err.Error(), "not conserved", sets)
	}
}

// TestRejectedRequestsAreMarkedInTheCSV runs requests that can never fit
// the device's KV memory: each is counted rejected, and its requests.csv
// row says so (its times are zero, not latencies), where nothing told
// such rows apart until 2026-11-26.
func TestRejectedRequestsAreMarkedInTheCSV(t *testing.T) {
	s, csv := run(t, "model=llama-2-7b", "accelerator.tp=1", "accelerator.kv_capacity=1GB", "workload.kind=mooncake",
		"workload.path=../workloads/testdata/mooncake_synthetic_trace.jsonl.gz", "workload.limit=39",
		"accelerator.max_model_len=262144", "system.design=recompute")
	require.Positive(t, s.RequestsRejected)
	rows := strings.Split(strings.TrimSpace(string(csv)), "\n")
	require.Equal(t, "rejected", rows[0][strings.LastIndex(rows[0], ",")+1:])
	marked := 0
	for _, row := range rows[1:] {
		if strings.HasSuffix(row, ",true") {
			marked++
		}
	}
	assert.Equal(t, int(s.RequestsRejected), marked)
	assert.Equal(t, int(s.RequestsCompleted), len(rows)-1-marked)
}
