// Package memory models the data-movement parts of kvcosim: cycle-level
// DRAM (DDR4, DDR5, HBM2, HBM3), host memory, PCIe links with a DMA engine,
// NVMe SSDs, and a functional byte store that keeps real bytes for
// functional mode. It knows no FPGA and no accelerator.
package memory

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kvcosim/kvcosim/sim"
)

// DRAMTiming holds a DRAM's timing parameters in its own clock cycles (tCK),
// named as in JEDEC and Ramulator2. BurstBeats is the burst length in data
// beats; a burst occupies the data bus for BurstBeats/2 cycles (double data
// rate).
type DRAMTiming struct {
	NCL, NCWL, NRCD, NRP, NRAS, NRC      sim.Cycles
	BurstBeats                           sim.Cycles
	NCCDS, NCCDL, NRRDS, NRRDL, NFAW     sim.Cycles
	NWR, NWTRS, NWTRL, NRTP, NREFI, NRFC sim.Cycles
	// NRTRS is the data-bus turnaround between ranks or between a read and
	// a write.
	NRTRS sim.Cycles
}

// burstCycles is the data-bus occupancy of one burst.
func (t DRAMTiming) burstCycles() sim.Cycles { return t.BurstBeats / 2 }

// Validate checks each value and the relations JEDEC requires between them.
func (t DRAMTiming) Validate() error {
	named := []struct {
		name string
		v    sim.Cycles
	}{{"nCL", t.NCL}, {"nCWL", t.NCWL}, {"nRCD", t.NRCD}, {"nRP", t.NRP}, {"nRAS", t.NRAS}, {"nRC", t.NRC},
		{"burst_beats", t.BurstBeats}, {"nCCD_S", t.NCCDS}, {"nCCD_L", t.NCCDL}, {"nRRD_S", t.NRRDS},
		{"nRRD_L", t.NRRDL}, {"nFAW", t.NFAW}, {"nWR", t.NWR}, {"nWTR_S", t.NWTRS}, {"nWTR_L", t.NWTRL},
		{"nRTP", t.NRTP}, {"nREFI", t.NREFI}, {"nRFC", t.NRFC}}
	for _, p := range named {
		if p.v < 1 || p.v > 1_000_000 {
			return fmt.Errorf("DRAM timing %s = %d cycles: must be in [1, 1000000]", p.name, p.v)
		}
	}
	switch {
	case t.NRTRS < 0:
		return fmt.Errorf("DRAM timing nRTRS = %d cycles: must not be negative", t.NRTRS)
	case t.BurstBeats%2 != 0:
		return fmt.Errorf("DRAM timing burst_beats = %d: must be even (two beats per cycle)", t.BurstBeats)
	case t.NRAS < t.NRCD:
		return fmt.Errorf("DRAM timing nRAS = %d < nRCD = %d: a row must stay open until it can be read", t.NRAS, t.NRCD)
	case t.NRC < t.NRAS+t.NRP:
		return fmt.Errorf("DRAM timing nRC = %d < nRAS + nRP = %d", t.NRC, t.NRAS+t.NRP)
	case t.NCCDL < t.NCCDS:
		return fmt.Errorf("DRAM timing nCCD_L = %d < nCCD_S = %d", t.NCCDL, t.NCCDS)
	case t.NRRDL < t.NRRDS:
		return fmt.Errorf("DRAM timing nRRD_L = %d < nRRD_S = %d", t.NRRDL, t.NRRDS)
	case t.NREFI <= t.NRFC:
		return fmt.Errorf("DRAM timing nREFI = %d <= nRFC = %d: the device would never be available", t.NREFI, t.NRFC)
	}
	return nil
}

// DRAMConfig describes a DRAM device: its organisation, clock, timing,
// address mapping and controller.
type DRAMConfig struct {
	Name string
	// ClockHz is the DRAM command clock (tCK = 1/ClockHz).
	ClockHz       int64
	Channels      int
	Ranks         int
	BankGroups    int
	BanksPerGroup int
	Rows          int
	// RowBytes is the size of one row of a rank across the channel's width.
	RowBytes int64
	// BusWidthBytes is the channel's data-bus width.
	BusWidthBytes int64
	// Mapping lists the address fields from the most to the least
	// significant, separated by colons; below them is the offset within a
	// burst. Fields: row, bank, bankgroup, rank, column, channel. If
	// bankgroup is absent, its bits are the high part of bank.
	Mapping string
	// QueueDepth bounds each channel's FR-FCFS request queue, in bursts.
	QueueDepth int
	// ControllerCycles is the controller's fixed front-end latency.
	ControllerCycles sim.Cycles
	// BulkMinBytes is the size from which a transfer takes the bulk path;
	// 0 disables it.
	BulkMinBytes int64
	// ExtraLatency is a fixed latency outside the controller (on-chip
	// network and caches of a CPU) added to every access.
	ExtraLatency sim.Time
	Timing       DRAMTiming
}

