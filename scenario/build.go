package scenario

import (
	"fmt"
	"github.com/kvcosim/kvcosim/hostcpu/mech"
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"github.com/kvcosim/kvcosim/kvstore"
	"slices"
	"time"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/fpga"
	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
	"github.com/kvcosim/kvcosim/workloads"
)

// Run is an assembled system, ready to run once.
type Run struct {
	l        *Loaded
	eng      *sim.Engine
	sys      *hostcpu.System
	workload *workloads.Workload
	// skippedLines counts malformed trace lines skipped.
	skippedLines int
	nodes        []*builtNode
	ssd          *memory.SSD // the one-tier form's device (functional mode's byte store)
	tierDevs     []memory.Device
	pool         *kvstore.Pool
	dir          *kvstore.Directory // tier 0's index: the FPGA engines' and the levels'
	streams      sim.Streams
}

// builtNode keeps a node's parts for the summary.
type builtNode struct {
	host      memory.Device
	gpu, card *memory.PCIe
	p2pTo     *sim.Link
	p2pFrom   *sim.Link
	exchange  *memory.FlatMemory
	remotes   []*memory.RemoteStore // each tier over the network (several nodes)
	exec      *accel.Executor
	engine    *fpga.Engine
}

// p2pLatency is the one-way latency of the FPGA-accelerator peer link (a
// PCIe switch hop).
const p2pLatency = 1 * sim.Microsecond

// buildWorkload generates the synthetic sessions or reads the trace (a
// block-keyed format's block size was checked when the scenario loaded).
func (r *Run) buildWorkload(streams sim.Streams) (*workloads.Workload, error) {
	lw := r.l.Workload
	if r.l.workload != nil {
		return r.l.workload, nil
	}
	if lw.Synthetic() {
		w, err := workloads.Synthetic(r.l.resolved.synthetic, streams)
		if err == nil {
			w.Limit(lw.Limit)
		}
		return w, err
	}
	t, err := workloads.ReadTrace(lw.Kind, lw.Path, lw.SkipBadLines)
	if err != nil {
		return nil, fmt.Errorf("workload.path: %w", err)
	}
	r.skippedLines = t.SkippedLines
	t.Limit(lw.Limit)
	if err := r.l.checkTrace(t); err != nil {
		return nil, err
	}
	return t.Workload(lw.TimeScale), nil
}

// buildTiers makes the storage tiers' devices and, for a storing design,
// the pool's index over them (the store's levels are tier 0's).
func (r *Run) buildTiers() error {
	rs := r.l.resolved
	var err error
	if len(r.l.Storage.Tiers) == 0 {
		if r.ssd, err = memory.NewSSD(r.eng, rs.ssd); err != nil {
			return err
		}
		r.tierDevs = []memory.Device{r.ssd}
		if rs.drives > 1 {
			if r.tierDevs[0], err = r.stripedDrives(); err != nil {
				return err
			}
		}
		if rs.dramTier {
			dram, err := memory.NewTierDevice(r.eng, rs.tiers[0].Name, rs.tierDevices[0], rs.tiers[0].Bytes, rs.resolution, rs.hostLeftPPM())
			if err != nil {
				return fmt.Errorf("cpu.host_memory (the host-DRAM tier): %w", err)
			}
			r.tierDevs = []memory.Device{dram, r.tierDevs[0]}
		}
	}
	for i, t := range rs.tiers[len(r.tierDevs):] {
		d, err := memory.NewTierDevice(r.eng, t.Name, rs.tierDevices[i], t.Bytes, rs.resolution, rs.hostLeftPPM())
		if err != nil {
			return fmt.Errorf("storage.tiers[%d]: %w", i, err)
		}
		r.tierDevs = append(r.tierDevs, d)
	}
	if !rs.host.Design.Stores {
		return nil
	}
	if r.pool, err = kvstore.NewPool(rs.fpga.Directory, rs.tiers); err != nil {
		return err
	}
	r.dir = r.pool.Tier(0)
	r.dir.Trace(r.eng.Trace(), StoreComponent)
	return nil
}

