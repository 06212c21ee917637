package memory

import (
	"fmt"

	"github.com/kvcosim/kvcosim/sim"
)

// ioPattern is a closed-loop workload: Depth commands of Size bytes in
// flight, Count in all, sequential or at random aligned offsets.
type ioPattern struct {
	Write  bool
	Size   int64
	Random bool
	Depth  int
	Count  int
}

// ioResult is what a closed-loop run measured.
type ioResult struct {
	Elapsed     sim.Time
	MeanLatency sim.Time
}

// GBps returns the payload rate of the run.
func (r ioResult) GBps(p ioPattern) float64 {
	return float64(p.Size) * float64(p.Count) / r.Elapsed.Seconds() / 1e9
}

// IOPS returns the command rate of the run.
func (r ioResult) IOPS(p ioPattern) float64 { return float64(p.Count) / r.Elapsed.Seconds() }

// device is what the closed-loop driver needs of a memory device.
type device interface {
	Access(Request)
}

// closedLoop keeps Depth commands in flight on a device.
type closedLoop struct {
	eng      *sim.Engine
	dev      device
	p        ioPattern
	capacity int64
	rng      *sim.Stream
	issued   int
	next     int64
	latency  *sim.Distribution
	started  map[int64]sim.Time
}

func runClosedLoop(eng *sim.Engine, dev device, capacity int64, p ioPattern) ioResult {
	l := &closedLoop{eng: eng, dev: dev, p: p, capacity: capacity, rng: sim.NewStreams(1).Stream("closed-loop"),
		latency: sim.NewDistribution(), started: map[int64]sim.Time{}}
	start := eng.Now()
	for range min(p.Depth, p.Count) {
		l.issue()
	}
	eng.Run()
	return ioResult{Elapsed: eng.Now() - start, MeanLatency: sim.Time(l.latency.Mean())}
}

func (l *closedLoop) issue() {
	addr := l.next
	if l.p.Random {
		addr = l.rng.Int64N(l.capacity/l.p.Size) * l.p.Size
	}
	l.next = (l.next + l.p.Size) % (l.capacity - l.p.Size)
	id := int64(l.issued)
	l.issued++
	l.started[id] = l.eng.Now()
	l.dev.Access(Request{Addr: addr, Bytes: l.p.Size, Write: l.p.Write, Done: sim.Event{Handler: l, Arg: id}})
}

func (l *closedLoop) Handle(ev sim.Event) {
	l.latency.AddTime(l.eng.Now() - l.started[ev.Arg])
	delete(l.started, ev.Arg)
	if l.issued < l.p.Count {
		l.issue()
	}
}

// runSSD runs a pattern on a fresh drive, until its write buffer drains.
func runSSD(cfg SSDConfig, p ioPattern) (ioResult, error) {
	eng := sim.NewEngine(0)
	s, err := NewSSD(eng, cfg)
	if err != nil {
		return ioResult{}, err
	}
	r := runClosedLoop(eng, s, cfg.CapacityBytes, p)
	r.Elapsed = max(r.Elapsed, s.Traffic().DrainedAt) // a sustained write rate runs to the last page programmed
	return r, nil
}

// runDRAM runs a pattern on a fresh DRAM device.
func runDRAM(cfg DRAMConfig, p ioPattern) (ioResult, error) {
	eng := sim.NewEngine(0)
	d, err := NewDRAM(eng, cfg)
	if err != nil {
		return ioResult{}, err
	}
	return runClosedLoop(eng, d, cfg.CapacityBytes(), p), nil
}

// ssdTargets are a preset's published figures.
type ssdTargets struct {
	qd1ReadUs, seqReadGBps, seqWriteGBps, randReadKIOPS float64
	source                                              string
}

