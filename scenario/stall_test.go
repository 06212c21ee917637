package scenario

import (
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
		{"accelerator.kv_capacity=1GB", "cpu.request_overhead=1s"},
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
