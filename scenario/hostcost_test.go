package scenario

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The host's bytes are the bytes each design's path moves through host
// memory: the cpu design stages every byte it offloads from the
// accelerator or reads from the drives (written into host memory) and
// every byte it writes to the drives (read from it); the fpga design's
// host memory holds only the tables and token arrays the card reaches
// across its PCIe link; lmcache adds its host-DRAM tier's traffic.
func TestHostBytesAreThePathsBytesThroughHostMemory(t *testing.T) {
	cpu, _ := run(t, "system.design=cpu", "workload.sessions=40", "accelerator.kv_capacity=6GB")
	b := cpu.Bytes
	require.Positive(t, b["storage_read"])
	assert.Equal(t, b["gpu_pcie_d2h"]+b["storage_read"], cpu.Host.DRAMWriteBytes)
	assert.Equal(t, b["storage_write"], cpu.Host.DRAMReadBytes)
	assert.Equal(t, b["gpu_pcie_h2d"]+b["gpu_pcie_d2h"]+b["storage_read"]+b["storage_write"], cpu.Host.PCIeRootBytes)

	card, _ := run(t, "system.design=fpga", "workload.sessions=40", "accelerator.kv_capacity=6GB")
	b = card.Bytes
	require.Positive(t, b["p2p_to_gpu"])
	assert.Equal(t, b["fpga_pcie_h2c"], card.Host.DRAMReadBytes, "the card reads host memory only across its link")
	assert.LessOrEqual(t, card.Host.DRAMWriteBytes, b["fpga_pcie_c2h"])
	assert.Equal(t, b["fpga_pcie_h2c"]+b["fpga_pcie_c2h"], card.Host.PCIeRootBytes, "the drives and the accelerator are the card's peers")

	lm, _ := run(t, "system.design=lmcache", "workload.sessions=40", "accelerator.kv_capacity=6GB")
	b, dram := lm.Bytes, lm.Tiers[0]
	require.Equal(t, "host-ddr4x8", dram.Device)
	assert.Equal(t, b["host_memory_read"]+dram.BytesRead, lm.Host.DRAMReadBytes)
	assert.Equal(t, b["host_memory_write"]+dram.BytesWritten, lm.Host.DRAMWriteBytes)
}

// The card does the hashing, the lookups and the storage access: the cpu
// design's host spends far more core-seconds on the store than the fpga
// design's, and both have energy and a cost per output token.
func TestTheCardSavesTheHostsCores(t *testing.T) {
	cpu, _ := run(t, "system.design=cpu", "workload.sessions=40", "accelerator.kv_capacity=6GB")
	card, _ := run(t, "system.design=fpga", "workload.sessions=40", "accelerator.kv_capacity=6GB")
	assert.Greater(t, cpu.Host.CPUCoreS, 100*card.Host.CPUCoreS)
	assert.Positive(t, card.Host.CPUCoreS, "the host still hands each query and export to the card")
	for _, s := range []*struct {
		name string
		sum  float64
		by   map[string]float64
	}{{"cpu", cpu.Host.CPUCoreS, cpu.Host.CPUCoreSBy}, {"fpga", card.Host.CPUCoreS, card.Host.CPUCoreSBy}} {
		assert.InDelta(t, s.sum, total(s.by), 1e-9*s.sum, s.name)
	}
	for _, s := range []struct {
		name    string
		j, perT float64
		usd     float64
		by      map[string]float64
	}{{"cpu", cpu.Energy.Joules, cpu.Energy.JoulesPerOutputToken, cpu.Cost.USDPerMillionOutputTokens, cpu.Energy.JoulesBy},
		{"fpga", card.Energy.Joules, card.Energy.JoulesPerOutputToken, card.Cost.USDPerMillionOutputTokens, card.Energy.JoulesBy}} {
		assert.Positive(t, s.perT, s.name)
		assert.Positive(t, s.usd, s.name)
		assert.InDelta(t, s.j, total(s.by), 1e-9*s.j, s.name)
	}
	assert.Positive(t, card.Energy.JoulesBy["fpga"])
	assert.NotContains(t, cpu.Energy.JoulesBy, "fpga")
}

// total adds up a figure's parts.
func total(parts map[string]float64) float64 {
	sum := 0.0
	for _, v := range parts {
		sum += v
	}
	return sum
}

// A busy host slows the designs that work through it; the card's path
// slows only through its own (small) use of host memory.
func TestABusyHostSlowsTheHostsPathNotTheCards(t *testing.T) {
	resumed := func(sets ...string) float64 {
		s, _ := run(t, append(sets, "workload.sessions=40", "accelerator.kv_capacity=6GB")...)
		return s.ResumedTTFTms.Mean
	}
	cpuIdle, cpuBusy := resumed("system.design=cpu"), resumed("system.design=cpu", "cpu.background=0.95")
	cardIdle, cardBusy := resumed("system.design=fpga"), resumed("system.design=fpga", "cpu.background=0.95")
	assert.Greater(t, cpuBusy, 1.05*cpuIdle)
	assert.InDelta(t, cardIdle, cardBusy, 0.02*cardIdle)
}

// Out-of-range host, power and cost figures are refused naming the key
// and its range.
func TestHostCostInputsAreRangeChecked(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{"cpu.background=0.96", "key cpu.background: 0.96 is out of range (allowed: 0 to 0.95)"},
		{"cpu.background=-0.1", "key cpu.background: -0.1 is out of range (allowed: 0 to 0.95)"},
		{"cpu.cores=0", "key cpu.cores: 0 is out of range (allowed: 1 to 4096)"},
		{"cpu.copy_gbps=0", "key cpu.copy_gbps: 0 is out of range (allowed: 0.1 to 1000)"},
		{"cpu.io_submit=2s", "key cpu.io_submit: 2s is more than the limit of 1s"},
		{"power.accelerator_idle_w=800", "key power.accelerator_idle_w: 800 is out of range (allowed: 0 to 700)"},
		{"power.drive_active_w=-1", "key power.drive_active_w: -1 is out of range (allowed: 0 to 100)"},
		{"power.link_pj_per_bit=1e6", "key power.link_pj_per_bit: 1e+06 is out of range (allowed: 0 to 1000)"},
		{"cost.amortization_years=0", "key cost.amortization_years: 0 is out of range (allowed: 0.1 to 30)"},
		{"cost.fpga_usd=-5", "key cost.fpga_usd: -5 is out of range (allowed: 0 to 1e+06)"},
	} {
		_, err := Load("", []string{c.set})
		require.Error(t, err, c.set)
		assert.Contains(t, err.Error(), c.want)
	}
	_, err := Load("", []string{"cpu.host_memory_model=cycle", "cpu.background=0.5"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "key cpu.background: 0.5 needs cpu.host_memory_model: flat")
}
