package memory

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

// tinySSD is a drive small enough to reason about by hand.
func tinySSD() SSDConfig {
	return SSDConfig{Name: "tiny", Host: PCIeLink(3, 4), CapacityBytes: 1 << 30, QueueDepthMax: 8, MaxIOBytes: 8192,
		ControllerCores: 1, CommandTime: sim.Microsecond, ReadOverhead: 2 * sim.Microsecond, WriteOverhead: 3 * sim.Microsecond,
		Channels: 2, DiesPerChannel: 1, PlanesPerDie: 1, PageBytes: 4096,
		ReadTime: 10 * sim.Microsecond, ProgramTime: 100 * sim.Microsecond, ChannelBandwidth: sim.GBps,
		WriteBufferBytes: 12288, WriteAmplification: 1, RatedDWPD: 1}
}

// page returns the drive's page-level model.
func (s *SSD) page() *pageDrive { return s.drive.(*pageDrive) }

func newTestSSD(t testing.TB, cfg SSDConfig) (*sim.Engine, *SSD, *completions) {
	eng := sim.NewEngine(0)
	s, err := NewSSD(eng, cfg)
	require.NoError(t, err)
	return eng, s, newCompletions(eng)
}

func TestSSDReadLatencyByStage(t *testing.T) {
	cfg := tinySSD()
	eng, s, c := newTestSSD(t, cfg)
	s.Access(Request{Addr: 0, Bytes: 4096, Done: c.done(1)})
	eng.Run()
	link := cfg.Host.linkConfig(cfg.Host.CardToHost)
	want := cfg.CommandTime + cfg.ReadTime + sim.GBps.TransferTime(4096) + cfg.ReadOverhead + link.WireTime(4096) + link.Latency
	assert.Equal(t, want, c.at[1])
	// 1 + 10 + 4.096 + 2 + 1.1375 + 0.45 us, and one ps more: Gen3 x4's
	// 3,938,461,538.46 B/s is held as a whole number of bytes per second, so
	// the 4,480 wire bytes take a hair over 1.1375 us and round up.
	assert.Equal(t, 18683501*sim.Picosecond, want)
}

func TestSSDPagesOnOneChannelSerialise(t *testing.T) {
	cfg := tinySSD()
	cfg.WriteBufferBytes, cfg.MaxIOBytes = 1<<20+4096, 1<<20 // one command
	eng, s, c := newTestSSD(t, cfg)
	// pages 0 and 2 share channel 0 and its plane; page 1 is on channel 1
	s.Access(Request{Addr: 0, Bytes: 3 * 4096, Done: c.done(1)})
	eng.Run()
	link := cfg.Host.linkConfig(cfg.Host.CardToHost)
	page0 := cfg.CommandTime + cfg.ReadTime + sim.GBps.TransferTime(4096)
	page2 := page0 + cfg.ReadTime // its plane is busy with page 0 until then
	want := page2 + sim.GBps.TransferTime(4096) - (page0 - cfg.CommandTime - cfg.ReadTime) + cfg.ReadOverhead + link.WireTime(3*4096) + link.Latency
	assert.Equal(t, want, c.at[1])
}

func TestSSDWriteBufferBackPressure(t *testing.T) {
	cfg := tinySSD()
	cfg.WriteBufferBytes, cfg.MaxIOBytes = 8192, 4096 // two pages
	eng, s, c := newTestSSD(t, cfg)
	for i := range 3 {
		s.Access(Request{Addr: int64(i) * 4096, Bytes: 4096, Write: true, Done: c.done(int64(i))})
	}
	eng.Run()
	assert.Less(t, c.at[1], 20*sim.Microsecond, "the second write fits the buffer and is acknowledged quickly")
	// the third waits until the first page is programmed: channel transfer
	// (4.096 us) then tPROG (100 us) after the first write's data arrived
	assert.Greater(t, c.at[2], 100*sim.Microsecond)
	st := s.Stats()
	assert.Equal(t, int64(3), st.Writes)
	assert.Equal(t, int64(3*4096), st.BytesWritten)
	assert.Equal(t, int64(3*4096), st.HostToCard.Bytes)
}

