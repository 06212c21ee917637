package scenario

import (
	"maps"
	"math"
	"slices"

	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/sim"
)

// hostCosts price what the run does not time: a core's time per storage
// command, per DMA set up and per byte copied in host memory; and each
// component's power and capital cost (cpu.io_submit, cpu.dma_setup,
// cpu.copy_gbps, power.*, cost.*).
type hostCosts struct {
	ioSubmit, dmaSetup sim.Time
	copyRate           sim.Bandwidth
	power              Power
	cost               Cost
}

// resolveHostCosts checks the busy host's share, the host's prices, the
// power figures and the capital costs.
func (r *resolver) resolveHostCosts(sc *Scenario, out *resolved) {
	c := sc.CPU
	r.floatIn("cpu.background", c.Background, 0, float64(hostcpu.MaxBackgroundPPM)/1e6)
	out.host.BackgroundPPM = int64(math.Round(c.Background * 1e6))
	if out.hostCycle && out.host.BackgroundPPM > 0 {
		r.fail(r.culprit("cpu.background", "cpu.host_memory_model"),
			"%v needs cpu.host_memory_model: flat (other work's share of host memory is taken off the flat model's rate)", c.Background)
	}
	out.costs.ioSubmit = r.duration("cpu.io_submit", c.IOSubmit, maxOverhead)
	out.costs.dmaSetup = r.duration("cpu.dma_setup", c.DMASetup, maxOverhead)
	r.floatIn("cpu.copy_gbps", c.CopyGBps, 0.1, 1000)
	out.costs.copyRate = sim.Bandwidth(c.CopyGBps * 1e9)
	p, k := sc.Power, sc.Cost
	for _, f := range []struct {
		key       string
		v, lo, hi float64
	}{
		{"power.accelerator_active_w", p.AcceleratorActiveW, 0, 5000},
		{"power.accelerator_idle_w", p.AcceleratorIdleW, 0, p.AcceleratorActiveW},
		{"power.cpu_core_w", p.CPUCoreW, 0, 100},
		{"power.dram_pj_per_bit", p.DRAMPJPerBit, 0, 1000},
		{"power.drive_active_w", p.DriveActiveW, 0, 100},
		{"power.drive_idle_w", p.DriveIdleW, 0, p.DriveActiveW},
		{"power.fpga_active_w", p.FPGAActiveW, 0, 1000},
		{"power.fpga_idle_w", p.FPGAIdleW, 0, p.FPGAActiveW},
		{"power.link_pj_per_bit", p.LinkPJPerBit, 0, 1000},
		{"cost.accelerator_usd", k.AcceleratorUSD, 0, 1e7},
		{"cost.host_usd", k.HostUSD, 0, 1e7},
		{"cost.drive_usd", k.DriveUSD, 0, 1e6},
		{"cost.fpga_usd", k.FPGAUSD, 0, 1e6},
		{"cost.amortization_years", k.AmortizationYears, 0.1, 30},
		{"cost.usd_per_kwh", k.USDPerKWh, 0, 10},
	} {
		r.floatIn(f.key, f.v, f.lo, f.hi)
	}
	out.costs.power, out.costs.cost = p, k
}

// hostLeftPPM is the share of host memory's rate, in parts per million,
// that other work on the host leaves the run.
func (rs *resolved) hostLeftPPM() int64 { return 1_000_000 - rs.host.BackgroundPPM }

// hostFigures fills the summary's host, energy and cost figures from what
// the run recorded: the stores' host work, the devices' traffic and busy
// times, over the run's simulated time now, for output tokens served.
func (r *Run) hostFigures(s *reports.Summary, now sim.Time, output int64) {
	rs := r.l.resolved
	work := r.sys.HostWork()
	cores := r.hostCoreTime(work)
	h := reports.HostSummary{Cores: rs.host.CPUCores, Background: float64(rs.host.BackgroundPPM) / 1e6, CPUCoreSBy: map[string]float64{},
		DRAMPeakGBps: float64(work.PeakWindowBytes) / hostcpu.PeakWindow.Seconds() / 1e9}
	for _, k := range slices.Sorted(maps.Keys(cores)) { // in one order: a float sum's last bit depends on it
		h.CPUCoreSBy[k] = cores[k].Seconds()
		h.CPUCoreS += cores[k].Seconds()
	}
	for _, n := range r.nodes {
		t := n.host.Traffic()
		h.DRAMReadBytes, h.DRAMWriteBytes = h.DRAMReadBytes+t.BytesRead, h.DRAMWriteBytes+t.BytesWritten
	}
	for i, d := range r.tierDevs {
		if _, _, ssd := r.tierDrives(i); !ssd { // a tier in host DRAM
			t := d.Traffic()
			h.DRAMReadBytes, h.DRAMWriteBytes = h.DRAMReadBytes+t.BytesRead, h.DRAMWriteBytes+t.BytesWritten
		}
	}
	b := s.Bytes
	h.PCIeRootBytes = b["gpu_pcie_h2d"] + b["gpu_pcie_d2h"] + b["fpga_pcie_h2c"] + b["fpga_pcie_c2h"]
	if !rs.host.Design.Card { // a CPU-run store reads and writes the drives through host memory
		h.PCIeRootBytes += b["storage_read"] + b["storage_write"]
	}
	s.Host = h
	s.Energy = r.energy(s, now, output)
	s.Cost = r.cost(s.Energy.Joules, now, output)
}