// DefaultDRAMMapping is the address mapping used when Mapping is empty
// (Ramulator2's RoBaRaCoCh).
const DefaultDRAMMapping = "row:bank:rank:column:channel"

// BurstBytes is the data moved by one burst.
func (c DRAMConfig) BurstBytes() int64 { return c.BusWidthBytes * int64(c.Timing.BurstBeats) }

// PeakBandwidth is the channels' combined data-bus rate.
func (c DRAMConfig) PeakBandwidth() sim.Bandwidth {
	return sim.Bandwidth(int64(c.Channels) * c.BusWidthBytes * 2 * c.ClockHz)
}

// CapacityBytes is the device's total size.
func (c DRAMConfig) CapacityBytes() int64 {
	return int64(c.Channels) * int64(c.Ranks) * int64(c.BankGroups) * int64(c.BanksPerGroup) * int64(c.Rows) * c.RowBytes
}

// Validate checks the configuration; errors name the parameter, its unit
// and the allowed range.
func (c DRAMConfig) Validate() error {
	if c.ClockHz <= 0 {
		return fmt.Errorf("dram %q: clock_hz = %d: must be positive", c.Name, c.ClockHz)
	}
	counts := []struct {
		name string
		v    int
	}{{"channels", c.Channels}, {"ranks", c.Ranks}, {"bank_groups", c.BankGroups},
		{"banks_per_group", c.BanksPerGroup}, {"rows", c.Rows}}
	for _, p := range counts {
		if p.v < 1 || p.v > 1<<24 {
			return fmt.Errorf("dram %q: %s = %d: must be in [1, 16777216]", c.Name, p.name, p.v)
		}
	}
	if c.BusWidthBytes < 1 || c.BusWidthBytes&(c.BusWidthBytes-1) != 0 {
		return fmt.Errorf("dram %q: bus_width_bytes = %d: must be a power of two >= 1", c.Name, c.BusWidthBytes)
	}
	if err := c.Timing.Validate(); err != nil {
		return fmt.Errorf("dram %q: %w", c.Name, err)
	}
	burst := c.BurstBytes()
	if c.RowBytes < burst || c.RowBytes%burst != 0 {
		return fmt.Errorf("dram %q: row_bytes = %d: must be a multiple of the %d B burst", c.Name, c.RowBytes, burst)
	}
	if c.QueueDepth < 1 || c.QueueDepth > 4096 {
		return fmt.Errorf("dram %q: queue_depth = %d bursts: must be in [1, 4096]", c.Name, c.QueueDepth)
	}
	if c.ControllerCycles < 0 || c.BulkMinBytes < 0 || c.ExtraLatency < 0 {
		return fmt.Errorf("dram %q: controller_cycles, bulk_min_bytes and extra_latency must not be negative", c.Name)
	}
	_, err := parseMapping(c.mapping(), c)
	return err
}

func (c DRAMConfig) mapping() string {
	if c.Mapping == "" {
		return DefaultDRAMMapping
	}
	return c.Mapping
}

// ddrBankGroupMapping interleaves bank groups between consecutive bursts,
// as server memory controllers do, so that a sequential stream alternates
// bank groups and is bound by nCCD_S rather than nCCD_L.
const ddrBankGroupMapping = "row:bank:rank:column:bankgroup:channel"

// DDR4_3200 is one channel of DDR4-3200 with Ramulator2's DDR4_3200AA
// speed bin (22-22-22, tCK 625 ps) and a 2-rank DIMM of 8 Gb x8 devices.
func DDR4_3200() DRAMConfig {
	return DRAMConfig{Name: "ddr4-3200", ClockHz: 1_600_000_000, Channels: 1, Ranks: 2, BankGroups: 4,
		BanksPerGroup: 4, Rows: 65536, RowBytes: 8192, BusWidthBytes: 8, Mapping: ddrBankGroupMapping,
		QueueDepth: 32, ControllerCycles: 0, BulkMinBytes: 64 << 10,
		Timing: DRAMTiming{NCL: 22, NCWL: 16, NRCD: 22, NRP: 22, NRAS: 52, NRC: 74, BurstBeats: 8,
			NCCDS: 4, NCCDL: 8, NRRDS: 4, NRRDL: 8, NFAW: 34, NWR: 24, NWTRS: 4, NWTRL: 12, NRTP: 12,
			NREFI: 12480, NRFC: 560, NRTRS: 2}}
}

