package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/internal/golden"
)

// TestExplainDefaultSession is a teaching fixture: session 3 of the
// default scenario, whose second turn is a query that hits.
func TestExplainDefaultSession(t *testing.T) {
	code, stdout, stderr := simrun("explain", "--session", "3")
	require.Equal(t, 0, code, stderr)
	golden.Check(t, filepath.Join("testdata", "explain-session3.golden"), stdout)
	assert.Contains(t, stdout, "FPGA imports the cache data from the SSD into the exchange memory")
	assert.Contains(t, stdout, "(claim 9)")
	assert.Contains(t, stdout, "booked as the turn's import, not query time")
	assert.Contains(t, stdout, "turn 1: query decided by the FPGA (token DMA, hashing, table walk): hit true, chain links visited 1, blocks matched 0 [took 4.905 us]")
	assert.Contains(t, stdout, "FPGA streams the cache from device memory (claim 7)", "fpga.forward: stream streams the export too")
}

// TestExplainCPUDesign: the cpu design's host looks the session up and
// moves its KV; no line says the FPGA does the work (every design's
// narration read "the FPGA runs a query task").
func TestExplainCPUDesign(t *testing.T) {
	code, stdout, stderr := simrun("explain", "--session", "3", "--set", "system.design=cpu")
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stdout, "FPGA")
	assert.Contains(t, stdout, "turn 1: CPU decides: the history is not on this accelerator, so the host looks it up in its own index")
	assert.Contains(t, stdout, "turn 1: query decided by a host core")
	assert.Contains(t, stdout, "turn 1: the KV moves into the accelerator: the host reads it from the drives into host memory and copies it over PCIe: 485.29 MB [took 35.173 ms]")
}

// Each design's own path: the DRAM-tier designs read their tier and load
// layer by layer; the card loads layer by layer when store.load says so
// (the host designs' text read "from storage" for every one of them).
func TestExplainNarratesEachDesignsPath(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"system.design=lmcache"}, "turn 1: the KV moves into the accelerator: the host reads it from its host-DRAM tier (or from the drives below it, into host memory) and copies it over PCIe, layer by layer, each layer's prefill starting as it lands: 419.43 MB"},
		{[]string{"system.design=cachedattention"}, "from its host-DRAM tier (or from the drives below it, into host memory) and copies it over PCIe, layer by layer"},
		{[]string{"store.load=layerwise"}, "turn 1: the KV moves into the accelerator: the FPGA reads it from the SSD and forwards it over the peer link, layer by layer, each layer's prefill starting as it lands"},
	} {
		args := []string{"explain", "--session", "3"}
		for _, s := range c.sets {
			args = append(args, "--set", s)
		}
		code, stdout, stderr := simrun(args...)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stdout, c.want, "%v", c.sets)
	}
}

// An export that stores nothing is narrated as failed, with its error: it
// read "export done: regions 0 from address none".
func TestExplainFailedExport(t *testing.T) {
	for _, design := range []string{"fpga", "cpu"} {
		code, stdout, stderr := simrun("explain", "--session", "1", "--set", "storage.capacity=64MiB", "--set", "system.design="+design)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stdout, "turn 0: export failed, nothing stored: store: an object of 98 regions (2097152 B each) is larger than the whole store of 32 regions", design)
		assert.NotContains(t, stdout, "export done", design)
	}
}

func TestExplainBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"explain"}, "--session: missing: give the session to follow (usage: simrun explain"}, // it blamed a --session -1 never given
		{[]string{"explain", "--session", "100000", "--set", "workload.sessions=5"}, "--session 100000: that session made no request in this scenario (5 chat sessions"},
		{[]string{"explain", "--session", "1", "--set", "fpga.hashing=md5"}, "key fpga.hashing"},
	} {
		code, _, stderr := simrun(c.args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Contains(t, stderr, c.want)
	}
}