// stripedDrives stripes storage.drives drives of storage.device, the
// first of them r.ssd.
func (r *Run) stripedDrives() (memory.Device, error) {
	rs := r.l.resolved
	drives := []memory.Device{r.ssd}
	for d := 1; d < rs.drives; d++ {
		cfg := rs.ssd
		cfg.Name = fmt.Sprintf("%s.%d", cfg.Name, d)
		cfg.Host.Name = fmt.Sprintf("%s.%d", cfg.Host.Name, d) // each drive's link a component of its own
		ssd, err := memory.NewSSD(r.eng, cfg)
		if err != nil {
			return nil, err
		}
		drives = append(drives, ssd)
	}
	return memory.NewStriped(r.eng, drives, memory.StripeBytes)
}

// Build assembles the system a loaded scenario describes.
func Build(l *Loaded) (*Run, error) {
	rs := l.resolved
	eng := sim.NewEngine(1 << 12)
	streams := sim.NewStreams(l.Seed)
	r := &Run{l: l, eng: eng, streams: streams}
	w, err := r.buildWorkload(streams)
	if err != nil {
		return nil, err
	}
	r.workload = w
	if rs.functional != nil {
		if err := r.checkFunctionalMemory(rs.functional); err != nil {
			return nil, err
		}
	}
	if err := r.buildTiers(); err != nil {
		return nil, err
	}
	var parts []hostcpu.Node
	for i := range rs.nodes {
		n, hn, err := r.buildNode(i)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
		r.nodes = append(r.nodes, n)
		parts = append(parts, hn)
	}
	var hostPool *kvstore.Pool
	if !rs.host.Design.Card {
		hostPool = r.pool // the host runs the store itself
	}
	if r.sys, err = hostcpu.NewSystem(eng, rs.host, parts, hostPool, w, streams); err != nil {
		return nil, err
	}
	if rs.functional != nil {
		if err := r.buildFunctional(rs.functional); err != nil {
			return nil, fmt.Errorf("functional: %w", err)
		}
	}
	return r, nil
}

// buildNode makes one node's memories, links, accelerator and FPGA.
func (r *Run) buildNode(i int) (*builtNode, hostcpu.Node, error) {
	rs := r.l.resolved
	eng := r.eng
	name := func(s string) string { return fmt.Sprintf("node%d.%s", i, s) }
	n := &builtNode{}
	var err error
	hostCfg := rs.hostMemory
	hostCfg.Name = name("host-memory")
	if rs.hostCycle {
		n.host, err = memory.NewDRAM(eng, hostCfg)
	} else {
		n.host, err = memory.FlatFromDRAMShare(eng, hostCfg.Name, hostCfg, rs.hostLeftPPM())
	}
	if err != nil {
		return nil, hostcpu.Node{}, err
	}
	gpuCfg := rs.gpuLink
	gpuCfg.Name = name("gpu-pcie")
	if n.gpu, err = memory.NewPCIe(eng, gpuCfg); err != nil {
		return nil, hostcpu.Node{}, err
	}
	tiers := slices.Clone(r.tierDevs)
	for t := range tiers {
		if rs.nodes == 1 {
			break
		}
		net := name("network")
		if t > 0 {
			net = name("network-" + rs.tiers[t].Name)
		}
		remote, err := memory.NewRemoteStore(eng, net, r.tierDevs[t], rs.network, rs.netLatency)
		if err != nil {
			return nil, hostcpu.Node{}, err
		}
		tiers[t], n.remotes = remote, append(n.remotes, remote)
	}
	if n.exec, err = accel.NewExecutor(eng, name("accel"), rs.node, rs.host.MaxBatch, rs.host.TokenBudget); err != nil {
		return nil, hostcpu.Node{}, err
	}
	kvBytes := rs.kvRoom()
	if rs.host.Mech.PreloadOn(rs.host.Run(len(rs.tiers))) {
		kvBytes -= rs.host.Mech.PreloadBufferBytes // the read buffer
	}
	kv, err := accel.NewKVMemory(kvBytes, rs.host.KVBytesPerToken, rs.kvBlock)
	if err != nil {
		return nil, hostcpu.Node{}, err
	}
	hn := hostcpu.Node{Exec: n.exec, KV: kv, Node: store.Node{HostMemory: n.host, HostMemoryBytes: rs.hostMemory.CapacityBytes(),
		ToGPU: n.gpu.HostToCard, FromGPU: n.gpu.CardToHost, Tiers: tiers}}
	if err := r.buildCopies(i, &hn.Node); err != nil {
		return nil, hostcpu.Node{}, err
	}
	if rs.host.Design.Card {
		if err := r.buildFPGA(i, n, &hn, tiers[0]); err != nil {
			return nil, hostcpu.Node{}, err
		}
	}
	return n, hn, nil
}

