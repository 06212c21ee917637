package memory

import (
	"fmt"
	"math"
	"strings"

	"github.com/kvcosim/kvcosim/internal/names"
	"github.com/kvcosim/kvcosim/sim"
)

// SSDConfig describes an NVMe SSD: its host interface, controller, NAND
// array and DRAM write buffer.
type SSDConfig struct {
	Name string
	// Host is the PCIe link to the host (or to an FPGA, peer to peer).
	Host          PCIeConfig
	CapacityBytes int64
	// QueueDepthMax bounds the commands in flight; more wait in submission
	// order.
	QueueDepthMax int
	// MaxIOBytes is the largest command (NVMe MDTS): a longer request is
	// split into commands of this size, as the host driver does.
	MaxIOBytes int64
	// ControllerCores and CommandTime: each command occupies one core for
	// CommandTime (FTL lookup, DMA setup), which bounds small-I/O IOPS.
	ControllerCores int
	CommandTime     sim.Time
	// ReadOverhead is a read's fixed latency besides the controller, the
	// NAND and the links (ECC decoding, buffering).
	ReadOverhead sim.Time
	// WriteOverhead is the latency from a write's data arriving in the
	// buffer to its acknowledgement.
	WriteOverhead sim.Time
	// Channels x DiesPerChannel x PlanesPerDie independent NAND planes;
	// consecutive pages stripe over channels, then dies, then planes.
	Channels, DiesPerChannel, PlanesPerDie int
	// PageBytes is the NAND page, a power of two.
	PageBytes int64
	// ReadTime (tR) and ProgramTime (tPROG) are per page and plane.
	ReadTime, ProgramTime sim.Time
	// ChannelBandwidth is each NAND channel's transfer rate (ONFI/Toggle).
	ChannelBandwidth sim.Bandwidth
	// WriteBufferBytes of DRAM acknowledge writes until it is full; a write
	// then waits for programs to free space.
	WriteBufferBytes int64
	// WriteAmplification multiplies the NAND work of every written page
	// (garbage collection); 1 for sequential writes to a fresh drive.
	WriteAmplification float64
	// RatedDWPD is the drive writes per day the maker warrants for the
	// warranty period (docs/memory.md gives each preset's source): write
	// through export rewrites a session's object every turn, so a study
	// holds its write rate against this.
	RatedDWPD float64
	// SmallIOBytes and SmallIOLatency: I/Os of at most SmallIOBytes take at
	// least SmallIOLatency (a measured floor of some P2P paths); 0 = none.
	SmallIOBytes   int64
	SmallIOLatency sim.Time
	// EventByEvent turns off the closed-form paths of writes and of reads
	// that find the drive idle (ssd_fast.go, ssd_readrun.go): every command
	// then goes event by event. The results are the same; it is there to
	// check that they are.
	EventByEvent bool
	// Resolution is how finely the drive is worked out: ResolutionPage
	// (the default) command by command and page by page, ResolutionRequest
	// a request at once from the drive's rates (ssd_flow.go), within the
	// bound docs/memory.md states.
	Resolution SSDResolution
}

// SSDResolution is a resolution of the drive model.
type SSDResolution int

// The resolutions of the drive model.
const (
	ResolutionPage SSDResolution = iota
	ResolutionRequest
)

// SSDResolutions names the resolutions (storage.resolution).
var SSDResolutions = names.New("drive resolution", map[SSDResolution]string{
	ResolutionPage:    "page",
	ResolutionRequest: "request",
})