// DDR5_4800 is one 32-bit sub-channel of DDR5-4800B (40-39-39, JEDEC
// JESD79-5) with 16 Gb x8 devices, one rank, BL16.
func DDR5_4800() DRAMConfig {
	return DRAMConfig{Name: "ddr5-4800", ClockHz: 2_400_000_000, Channels: 1, Ranks: 1, BankGroups: 8,
		BanksPerGroup: 4, Rows: 65536, RowBytes: 4096, BusWidthBytes: 4, Mapping: ddrBankGroupMapping,
		QueueDepth: 32, BulkMinBytes: 64 << 10,
		Timing: DRAMTiming{NCL: 40, NCWL: 38, NRCD: 39, NRP: 39, NRAS: 77, NRC: 116, BurstBeats: 16,
			NCCDS: 8, NCCDL: 12, NRRDS: 8, NRRDL: 12, NFAW: 32, NWR: 72, NWTRS: 6, NWTRL: 24, NRTP: 18,
			NREFI: 9360, NRFC: 708, NRTRS: 2}}
}

// HBM2_U55C is the HBM2 of an Alveo U55C: 32 pseudo-channels of 64 bits at
// 898.4375 MHz (14.375 GB/s each, 460 GB/s in all, AMD UG1393), with the
// array timings of Ramulator2's HBM2 preset (in ns) at this clock.
func HBM2_U55C() DRAMConfig {
	return DRAMConfig{Name: "hbm2-u55c", ClockHz: 898_437_500, Channels: 32, Ranks: 1, BankGroups: 4,
		BanksPerGroup: 4, Rows: 32768, RowBytes: 1024, BusWidthBytes: 8, QueueDepth: 32, BulkMinBytes: 64 << 10,
		Timing: DRAMTiming{NCL: 7, NCWL: 2, NRCD: 7, NRP: 7, NRAS: 17, NRC: 24, BurstBeats: 4,
			NCCDS: 2, NCCDL: 2, NRRDS: 2, NRRDL: 3, NFAW: 14, NWR: 8, NWTRS: 3, NWTRL: 4, NRTP: 3,
			NREFI: 3504, NRFC: 315, NRTRS: 1}}
}

// HBM3_H100 is the HBM3 of an H100 SXM: 5 stacks x 32 pseudo-channels of 32
// bits at 2.6171875 GHz, 3.35 TB/s in all (NVIDIA H100 datasheet), with
// Ramulator2's HBM3 array timings (in ns) at this clock.
func HBM3_H100() DRAMConfig {
	return DRAMConfig{Name: "hbm3-h100", ClockHz: 2_617_187_500, Channels: 160, Ranks: 1, BankGroups: 4,
		BanksPerGroup: 4, Rows: 32768, RowBytes: 1024, BusWidthBytes: 4, Mapping: ddrBankGroupMapping,
		QueueDepth: 32, BulkMinBytes: 64 << 10,
		Timing: DRAMTiming{NCL: 19, NCWL: 6, NRCD: 19, NRP: 19, NRAS: 45, NRC: 64, BurstBeats: 8,
			NCCDS: 4, NCCDL: 6, NRRDS: 6, NRRDL: 8, NFAW: 40, NWR: 21, NWTRS: 8, NWTRL: 11, NRTP: 8,
			NREFI: 10207, NRFC: 916, NRTRS: 2}}
}

var dramPresets = map[string]func() DRAMConfig{
	"ddr4-3200": DDR4_3200, "ddr5-4800": DDR5_4800, "hbm2-u55c": HBM2_U55C, "hbm3-h100": HBM3_H100,
	"host-ddr4x8": HostMemoryConfig,
}

// DRAMPreset returns the named preset; an unknown name is an error that lists
// the valid ones.
func DRAMPreset(name string) (DRAMConfig, error) {
	if f, ok := dramPresets[name]; ok {
		return f(), nil
	}
	return DRAMConfig{}, fmt.Errorf("unknown DRAM preset %q: valid presets are %s", name, strings.Join(presetNames(dramPresets), ", "))
}

func presetNames[T any](m map[string]T) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