// TestSSDRefusesACommandAsLargeAsItsBuffer: a page partly filled stays in
// the write buffer until its page fills, so a command as large as the
// buffer waited behind it for ever and the run ran out of events with the
// write never acknowledged (a 1-byte write, then one of max_io_bytes, on a
// drive whose buffer held exactly one such command). Validate refuses it.
func TestSSDRefusesACommandAsLargeAsItsBuffer(t *testing.T) {
	cfg := tinySSD()
	cfg.WriteBufferBytes, cfg.MaxIOBytes = 8192, 8192
	assert.ErrorContains(t, cfg.Validate(), "max_io_bytes = 8192: must be in [4096, write_buffer_bytes 8192 less a 4096 B page]")
	cfg.WriteBufferBytes = 8192 + 4096
	assert.NoError(t, cfg.Validate())
}

func TestSSDQueueDepthLimit(t *testing.T) {
	cfg := tinySSD()
	cfg.QueueDepthMax = 1
	eng, s, c := newTestSSD(t, cfg)
	s.Access(Request{Addr: 0, Bytes: 4096, Done: c.done(1)})
	s.Access(Request{Addr: 4096, Bytes: 4096, Done: c.done(2)})
	eng.Run()
	assert.Equal(t, 2*c.at[1], c.at[2], "the second command starts when the first completes")
}

func TestSSDWriteAmplificationSlowsSustainedWrites(t *testing.T) {
	p := ioPattern{Write: true, Size: 128 << 10, Depth: 32, Count: 8000}
	cfg := KioxiaCM6()
	base, err := runSSD(cfg, p)
	require.NoError(t, err)
	cfg.WriteAmplification = 2
	amplified, err := runSSD(cfg, p)
	require.NoError(t, err)
	assert.InDelta(t, 2, base.GBps(p)/amplified.GBps(p), 0.1, "twice the NAND work, about half the rate")
}

func TestSSDConfigRejects(t *testing.T) {
	cases := []struct {
		mutate func(*SSDConfig)
		want   string
	}{
		{func(c *SSDConfig) { c.PageBytes = 12000 }, "page_bytes = 12000: must be a power of two"},
		{func(c *SSDConfig) { c.ChannelBandwidth = 0 }, "channel_bandwidth = 0"},
		{func(c *SSDConfig) { c.ChannelBandwidth = -5 }, "channel_bandwidth = -5"},
		{func(c *SSDConfig) { c.Channels = 0 }, "channels = 0"},
		{func(c *SSDConfig) { c.WriteAmplification = 0.5 }, "write_amplification = 0.5"},
		{func(c *SSDConfig) { c.RatedDWPD = 0 }, "rated_dwpd = 0"},
		{func(c *SSDConfig) { c.RatedDWPD = math.NaN() }, "rated_dwpd = NaN"},
		{func(c *SSDConfig) { c.WriteBufferBytes = 100 }, "write_buffer_bytes = 100"},
		{func(c *SSDConfig) { c.ReadTime = -1 }, "read_time = -1ps"},
		{func(c *SSDConfig) { c.CapacityBytes = 10 }, "capacity_bytes = 10"},
		{func(c *SSDConfig) { c.Host.Lanes = 3 }, "lanes = 3"},
	}
	for _, c := range cases {
		cfg := tinySSD()
		c.mutate(&cfg)
		_, err := NewSSD(sim.NewEngine(0), cfg)
		assert.ErrorContains(t, err, c.want)
	}
	_, err := SSDPreset("optane")
	assert.EqualError(t, err, `unknown SSD preset "optane": valid presets are kioxia-cm6, samsung-pm1743, smartssd-p2p`)
}

