package memory

import (
	"fmt"
	"strings"

	"github.com/kvcosim/kvcosim/sim"
)

// TierDeviceNames lists the devices a storage tier can be: the SSD presets,
// and the DRAM presets (host DRAM, CXL-attached DDR5, HBM), which a tier
// models as flat memories at their measured stream rate and idle latency.
func TierDeviceNames() []string {
	return append(presetNames(ssdPresets), presetNames(dramPresets)...)
}

// NewTierDevice builds the device of the tier called name, which holds
// capacityBytes, from a preset of TierDeviceNames. An SSD's address space is
// the tier's capacity, as the one-tier form sizes its drive to the store:
// the preset gives the drive's timing, and a tier larger than the preset's
// drive is one drive of that timing and the tier's size, worked out at
// resolution res. A tier of DRAM is in the host's memory: it runs at
// dramLeftPPM parts per million of its rate, what other work on the host
// leaves it (cpu.background).
func NewTierDevice(eng *sim.Engine, name, preset string, capacityBytes int64, res SSDResolution, dramLeftPPM int64) (Device, error) {
	if f, ok := ssdPresets[preset]; ok {
		cfg := f()
		cfg.Name, cfg.CapacityBytes, cfg.Resolution = name, capacityBytes, res
		cfg.Host.Name = name + "." + cfg.Host.Name // two tiers of one preset: two links
		return NewSSD(eng, cfg)
	}
	if f, ok := dramPresets[preset]; ok {
		return FlatFromDRAMShare(eng, name, f(), dramLeftPPM)
	}
	return nil, fmt.Errorf("unknown tier device %q: valid devices are %s", preset, strings.Join(TierDeviceNames(), ", "))
}
