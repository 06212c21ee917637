package memory

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

// completions records when each request finished, by the Arg of its Done.
type completions struct {
	eng *sim.Engine
	at  map[int64]sim.Time
}

func newCompletions(eng *sim.Engine) *completions {
	return &completions{eng: eng, at: map[int64]sim.Time{}}
}

func (c *completions) Handle(ev sim.Event) { c.at[ev.Arg] = c.eng.Now() }

func (c *completions) done(id int64) sim.Event { return sim.Event{Handler: c, Arg: id} }

func newTestDRAM(t testing.TB, cfg DRAMConfig) (*sim.Engine, *DRAM) {
	eng := sim.NewEngine(0)
	d, err := NewDRAM(eng, cfg)
	require.NoError(t, err)
	return eng, d
}

func TestDRAMIdleReadLatency(t *testing.T) {
	for _, name := range []string{"ddr4-3200", "ddr5-4800", "hbm2-u55c", "hbm3-h100"} {
		for _, ctrl := range []sim.Cycles{0, 5} {
			cfg, err := DRAMPreset(name)
			require.NoError(t, err)
			cfg.ControllerCycles = ctrl
			eng, d := newTestDRAM(t, cfg)
			c := newCompletions(eng)
			d.Access(Request{Addr: 4096, Bytes: cfg.BurstBytes(), Done: c.done(1)})
			eng.Run()
			tm := cfg.Timing
			want := d.Clock().Edge(ctrl + tm.NRCD + tm.NCL + tm.burstCycles())
			assert.Equal(t, want, c.at[1], "%s with %d controller cycles: nRCD + nCL + nBL/2", name, ctrl)
		}
	}
}

// streamRate reads size bytes sequentially in one request and returns the
// achieved bandwidth in GB/s.
func streamRate(t testing.TB, cfg DRAMConfig, size int64, write bool) float64 {
	eng, d := newTestDRAM(t, cfg)
	c := newCompletions(eng)
	d.Access(Request{Addr: 0, Bytes: size, Write: write, Done: c.done(1)})
	eng.Run()
	return float64(size) / c.at[1].Seconds() / 1e9
}

func TestDRAMSequentialStreamingDDR4(t *testing.T) {
	size := int64(16 << 20)
	if testing.Short() {
		size = 2 << 20
	}
	for _, bulk := range []bool{false, true} {
		for _, write := range []bool{false, true} {
			cfg := DDR4_3200()
			if !bulk {
				cfg.BulkMinBytes = 0
			}
			got := streamRate(t, cfg, size, write)
			assert.GreaterOrEqual(t, got, 0.9*25.6, "bulk=%v write=%v: %.2f GB/s", bulk, write, got)
			assert.LessOrEqual(t, got, 25.6)
		}
	}
}

// TestDRAMRandomReadRate checks that random 64 B reads with many requests
// outstanding reach the activation rate the timing allows: each read opens
// a row, and one rank allows at most one ACT per nRRD_S, four per nFAW and
// one per nRC per bank, and one burst per nBL/2 on the data bus.
func TestDRAMRandomReadRate(t *testing.T) {
	for _, name := range []string{"ddr4-3200", "ddr5-4800"} {
		cfg, err := DRAMPreset(name)
		require.NoError(t, err)
		cfg.Ranks, cfg.QueueDepth = 1, 64
		tm := cfg.Timing
		banks := float64(cfg.BankGroups * cfg.BanksPerGroup)
		perCycle := min(1/float64(tm.burstCycles()), 4/float64(tm.NFAW), 1/float64(tm.NRRDS), banks/float64(tm.NRC))
		eng, d := newTestDRAM(t, cfg)
		c := newCompletions(eng)
		r := sim.NewStreams(1).Stream("random")
		const n = 20000
		for i := range n {
			d.Access(Request{Addr: r.Int64N(cfg.CapacityBytes()/64) * 64, Bytes: 64, Done: c.done(int64(i))})
		}
		eng.Run()
		require.Len(t, c.at, n)
		got := n / float64(d.Clock().CyclesAt(eng.Now()))
		t.Logf("%s: %.4f reads per cycle, bound %.4f (%.1f %%)", name, got, perCycle, 100*got/perCycle)
		assert.GreaterOrEqual(t, got, 0.9*perCycle, name)
		assert.LessOrEqual(t, got, perCycle*1.001, name)
	}
}

