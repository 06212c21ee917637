package scenario

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

// TestCustomModelKVPerTokenFits: a custom model whose KV a token (layers x
// 2 x kv_heads x head_dim x bytes) passes 2^38 B is refused, naming the
// key; within the ranges of its keys the int64 product wrapped, to 0 or a
// negative size (refused late, naming no key) or to a small wrong one
// (2,303,037,504 B for 1.8e22 B), with which the run went on.
func TestCustomModelKVPerTokenFits(t *testing.T) {
	custom := func(layers, kvHeads, headDim string) []string {
		return []string{"model=custom", "accelerator.tp=1", "accelerator.kv_dtype=fp8", "accelerator.kv_block_tokens=1", "workload.sessions=2",
			"custom_model.layers=" + layers, "custom_model.heads=" + kvHeads, "custom_model.kv_heads=" + kvHeads,
			"custom_model.head_dim=" + headDim, "custom_model.hidden=64", "custom_model.intermediate=64", "custom_model.vocab=1000",
			"custom_model.params_b=0.001"}
	}
	for _, c := range []struct {
		name string
		sets []string
		want string
	}{
		{"wraps to 0", custom("16777216", "16777216", "16777216"), "key custom_model.layers: 16777216 layers x (281474976710656 + 281474976710656) KV width x 1 B = 9.445e+21 B of KV a token, more than the limit of 274877906943 B"},
		{"wraps negative", custom("8388608", "262144", "1048576"), "key custom_model.layers: 8388608 layers x (274877906944 + 274877906944) KV width x 1 B = 4.612e+18 B"},
		{"wraps to a small size", custom("13810510", "7222829", "92464"), "key custom_model.layers: 13810510 layers x (667851660656 + 667851660656) KV width x 1 B = 1.845e+19 B"},
		{"past the limit", custom("1024", "1024", "131072"), "key custom_model.layers: 1024 layers x (134217728 + 134217728) KV width x 1 B = 2.749e+11 B"},
		// within the limit, and more than accelerator.kv_capacity holds: its own check refuses it
		{"within the limit", custom("8192", "1024", "16383"), "key accelerator.kv_capacity: 40GB is less than one 1-token block of 274861129728 B"},
		{"a 70B's shape", custom("80", "8", "128"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := loadAndBuild(t, "", c.sets)
			if c.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, c.want)
		})
	}
}

// TestExportPastMaxTimeIsAnOverflow: the fpga design's export of a 2 TB
// object over two nodes' slowest network (0.125 MB/s) would end past
// sim.MaxTime; the run stops with an *Overflow naming the link. (Its
// transfer time wrapped to a negative one, and the link's lane panicked.)
func TestExportPastMaxTimeIsAnOverflow(t *testing.T) {
	l, err := Load(writeScenario(t, `model: custom
custom_model: {layers: 64, hidden: 64, heads: 64, kv_heads: 64, head_dim: 65536, intermediate: 64, vocab: 1000, params_b: 0.001, context_tokens: 0}
accelerator: {tp: 64, kv_capacity: auto}
system: {nodes: 2, network_gbps: 0.001}
storage: {capacity: 20TB}
workload: {sessions: 1, turns_mean: 1, first_prompt_median_tokens: 2000, first_prompt_p90_tokens: 2000, output_median_tokens: 1, output_p90_tokens: 1}
`), nil)
	require.NoError(t, err)
	r, err := Build(l)
	require.NoError(t, err)
	_, err = r.Execute()
	var o *sim.Overflow
	require.True(t, errors.As(err, &o), "an *sim.Overflow: %v", err)
	assert.Contains(t, o.What, "on link node0.network.to-pool")
}

// TestStorageLinkReadUtilisationOfManyNodes: the pool's read utilisation
// is its links' busy time over the run's, however many nodes share it.
// It was worked out as ReadBusy x nodes (then divided by the nodes again),
// a product past MaxTime once 1024 nodes read for 2.5 hours: here 12,730 s
// of reads came out as -0.31.
func TestStorageLinkReadUtilisationOfManyNodes(t *testing.T) {
	const text = `model: custom
custom_model: {layers: 2000, hidden: 1024, heads: 64, kv_heads: 64, head_dim: 1024, intermediate: 1024, vocab: 1000, params_b: 0.1, context_tokens: 0}
accelerator: {retain: "off", kv_capacity: auto, tp: 8}
storage:
  tiers: [{name: dram, device: ddr4-3200, capacity: 1PB}]
fpga: {region_mib: 16384}
workload: {sessions: 300, session_rate_per_s: 1, turns_mean: 4, first_prompt_median_tokens: 200, first_prompt_p90_tokens: 200, follow_up_median_tokens: 10, follow_up_p90_tokens: 10, output_median_tokens: 10, output_p90_tokens: 10}
`
	for _, c := range []struct {
		nodes  string
		lo, hi float64
	}{
		{"1", 0.7, 1},
		{"1024", 0.7, 1}, // the same reads, spread over the nodes
	} {
		t.Run(c.nodes+" nodes", func(t *testing.T) {
			l, err := Load(writeScenario(t, text), []string{"system.nodes=" + c.nodes})
			require.NoError(t, err)
			r, err := Build(l)
			require.NoError(t, err)
			res, err := r.Execute()
			require.NoError(t, err)
			u := res.Summary().Utilization["storage_link_read"]
			assert.True(t, u >= c.lo && u <= c.hi, "storage_link_read %v, want %v to %v", u, c.lo, c.hi)
		})
	}
}

// TestStoreServicePastMaxTimeIsAnOverflow: a CPU-run store's service time,
// its table accesses times cpu.host_access, is at most sim.MaxTime, and a
// run that needs more stops with an *Overflow. With two buckets and
// one-token blocks, the export of a 9,000-token prompt walks 2e7 links:
// at 1s each the product wrapped, to a negative service (the CPU panicked)
// or to a positive one far too short (2.7e6 s, 3e5 s for some 2e7 s) with
// which the run went on.
func TestStoreServicePastMaxTimeIsAnOverflow(t *testing.T) {
	for _, c := range []struct {
		name, system string
	}{
		{"wraps negative", "0"},
		{"wraps to 2.7e6 s", "1000"},
		{"wraps to 3e5 s", "4000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := Load("", []string{"system.design=cpu", "cpu.host_access=1s", "accelerator.max_model_len=20000",
				"fpga.hashing=block", "fpga.block_tokens=1", "accelerator.kv_block_tokens=1", "fpga.buckets=2", "workload.sessions=1", "workload.turns_mean=1",
				"workload.system_prompt_tokens=" + c.system, "workload.first_prompt_median_tokens=8192", "workload.first_prompt_p90_tokens=8192",
				"workload.output_median_tokens=1", "workload.output_p90_tokens=1"})
			require.NoError(t, err)
			r, err := Build(l)
			require.NoError(t, err)
			var o *sim.Overflow
			_, err = r.Execute()
			require.True(t, errors.As(err, &o), "an *sim.Overflow: %v", err)
			assert.Contains(t, o.Event, "*sim.Server")
		})
	}
}
