package hostcpu

import (
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/kvcosim/kvcosim/internal/golden"
	"github.com/kvcosim/kvcosim/sim"
)

func validConfig() Config {
	fpga, _ := store.ParseDesign("fpga")
	return Config{Design: fpga, CPUCores: 4, RequestOverhead: sim.Microsecond, CPUHashBandwidth: sim.GBps,
		MaxBatch: 8, TokenBudget: 512, KVBytesPerToken: 100, BlockTokens: 16, TruncateFillPermille: 1000}
}

func TestConfigRejects(t *testing.T) {
	require.NoError(t, validConfig().Validate())
	cases := []struct {
		mutate func(*Config)
		want   string
	}{
		{func(c *Config) { c.MigrateFraction = 1.5 }, "migrate_fraction = 1.5"},
		{func(c *Config) { c.CPUCores = 0 }, "cpu.cores = 0"},
		{func(c *Config) { c.CPUHashBandwidth = 0 }, "hash_gbps"},
		{func(c *Config) { c.MaxBatch = 0 }, "max_batch = 0"},
		{func(c *Config) { c.RequestOverhead = -1 }, "must not be negative"},
	}
	for _, c := range cases {
		cfg := validConfig()
		c.mutate(&cfg)
		assert.ErrorContains(t, cfg.Validate(), c.want)
	}
}