func TestDRAMBulkAgreesWithBurstLevel(t *testing.T) {
	if testing.Short() {
		t.Skip("the burst-level model of 64 MiB takes seconds")
	}
	cfg := DDR4_3200()
	size := int64(64 << 20)
	bulk := streamRate(t, cfg, size, false)
	cfg.BulkMinBytes = 0
	burst := streamRate(t, cfg, size, false)
	t.Logf("64 MiB: bulk %.3f GB/s, burst-level %.3f GB/s (%+.2f %%)", bulk, burst, 100*(bulk/burst-1))
	assert.InDelta(t, 1, bulk/burst, 0.02)
}

// TestDRAMCommandsObeyTiming runs random mixed traffic (small and bulk,
// reads and writes, several ranks, few rows so that rows conflict) and
// re-checks every command of every channel against the timing rules.
func TestDRAMCommandsObeyTiming(t *testing.T) {
	for _, base := range []DRAMConfig{DDR4_3200(), DDR5_4800(), HBM2_U55C()} {
		for seed := uint64(1); seed <= 3; seed++ {
			cfg := base
			cfg.Rows, cfg.BulkMinBytes = 64, 16<<10
			if cfg.Channels > 4 {
				cfg.Channels = 4
			}
			eng, d := newTestDRAM(t, cfg)
			logs := make([][]loggedCmd, cfg.Channels)
			for i, ch := range d.channels {
				ch.log = func(cmd cmdKind, l location, at sim.Cycles) {
					logs[i] = append(logs[i], loggedCmd{cmd, l, at})
				}
			}
			c := newCompletions(eng)
			r := sim.NewStreams(seed).Stream("traffic")
			burst := cfg.BurstBytes()
			var wantBursts int64
			const n = 400
			for i := range n {
				size := 1 + r.Int64N(512)
				if r.IntN(10) == 0 {
					size = 16<<10 + r.Int64N(200<<10)
				}
				addr := r.Int64N(cfg.CapacityBytes() - size)
				wantBursts += (addr+size+burst-1)/burst - addr/burst
				eng.Schedule(sim.Time(r.Int64N(int64(200*sim.Microsecond))), sim.Event{Handler: accessAt{d, Request{Addr: addr, Bytes: size, Write: r.IntN(3) == 0, Done: c.done(int64(i))}}})
			}
			eng.Run()
			require.Len(t, c.at, n, "every request completes")
			columns := 0
			for i := range logs {
				chk := &timingChecker{t: cfg.Timing}
				columns += chk.check(logs[i])
				require.Empty(t, chk.errs, "%s seed %d channel %d", cfg.Name, seed, i)
			}
			assert.Equal(t, wantBursts, int64(columns), "%s: one column command per burst", cfg.Name)
			assert.Equal(t, wantBursts, d.Stats().Bursts)
		}
	}
}

// accessAt starts a request when its event fires.
type accessAt struct {
	d *DRAM
	r Request
}

func (a accessAt) Handle(sim.Event) { a.d.Access(a.r) }

func TestDRAMMappingIsABijection(t *testing.T) {
	cfg := DDR4_3200()
	cfg.Channels, cfg.Rows, cfg.RowBytes = 3, 4, 512 // mixed radix: 3 channels
	for _, spec := range []string{"", ddrBankGroupMapping, "row:column:bank:rank:channel", "channel:row:bankgroup:bank:rank:column"} {
		cfg.Mapping = spec
		require.NoError(t, cfg.Validate(), spec)
		m, err := parseMapping(cfg.mapping(), cfg)
		require.NoError(t, err)
		seen := map[location]bool{}
		for a := int64(0); a < cfg.CapacityBytes(); a += cfg.BurstBytes() {
			l := m.decode(a)
			require.False(t, seen[l], "%q: address %d decodes to a location already used", spec, a)
			require.Less(t, l.channel, 3)
			seen[l] = true
		}
	}
}

func TestDRAMStreamBlock(t *testing.T) {
	cases := []struct {
		spec   string
		ok     bool
		bytes  int64
		groups int
	}{
		{ddrBankGroupMapping, true, 8192, 4},
		{DefaultDRAMMapping, true, 2048, 1},
		{"row:bank:rank:bankgroup:column:channel", true, 2048, 1},
		{"row:column:bank:rank:channel", false, 64, 1},
	}
	for _, c := range cases {
		cfg := DDR4_3200()
		cfg.Mapping = c.spec
		cfg.RowBytes = 2048
		m, err := parseMapping(c.spec, cfg)
		require.NoError(t, err)
		b := m.streamBlock()
		assert.Equal(t, c.ok, b.ok, c.spec)
		if c.ok {
			assert.Equal(t, c.bytes, b.bytes, c.spec)
			assert.Equal(t, c.groups, b.rotateGroups, c.spec)
		}
	}
}