var ssdCalibrationTargets = map[string]ssdTargets{
	"kioxia-cm6":     {90, 6.9, 4.2, 1400, "Kioxia CM6 product brief (3.84 TB)"},
	"samsung-pm1743": {90, 13, 6.6, 2500, "Samsung PM1743 announcement (Dec 2021); QD1 latency not published, CM6-class assumed"},
	"smartssd-p2p":   {82, 2.36, 2.36, 576, "SmartSSD P2P measurements: <=4 KiB 82 us, else 50 us + size/2.36 GB/s; IOPS = 2.36 GB/s / 4 KiB"},
}

// SSDCalibrations runs, for every SSD preset, the QD1 4 KiB read latency,
// 128 KiB sequential read and write at QD32 (writes well past the write
// buffer) and 4 KiB random reads at QD256.
func SSDCalibrations() ([]sim.Calibration, error) {
	var out []sim.Calibration
	for _, name := range presetNames(ssdPresets) {
		cfg := ssdPresets[name]()
		want := ssdCalibrationTargets[name]
		qd1 := ioPattern{Size: 4096, Random: true, Depth: 1, Count: 200}
		seqRead := ioPattern{Size: 128 << 10, Depth: 32, Count: 4000}
		seqWrite := ioPattern{Write: true, Size: 128 << 10, Depth: 32, Count: int(4 * cfg.WriteBufferBytes / (128 << 10))}
		rand := ioPattern{Size: 4096, Random: true, Depth: 256, Count: 60000}
		var res [4]ioResult
		for i, p := range []ioPattern{qd1, seqRead, seqWrite, rand} {
			r, err := runSSD(cfg, p)
			if err != nil {
				return nil, err
			}
			res[i] = r
		}
		out = append(out,
			sim.NewCalibration(name+" QD1 4KiB read latency", want.qd1ReadUs, float64(res[0].MeanLatency)/1e6, "us", 0.10, want.source),
			sim.NewCalibration(name+" 128KiB sequential read QD32", want.seqReadGBps, res[1].GBps(seqRead), "GB/s", 0.10, want.source),
			sim.NewCalibration(name+" 128KiB sequential write QD32 (sustained)", want.seqWriteGBps, res[2].GBps(seqWrite), "GB/s", 0.10, want.source),
			sim.NewCalibration(name+" 4KiB random read QD256", want.randReadKIOPS, res[3].IOPS(rand)/1e3, "KIOPS", 0.10, want.source))
	}
	return out, nil
}

// Calibrations runs every calibration check of the memory package.
func Calibrations() ([]sim.Calibration, error) {
	var out []sim.Calibration
	for _, f := range []func() ([]sim.Calibration, error){DRAMCalibrations, PCIeCalibrations, SSDCalibrations} {
		c, err := f()
		if err != nil {
			return nil, fmt.Errorf("memory calibration: %w", err)
		}
		out = append(out, c...)
	}
	return out, nil
}

// idleReadLatency returns the time of one burst read on an idle device.
func idleReadLatency(cfg DRAMConfig) (sim.Time, error) {
	r, err := runDRAM(cfg, ioPattern{Size: cfg.BurstBytes(), Depth: 1, Count: 1})
	return r.Elapsed, err
}

// randomReadRate runs random 64 B reads on one rank with 64 queue entries
// and returns reads per cycle and the bound that nFAW, nRRD_S, nRC and the
// data bus allow.
func randomReadRate(cfg DRAMConfig) (got, bound float64, err error) {
	cfg.Ranks, cfg.QueueDepth = 1, 64
	tm := cfg.Timing
	banks := float64(cfg.BankGroups * cfg.BanksPerGroup)
	bound = min(1/float64(tm.burstCycles()), 4/float64(tm.NFAW), 1/float64(tm.NRRDS), banks/float64(tm.NRC))
	p := ioPattern{Size: 64, Random: true, Depth: 1024, Count: 20000}
	r, err := runDRAM(cfg, p)
	if err != nil {
		return 0, 0, err
	}
	clock, _ := sim.NewClock(cfg.ClockHz)
	return float64(p.Count) / float64(clock.CyclesAt(r.Elapsed)) / float64(cfg.Channels), bound, nil
}