// Validate checks the configuration; errors name the parameter and range.
func (c SSDConfig) Validate() error {
	if err := c.Host.Validate(); err != nil {
		return fmt.Errorf("ssd %q: host: %w", c.Name, err)
	}
	ints := []struct {
		name   string
		v, max int
	}{{"queue_depth_max", c.QueueDepthMax, 65536}, {"controller_cores", c.ControllerCores, 1024},
		{"channels", c.Channels, 256}, {"dies_per_channel", c.DiesPerChannel, 256}, {"planes_per_die", c.PlanesPerDie, 16}}
	for _, p := range ints {
		if p.v < 1 || p.v > p.max {
			return fmt.Errorf("ssd %q: %s = %d: must be in [1, %d]", c.Name, p.name, p.v, p.max)
		}
	}
	if c.PageBytes < 512 || c.PageBytes > 1<<20 || c.PageBytes&(c.PageBytes-1) != 0 {
		return fmt.Errorf("ssd %q: page_bytes = %d: must be a power of two in [512, 1048576]", c.Name, c.PageBytes)
	}
	if c.CapacityBytes < c.PageBytes {
		return fmt.Errorf("ssd %q: capacity_bytes = %d: must hold at least one page", c.Name, c.CapacityBytes)
	}
	if c.ChannelBandwidth <= 0 {
		return fmt.Errorf("ssd %q: channel_bandwidth = %d B/s: must be positive", c.Name, c.ChannelBandwidth)
	}
	if c.WriteBufferBytes < c.PageBytes {
		return fmt.Errorf("ssd %q: write_buffer_bytes = %d: must hold at least one %d B page", c.Name, c.WriteBufferBytes, c.PageBytes)
	}
	if c.MaxIOBytes < 4096 || c.MaxIOBytes > c.WriteBufferBytes-c.PageBytes {
		// a page partly filled stays in the buffer until its page fills: a
		// command as large as the buffer would wait behind it for ever
		return fmt.Errorf("ssd %q: max_io_bytes = %d: must be in [4096, write_buffer_bytes %d less a %d B page]", c.Name, c.MaxIOBytes, c.WriteBufferBytes, c.PageBytes)
	}
	if !(c.WriteAmplification >= 1) || math.IsInf(c.WriteAmplification, 0) {
		return fmt.Errorf("ssd %q: write_amplification = %v: must be at least 1", c.Name, c.WriteAmplification)
	}
	for _, d := range []struct {
		name string
		v    sim.Time
	}{{"command_time", c.CommandTime}, {"read_overhead", c.ReadOverhead}, {"write_overhead", c.WriteOverhead},
		{"read_time", c.ReadTime}, {"program_time", c.ProgramTime}, {"small_io_latency", c.SmallIOLatency}} {
		if d.v < 0 {
			return fmt.Errorf("ssd %q: %s = %v: must not be negative", c.Name, d.name, d.v)
		}
	}
	if c.SmallIOBytes < 0 {
		return fmt.Errorf("ssd %q: small_io_bytes = %d: must not be negative", c.Name, c.SmallIOBytes)
	}
	if c.Resolution != ResolutionPage && c.Resolution != ResolutionRequest {
		return fmt.Errorf("ssd %q: resolution = %s: must be one of %s", c.Name, SSDResolutions.Name(c.Resolution), strings.Join(SSDResolutions.Names(), ", "))
	}
	if !(c.RatedDWPD > 0 && c.RatedDWPD <= 100) {
		return fmt.Errorf("ssd %q: rated_dwpd = %v: must be in (0, 100]", c.Name, c.RatedDWPD)
	}
	return nil
}

// Planes returns the number of independent NAND planes.
func (c SSDConfig) Planes() int { return c.Channels * c.DiesPerChannel * c.PlanesPerDie }

// KioxiaCM6 is a Kioxia CM6-class 3.84 TB drive on PCIe Gen4 x4: rated
// 6.9 / 4.2 GB/s sequential read / write, 1.4 M / 170 K 4 KiB random IOPS,
// 90 us / 20 us QD1 read / write latency (Kioxia CM6 product brief). NAND:
// 18 channels, 16 KiB pages, tR 60 us, tPROG 1.9 ms, as the issue states;
// 7 dies per channel x 4 planes (126 dies of 256 Gb TLC hold 3.84 TB).
// ControllerCores x CommandTime is fitted to the random-read IOPS, the read
// overhead to the QD1 latency.
func KioxiaCM6() SSDConfig {
	return SSDConfig{Name: "kioxia-cm6", Host: nvmeHostInterface(4), CapacityBytes: 3_840_000_000_000,
		QueueDepthMax: 1024, MaxIOBytes: 1 << 20, ControllerCores: 4, CommandTime: 2800 * sim.Nanosecond,
		ReadOverhead: 21 * sim.Microsecond, WriteOverhead: 16 * sim.Microsecond,
		Channels: 18, DiesPerChannel: 7, PlanesPerDie: 4, PageBytes: 16384,
		ReadTime: 60 * sim.Microsecond, ProgramTime: 1900 * sim.Microsecond,
		ChannelBandwidth: 800_000_000, WriteBufferBytes: 256 << 20, WriteAmplification: 1, RatedDWPD: 1}
}