func TestDRAMConfigRejects(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*DRAMConfig)
		want   string
	}{
		{"nRAS below nRCD", func(c *DRAMConfig) { c.Timing.NRAS = 10 }, "nRAS = 10 < nRCD = 22"},
		{"nRC too small", func(c *DRAMConfig) { c.Timing.NRC = 50 }, "nRC = 50 < nRAS + nRP"},
		{"zero nCL", func(c *DRAMConfig) { c.Timing.NCL = 0 }, "nCL = 0 cycles"},
		{"odd burst", func(c *DRAMConfig) { c.Timing.BurstBeats = 7 }, "burst_beats = 7"},
		{"refresh forever", func(c *DRAMConfig) { c.Timing.NRFC = 20000 }, "nREFI = 12480 <= nRFC"},
		{"zero clock", func(c *DRAMConfig) { c.ClockHz = 0 }, "clock_hz = 0"},
		{"zero channels", func(c *DRAMConfig) { c.Channels = 0 }, "channels = 0"},
		{"bus width", func(c *DRAMConfig) { c.BusWidthBytes = 3 }, "bus_width_bytes = 3"},
		{"row not a burst multiple", func(c *DRAMConfig) { c.RowBytes = 100 }, "row_bytes = 100"},
		{"queue", func(c *DRAMConfig) { c.QueueDepth = 0 }, "queue_depth = 0"},
		{"unknown field", func(c *DRAMConfig) { c.Mapping = "row:bank:rank:col:channel" }, `field "col"`},
		{"missing field", func(c *DRAMConfig) { c.Mapping = "row:bank:column:channel" }, "lacks the rank field"},
	}
	for _, c := range cases {
		cfg := DDR4_3200()
		c.mutate(&cfg)
		_, err := NewDRAM(sim.NewEngine(0), cfg)
		assert.ErrorContains(t, err, c.want, c.name)
	}
	_, err := DRAMPreset("ddr3")
	assert.EqualError(t, err, `unknown DRAM preset "ddr3": valid presets are ddr4-3200, ddr5-4800, hbm2-u55c, hbm3-h100, host-ddr4x8`)
}

func TestDRAMPeakAndCapacity(t *testing.T) {
	assert.Equal(t, 25.6, DDR4_3200().PeakBandwidth().GBps())
	assert.Equal(t, 19.2, DDR5_4800().PeakBandwidth().GBps())
	assert.Equal(t, 460.0, HBM2_U55C().PeakBandwidth().GBps())
	assert.Equal(t, 3350.0, HBM3_H100().PeakBandwidth().GBps())
	assert.Equal(t, int64(16<<30), DDR4_3200().CapacityBytes())
	assert.Equal(t, int64(16<<30), HBM2_U55C().CapacityBytes())
}

// TestTimingCheckerCatchesViolations makes sure the checker above is not
// vacuous: the same log fails against a stricter timing.
func TestTimingCheckerCatchesViolations(t *testing.T) {
	cfg := DDR4_3200()
	eng, d := newTestDRAM(t, cfg)
	var log []loggedCmd
	d.channels[0].log = func(cmd cmdKind, l location, at sim.Cycles) { log = append(log, loggedCmd{cmd, l, at}) }
	r := sim.NewStreams(1).Stream("traffic")
	for range 200 {
		d.Access(Request{Addr: r.Int64N(cfg.CapacityBytes()/64) * 64, Bytes: 64})
	}
	eng.Run()
	for _, stricter := range []func(*DRAMTiming){
		func(t *DRAMTiming) { t.NRCD++ }, func(t *DRAMTiming) { t.NFAW++ }, func(t *DRAMTiming) { t.NRP++ },
	} {
		tm := cfg.Timing
		stricter(&tm)
		chk := &timingChecker{t: tm}
		chk.check(append([]loggedCmd(nil), log...))
		assert.NotEmpty(t, chk.errs)
	}
	chk := &timingChecker{t: cfg.Timing}
	chk.check(log)
	assert.Empty(t, chk.errs)
}