// DRAMCalibrations checks idle latency, streaming and bank-parallel rates.
func DRAMCalibrations() ([]sim.Calibration, error) {
	var out []sim.Calibration
	for _, name := range presetNames(dramPresets) {
		cfg := dramPresets[name]()
		if cfg.ExtraLatency > 0 {
			continue // host memory has its own check below
		}
		got, err := idleReadLatency(cfg)
		if err != nil {
			return nil, err
		}
		clock, _ := sim.NewClock(cfg.ClockHz)
		tm := cfg.Timing
		want := clock.Edge(cfg.ControllerCycles + tm.NRCD + tm.NCL + tm.burstCycles())
		out = append(out, sim.NewCalibration(name+" idle burst read = nRCD+nCL+nBL/2", float64(want)/1e3, float64(got)/1e3, "ns", 0,
			"JEDEC command timing; presets in docs/memory.md"))
	}
	host, err := idleReadLatency(HostMemoryConfig())
	if err != nil {
		return nil, err
	}
	out = append(out, sim.NewCalibration("host-ddr4x8 idle random load", 90, float64(host)/1e3, "ns", 0.10,
		"Intel Memory Latency Checker idle latency on Xeon servers, about 90 ns"))
	stream := ioPattern{Size: 16 << 20, Depth: 1, Count: 4}
	for _, c := range []struct {
		cfg    DRAMConfig
		target float64
		source string
	}{{DDR4_3200(), 25.6, "DDR4-3200 peak 25.6 GB/s per channel; at least 90 % when streaming"},
		{HBM2_U55C(), 425, "Shuhai HBM benchmark on U280/U55C: about 425 GB/s of the 460 GB/s peak (AMD UG1393)"}} {
		r, err := runDRAM(c.cfg, stream)
		if err != nil {
			return nil, err
		}
		out = append(out, sim.NewCalibration(c.cfg.Name+" sequential read", c.target, r.GBps(stream), "GB/s", 0.10, c.source))
	}
	got, bound, err := randomReadRate(DDR4_3200())
	if err != nil {
		return nil, err
	}
	out = append(out, sim.NewCalibration("ddr4-3200 random 64B reads vs nFAW/nRRD/nRC bound", bound, got, "reads/cycle", 0.10,
		"derived from the DDR4_3200AA parameters"))
	return out, nil
}

// pcieRate moves 64 MiB one way and returns GB/s.
func pcieRate(cfg PCIeConfig, cardToHost bool) (float64, error) {
	eng := sim.NewEngine(0)
	p, err := NewPCIe(eng, cfg)
	if err != nil {
		return 0, err
	}
	l := p.HostToCard
	if cardToHost {
		l = p.CardToHost
	}
	const size = 64 << 20
	end := l.Transfer(size, sim.Event{}) - cfg.Latency
	return size / end.Seconds() / 1e9, nil
}

// PCIeCalibrations checks the XDMA platform against xbtest.
func PCIeCalibrations() ([]sim.Calibration, error) {
	cfg := AlveoU55CXDMA()
	h2c, err := pcieRate(cfg, false)
	if err != nil {
		return nil, err
	}
	c2h, err := pcieRate(cfg, true)
	if err != nil {
		return nil, err
	}
	const src = "xbtest DMA measurements, Alveo U55C gen3x16 XDMA platform"
	return []sim.Calibration{
		sim.NewCalibration("alveo-u55c-xdma host-to-card DMA", 9.0, h2c, "GB/s", 0.10, src),
		sim.NewCalibration("alveo-u55c-xdma card-to-host DMA", 12.2, c2h, "GB/s", 0.10, src),
		sim.NewCalibration("gen3x16 round trip", 0.9, 2*PCIeLink(3, 16).Latency.Seconds()*1e6, "us", 0.10,
			"PCIe round trip of about 0.9 us between host and card"),
	}, nil
}