func TestPCIeRawRates(t *testing.T) {
	cases := []struct {
		gen, lanes int
		gbps       float64
	}{{3, 16, 15.753846}, {4, 4, 7.876923}, {5, 4, 15.753846}, {3, 1, 0.984615}}
	for _, c := range cases {
		assert.InDelta(t, c.gbps, PCIeLink(c.gen, c.lanes).RawBandwidth().GBps(), 1e-6, "gen%d x%d", c.gen, c.lanes)
	}
	cfg := PCIeLink(4, 16)
	eff := cfg.linkConfig(cfg.CardToHost).EffectiveBandwidth().GBps()
	assert.InDelta(t, 31.507692*256/280, eff, 1e-3, "256 B TLPs with 24 B of overhead")
	xdma := AlveoU55CXDMA()
	one := xdma.linkConfig(xdma.HostToCard).EffectiveBandwidth().GBps()
	xdma.Links = 4
	assert.InDelta(t, 4*one, xdma.linkConfig(xdma.HostToCard).EffectiveBandwidth().GBps(), 1e-6,
		"four striped links, each with its own DMA engine's descriptor costs")
}

func TestPCIeRejects(t *testing.T) {
	cases := []struct {
		mutate func(*PCIeConfig)
		want   string
	}{
		{func(c *PCIeConfig) { c.Generation = 2 }, "generation = 2"},
		{func(c *PCIeConfig) { c.Lanes = 0 }, "lanes = 0"},
		{func(c *PCIeConfig) { c.CardToHost.MaxPayloadBytes = 100 }, "card_to_host.max_payload_bytes = 100"},
		{func(c *PCIeConfig) { c.HostToCard.DescriptorBytes = 0 }, "host_to_card: descriptor_bytes = 0"},
		{func(c *PCIeConfig) { c.Latency = -1 }, "latency"},
		{func(c *PCIeConfig) { c.Links = 0 }, "links = 0: must be 1 to 16"},
		{func(c *PCIeConfig) { c.Links = 17 }, "links = 17"},
	}
	for _, c := range cases {
		cfg := PCIeLink(3, 16)
		c.mutate(&cfg)
		_, err := NewPCIe(sim.NewEngine(0), cfg)
		assert.ErrorContains(t, err, c.want)
	}
	_, err := PCIePreset("gen6x16")
	assert.ErrorContains(t, err, "valid presets are alveo-u55c-xdma, gen3x16, gen3x4")
}

func TestRemoteStoreAddsTheNetwork(t *testing.T) {
	cfg := tinySSD()
	eng, s, c := newTestSSD(t, cfg)
	local := sim.Time(18683501) // TestSSDReadLatencyByStage
	r, err := NewRemoteStore(eng, "rdma", s, 12_500_000_000, 3*sim.Microsecond)
	require.NoError(t, err)
	r.Access(Request{Addr: 0, Bytes: 4096, Done: c.done(1)})
	eng.Run()
	// request message (64 B) out, the drive, 4 KiB back; 3 us each way
	want := local + 2*3*sim.Microsecond + sim.Bandwidth(12_500_000_000).TransferTime(64) + sim.Bandwidth(12_500_000_000).TransferTime(4096)
	assert.Equal(t, want, c.at[1])
	out, in := r.Links()
	assert.Equal(t, int64(64), out.Bytes)
	assert.Equal(t, int64(4096), in.Bytes)
}

func TestSSDSplitsLongRequests(t *testing.T) {
	cfg := tinySSD() // 8 KiB commands, 8 KiB of write buffer
	eng, s, c := newTestSSD(t, cfg)
	s.Access(Request{Addr: 0, Bytes: 100_000, Write: true, Done: c.done(1)})
	s.Access(Request{Addr: 0, Bytes: 50_000, Done: c.done(2)})
	eng.Run()
	require.Len(t, c.at, 2, "a write longer than the buffer completes")
	st := s.Stats()
	assert.Equal(t, int64(13), st.Writes, "ceil(100000 / 8192) commands")
	assert.Equal(t, int64(7), st.Reads)
	assert.Equal(t, int64(100_000), st.BytesWritten)
}