// SamsungPM1743 is a Samsung PM1743-class 15.36 TB drive on PCIe Gen5 x4:
// rated 13 / 6.6 GB/s sequential read / write and 2.5 M / 250 K 4 KiB random
// IOPS (Samsung announcement, Dec 2021). Its brief gives no QD1 latency; the
// NAND (128-layer TLC) is taken as CM6-class with 16 faster channels.
func SamsungPM1743() SSDConfig {
	return SSDConfig{Name: "samsung-pm1743", Host: nvmeHostInterface(5), CapacityBytes: 15_360_000_000_000,
		QueueDepthMax: 1024, MaxIOBytes: 1 << 20, ControllerCores: 8, CommandTime: 3200 * sim.Nanosecond,
		ReadOverhead: 33500 * sim.Nanosecond, WriteOverhead: 14 * sim.Microsecond,
		Channels: 16, DiesPerChannel: 16, PlanesPerDie: 4, PageBytes: 16384,
		ReadTime: 50 * sim.Microsecond, ProgramTime: 2500 * sim.Microsecond,
		ChannelBandwidth: 1_600_000_000, WriteBufferBytes: 512 << 20, WriteAmplification: 1, RatedDWPD: 1}
}

// SmartSSDP2P is the peer-to-peer path of a SmartSSD-class drive (a Gen3 x4
// enterprise SSD behind the FPGA's PCIe switch), as measured from the FPGA:
// an I/O of at most 4 KiB takes 82 us, a larger one 50 us + size / 2.36 GB/s.
// The link's per-4 KiB overhead is fitted to the 2.36 GB/s rate and the
// read overhead to the 50 us base.
func SmartSSDP2P() SSDConfig {
	host := PCIeLink(3, 4)
	host.Name = "smartssd-p2p"
	d := plainDirection()
	d.DescriptorOverhead = 598 * sim.Nanosecond
	host.HostToCard, host.CardToHost = d, d
	return SSDConfig{Name: "smartssd-p2p", Host: host, CapacityBytes: 3_840_000_000_000,
		QueueDepthMax: 1024, MaxIOBytes: 1 << 20, ControllerCores: 4, CommandTime: 2 * sim.Microsecond,
		ReadOverhead: 6 * sim.Microsecond, WriteOverhead: 46 * sim.Microsecond,
		Channels: 16, DiesPerChannel: 8, PlanesPerDie: 4, PageBytes: 16384,
		ReadTime: 40 * sim.Microsecond, ProgramTime: 1500 * sim.Microsecond,
		ChannelBandwidth: 800_000_000, WriteBufferBytes: 256 << 20, WriteAmplification: 1, RatedDWPD: 1,
		SmallIOBytes: 4096, SmallIOLatency: 82 * sim.Microsecond}
}

var ssdPresets = map[string]func() SSDConfig{
	"kioxia-cm6": KioxiaCM6, "samsung-pm1743": SamsungPM1743, "smartssd-p2p": SmartSSDP2P,
}

// SSDPreset returns the named preset; an unknown name is an error that lists
// the valid ones.
func SSDPreset(name string) (SSDConfig, error) {
	if f, ok := ssdPresets[name]; ok {
		return f(), nil
	}
	return SSDConfig{}, fmt.Errorf("unknown SSD preset %q: valid presets are %s", name, strings.Join(presetNames(ssdPresets), ", "))
}