// buildCopies adds the copies on the way into the accelerator besides
// PCIe: the CUDA driver's staging copy of pageable host memory
// (store.host_buffers: pageable), and the design's copy into the paged
// blocks on the accelerator, a read and a write of each byte at the
// device memory's streaming rate on each GPU of the tensor-parallel
// group (each holds its share of the KV heads), a kernel launch each.
func (r *Run) buildCopies(i int, n *store.Node) error {
	rs := r.l.resolved
	var err error
	if rs.pageable > 0 {
		link := sim.LinkConfig{Bandwidth: rs.pageable}
		if n.Pageable, err = sim.NewLink(r.eng, fmt.Sprintf("node%d.pageable-copy", i), link); err != nil {
			return err
		}
	}
	if rs.host.Design.PagedCopy {
		d := rs.node.Device
		rate := float64(d.MemBandwidth) * d.MemoryEfficiency / 2 * float64(rs.node.TP)
		link := sim.LinkConfig{Bandwidth: sim.Bandwidth(rate), Latency: d.KernelLaunch}
		if n.PagedCopy, err = sim.NewLink(r.eng, fmt.Sprintf("node%d.paged-copy", i), link); err != nil {
			return err
		}
	}
	return nil
}

// buildFPGA adds the FPGA card: its PCIe link, HBM, the peer link to the
// accelerator and the engine over the shared index.
func (r *Run) buildFPGA(i int, n *builtNode, hn *hostcpu.Node, storage memory.Device) error {
	rs := r.l.resolved
	eng := r.eng
	var err error
	cardCfg := rs.fpgaPCIe
	cardCfg.Name = fmt.Sprintf("node%d.fpga-pcie", i)
	if n.card, err = memory.NewPCIe(eng, cardCfg); err != nil {
		return err
	}
	link := sim.LinkConfig{Bandwidth: rs.p2p, Latency: p2pLatency}
	if n.p2pTo, err = sim.NewLink(eng, fmt.Sprintf("node%d.p2p-to-gpu", i), link); err != nil {
		return err
	}
	if n.p2pFrom, err = sim.NewLink(eng, fmt.Sprintf("node%d.p2p-from-gpu", i), link); err != nil {
		return err
	}
	hbmBytes := memory.HBM2_U55C().CapacityBytes()
	exchangeBW, exchangeLat := memory.HBM2U55CStreamBandwidth, memory.HBM2U55CIdleLatency
	if rs.exchangeAcc {
		exchangeBW, exchangeLat = rs.node.Device.MemBandwidth, 0
	}
	if n.exchange, err = memory.NewFlatMemory(eng, fmt.Sprintf("node%d.exchange", i), exchangeBW, exchangeLat); err != nil {
		return err
	}
	ports := fpga.Ports{HostMemory: n.host, ToHost: n.card.CardToHost, FromHost: n.card.HostToCard, Exchange: n.exchange,
		Tables: n.exchange, Storage: storage, HostBytes: rs.hostMemory.CapacityBytes(), ExchangeBytes: hbmBytes, TablesBytes: hbmBytes}
	// imports reach the accelerator from the FPGA engine: forwarded from
	// the card's HBM as each extent lands, or written straight into the
	// accelerator's memory
	ports.Forward, hn.P2PFromGPU = n.p2pTo, n.p2pFrom
	if rs.exchangeAcc {
		ports.Forward, ports.ExchangeLink, hn.P2PFromGPU = nil, n.p2pTo, nil
	}
	// exports reach the card's HBM from the accelerator before the card's
	// export task (store-and-forward), or piece by piece within it as the
	// card writes them on (a streamed export, with a synchronous save: an
	// asynchronous one lets the next turn go once the KV is off the
	// accelerator, so the accelerator pushes it into the card's HBM, its
	// buffer, first)
	if hn.P2PFromGPU != nil && rs.fpga.ChunkBytes > 0 && rs.host.Mech.Save == mech.SaveSync {
		ports.Inbound, hn.P2PFromGPU = n.p2pFrom, nil
	}
	placement := rs.hostMemory.CapacityBytes()
	if rs.fpga.Placement == fpga.PlaceHBM {
		placement = hbmBytes
	}
	cfg := rs.fpga
	cfg.Name, cfg.Node = fmt.Sprintf("node%d.fpga", i), i
	n.engine, err = fpga.NewSharedEngine(eng, cfg, ports, placement, r.dir)
	hn.FPGA = n.engine
	return err
}