// hostCoreTime is the core time the stores' work took on the hosts, by
// kind: timed (hashing and table walks), and priced by operation or byte.
func (r *Run) hostCoreTime(work hostcpu.HostWork) map[string]sim.Time {
	c := r.l.resolved.costs
	commands := work.StorageCommands
	if r.l.resolved.host.Design.Card { // each query and export handed to the card
		k := r.sys.Counts()
		commands += k.QueryHits + k.QueryMiss + k.Exports
	}
	return map[string]sim.Time{"hash_and_walk": work.Compute, "io_submit": sim.MulTime(commands, c.ioSubmit),
		"dma_setup": sim.MulTime(work.DMATransfers, c.dmaSetup), "staging_copy": c.copyRate.TransferTime(work.StagedBytes)}
}

// energy is the run's energy by component: each GPU idle all run and
// active while its node's accelerator is busy; the host's cores for the
// store's core time; host DRAM and the links by the bits they move; each
// drive idle all run and active while its link moves data; each FPGA card
// idle all run and active while its links move data.
func (r *Run) energy(s *reports.Summary, now sim.Time, output int64) reports.EnergySummary {
	rs := r.l.resolved
	p := rs.costs.power
	run := now.Seconds()
	activeIdle := func(active, idle float64, busy sim.Time) float64 {
		return idle*run + (active-idle)*min(busy, now).Seconds()
	}
	by := map[string]float64{}
	for _, n := range r.nodes {
		by["accelerator"] += float64(rs.node.TP) * activeIdle(p.AcceleratorActiveW, p.AcceleratorIdleW, n.exec.Stats().Busy)
		if n.card != nil {
			busy := n.card.HostToCard.Stats().Busy + n.card.CardToHost.Stats().Busy + n.p2pTo.Stats().Busy + n.p2pFrom.Stats().Busy
			by["fpga"] += activeIdle(p.FPGAActiveW, p.FPGAIdleW, busy)
		}
	}
	by["host_cpu"] = p.CPUCoreW * s.Host.CPUCoreS
	by["host_dram"] = p.DRAMPJPerBit * 1e-12 * 8 * float64(s.Host.DRAMReadBytes+s.Host.DRAMWriteBytes)
	for i, d := range r.tierDevs {
		if _, drives, ssd := r.tierDrives(i); ssd {
			t := d.Traffic() // a stripe's busy times are its drives' mean
			by["drives"] += float64(drives) * activeIdle(p.DriveActiveW, p.DriveIdleW, t.ReadBusy+t.WriteBusy)
		}
	}
	var linkBytes int64
	for _, k := range []string{"gpu_pcie_h2d", "gpu_pcie_d2h", "fpga_pcie_h2c", "fpga_pcie_c2h", "p2p_to_gpu", "p2p_from_gpu",
		"storage_read", "storage_write", "network_to_pool", "network_from_pool"} {
		linkBytes += s.Bytes[k]
	}
	by["links"] = p.LinkPJPerBit * 1e-12 * 8 * float64(linkBytes)
	e := reports.EnergySummary{JoulesBy: by}
	for _, k := range slices.Sorted(maps.Keys(by)) { // in one order: a float sum's last bit depends on it
		e.Joules += by[k]
	}
	if output > 0 {
		e.JoulesPerOutputToken = e.Joules / float64(output)
	}
	return e
}

// cost is the run's capital cost (each component's price over its
// amortization period, for the run's time) and its energy's, per million
// output tokens.
func (r *Run) cost(joules float64, now sim.Time, output int64) reports.CostSummary {
	rs := r.l.resolved
	k := rs.costs.cost
	perNode := float64(rs.node.TP)*k.AcceleratorUSD + k.HostUSD
	if rs.host.Design.Card {
		perNode += k.FPGAUSD
	}
	capital := float64(len(r.nodes)) * perNode
	for i := range r.tierDevs {
		if _, drives, ssd := r.tierDrives(i); ssd {
			capital += float64(drives) * k.DriveUSD
		}
	}
	const secondsPerYear = 365.25 * 86400
	c := reports.CostSummary{CapitalUSD: capital * now.Seconds() / (k.AmortizationYears * secondsPerYear),
		EnergyUSD: joules / 3.6e6 * k.USDPerKWh}
	if output > 0 {
		c.USDPerMillionOutputTokens = (c.CapitalUSD + c.EnergyUSD) / float64(output) * 1e6
	}
	return c
}
