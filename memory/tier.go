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

// NewTierDevice builds the device of the tier called name from a preset
// of TierDeviceNames.
func NewTierDevice(eng *sim.Engine, name, preset string) (Device, error) {
	if f, ok := ssdPresets[preset]; ok {
		cfg := f()
		cfg.Name = name
		return NewSSD(eng, cfg)
	}
	if f, ok := dramPresets[preset]; ok {
		return FlatFromDRAM(eng, name, f())
	}
	return nil, fmt.Errorf("unknown tier device %q: valid devices are %s", preset, strings.Join(TierDeviceNames(), ", "))
}