// Result is a finished run.
type Result struct {
	Run  *Run
	Wall time.Duration
	// Counted is the run's conservation check, passed.
	Counted hostcpu.Conservation
}

// Execute runs the system to the end of its workload; an invariant
// violation is an error naming the time, operation and region or link, and
// a load that carries simulated time past sim.MaxTime an error naming the
// event.
func (r *Run) Execute() (*Result, error) {
	start := time.Now()
	if err := r.eng.RunChecked(); err != nil {
		return nil, err
	}
	wall := time.Since(start)
	if err := r.sys.Failure(); err != nil {
		return nil, err
	}
	for i, n := range r.nodes {
		if n.engine != nil && n.engine.Failure() != nil {
			return nil, fmt.Errorf("node %d: %w", i, n.engine.Failure())
		}
	}
	if r.pool != nil {
		if err := r.pool.Check(r.eng.Now(), "end of run"); err != nil {
			return nil, err
		}
	}
	counted, err := r.sys.Conservation()
	if err != nil {
		return nil, err
	}
	return &Result{Run: r, Wall: wall, Counted: counted}, nil
}

// StoreComponent names the store's index in the levels it emits.
const StoreComponent = "store"

// AddSpanSink sends every component's spans to sink, and the store's
// levels too when sink is a sim.LevelSink and the design has a store,
// starting with their values now (the run is slower while one is
// attached).
func (r *Run) AddSpanSink(s sim.Sink) {
	r.eng.Trace().AddSink(s)
	if ls, ok := s.(sim.LevelSink); ok && r.dir != nil {
		ls.Level(r.dir.Levels(r.eng.Now()))
	}
}

// Progress is how far a run has come: its simulated time and the
// requests over (completed or rejected) of the workload's. A rejected turn
// ends its session, whose later turns never come: Finished may stop short
// of Requests.
type Progress struct {
	Now                sim.Time
	Finished, Requests int
}

// Watch has the run call f with its progress every sim.WatchEvents events,
// on the run's goroutine between two events: f should be quick, and as it
// sees only the Progress, a watched run writes the same bytes.
func (r *Run) Watch(f func(Progress)) {
	requests := r.workload.Requests()
	r.eng.Watch(func() { f(Progress{Now: r.eng.Now(), Finished: int(r.sys.Counts().Finished), Requests: requests}) })
}

// RegionBytes is the store's region size (0 without a store).
func (r *Run) RegionBytes() int64 {
	if r.dir == nil {
		return 0
	}
	return r.dir.Config().RegionBytes
}
