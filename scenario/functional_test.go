package scenario

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVerifyImportEqualsRecompute is simrun verify at a smaller size:
// every variant's sessions (both hashing schemes, both store designs,
// greedy, sampled and beam decoding, injected faults) give the tokens and
// final logits of a recomputation, and the faults are detected.
func TestVerifyImportEqualsRecompute(t *testing.T) {
	sessions := 60
	if testing.Short() {
		sessions = 12
	}
	rep, err := Verify("", sessions, 3)
	require.NoError(t, err)
	require.Empty(t, rep.Failures)
	assert.Equal(t, sessions, rep.Passed)
	require.Len(t, rep.Variants, len(verifyVariants))
	var imports, injected, detected int64
	for _, v := range rep.Variants {
		imports += v.Counts.Imports
		injected += v.Counts.Injected
		detected += v.Counts.CorruptDetected
	}
	assert.Positive(t, imports, "sessions came back through the store")
	if !testing.Short() {
		assert.Positive(t, injected)
		assert.Positive(t, detected, "injected faults were found on import")
		for _, v := range rep.Variants {
			assert.Positive(t, v.Counts.Imports, "%s imported", v.Name)
			assert.Positive(t, v.DeviceEvictions, "%s evicted", v.Name)
		}
	}
}

func TestVerifyBadArguments(t *testing.T) {
	_, err := Verify("", 0, 1)
	require.EqualError(t, err, "--sessions = 0: at least 1")
	_, err = Verify(filepath.Join(t.TempDir(), "none.yaml"), 5, 1)
	require.ErrorContains(t, err, "none.yaml: cannot read the scenario")
}

func TestFunctionalRunCountsItsImports(t *testing.T) {
	if testing.Short() {
		t.Skip("synthetic chat sessions of ~1,000 tokens on tinylm: seconds")
	}
	// two nodes and every resumed turn migrating: each comes back through the store
	s, _ := run(t, "mode=functional", "workload.sessions=2", "system.nodes=2", "system.routing=migrate", "system.migrate_fraction=1", "fpga.region_mib=1")
	require.NotNil(t, s.Functional)
	assert.Positive(t, s.Functional["imports_verified"], "evicted sessions came back through the store")
	assert.Zero(t, s.Functional["corrupt_detected"])
}

func TestFunctionalNeedsTokenIDs(t *testing.T) {
	l, err := Load("", []string{"mode=functional", "workload.kind=mooncake", "fpga.hashing=block",
		"workload.path=" + filepath.Join("..", "workloads", "testdata", "mooncake_conversation_trace.jsonl.gz"), "workload.limit=3"})
	require.NoError(t, err)
	_, err = Build(l)
	require.ErrorContains(t, err, `functional: functional mode: session 0 has token counts, not ids: use a workload with token ids (workload.kind mooncake, workload.path "../workloads/testdata/mooncake_conversation_trace.jsonl.gz")`)
}
