package scenario

import (
	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/hostcpu/mech"
	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/sim"
)

func ms(t sim.Time) float64 { return float64(t) / 1e9 }

// Rows returns requests.csv's rows, in order of arrival.
func (res *Result) Rows() []reports.RequestRow {
	records := res.Run.sys.Records()
	rows := make([]reports.RequestRow, 0, len(records))
	tenants := res.Run.sessionTenants()
	incremental := res.Run.l.resolved.host.Engine.KVAlloc == hostcpu.AllocIncremental
	for _, r := range records {
		rows = append(rows, reports.RequestRow{ID: r.ID, Session: r.Session, Turn: r.Turn, Node: r.Node,
			Decision: r.Decision.String(), Hit: r.Hit, ArrivalMs: ms(r.Arrival),
			PromptTokens: r.PromptTokens, ReusedTokens: r.ReusedTokens, ResidentTokens: r.ResidentTokens,
			ComputedTokens: r.ComputedTokens, Output: r.OutputTokens,
			QueueMs: ms(r.Queue), QueryMs: ms(r.QueryTime), ImportMs: ms(r.Import), PrefillMs: ms(r.Prefill),
			DecodeMs: ms(r.Decode), ExportMs: ms(r.Export), TTFTms: ms(r.TTFT), TPOTms: ms(r.TPOT), E2Ems: ms(r.E2E), KVWaitMs: ms(r.KVWait),
			TruncatedTokens: r.TruncatedTokens, Rejected: !r.Done, Tenant: tenants[r.Session]})
		if incremental {
			rows[len(rows)-1].Preempted = &reports.Preempted{Times: r.Preemptions, RecomputedTokens: r.RecomputedTokens, MovedBytes: r.PreemptedBytes}
		}
	}
	return rows
}

// Summary returns the run's headline figures.
func (res *Result) Summary() reports.Summary {
	r := res.Run
	now := r.end()
	s := reports.Summary{Design: r.l.System.Design, Seed: r.l.Seed, Sessions: len(r.workload.Sessions),
		SimTimeS: now.Seconds(), Events: r.eng.Handled(),
		RequestsRejected: r.sys.Rejected().Total(), SkippedTraceLines: r.skippedLines, Decisions: map[string]int64{}, Bytes: map[string]int64{},
		Utilization: map[string]float64{}, Evictions: map[string]int64{}, Store: map[string]int64{}}
	records := r.sys.Records()
	ttft, tpot, e2e := make([]float64, 0, len(records)), make([]float64, 0, len(records)), make([]float64, 0, len(records))
	var resumed, kvWait []float64
	served := make([]reports.Served, 0, len(records))
	var output int64
	for _, rec := range records {
		if !rec.Done {
			continue
		}
		s.RequestsCompleted++
		ttft, e2e = append(ttft, ms(rec.TTFT)), append(e2e, ms(rec.E2E))
		served = append(served, reports.Served{ArrivalMs: ms(rec.Arrival), TTFTms: ms(rec.TTFT), FirstTurn: rec.Turn == 0})
		if resumedTurn(rec) {
			resumed, kvWait = append(resumed, ms(rec.TTFT)), append(kvWait, ms(rec.KVWait))
		}
		if rec.OutputTokens > 1 {
			tpot = append(tpot, ms(rec.TPOT))
		}
		s.PromptTokens += rec.PromptTokens
		s.PrefillTokensComputed += rec.ComputedTokens
		s.PrefillTokensReused += rec.ReusedTokens
		s.PrefillTokensResident += rec.ResidentTokens
		output += rec.OutputTokens
	}
	s.TTFTms, s.TPOTms, s.E2Ems = reports.NewPercentiles(ttft), reports.NewPercentiles(tpot), reports.NewPercentiles(e2e)
	s.ResumedTTFTms, s.ResumedTurns, s.KVWaitMs = reports.NewPercentiles(resumed), len(resumed), reports.NewPercentiles(kvWait)
	s.Load = reports.NewLoad(served)
	s.Saturated = s.Load.Why != ""
	if now > 0 {
		s.ThroughputTokensPerS = float64(output) / now.Seconds()
	}
	if s.Load.Judged {
		s.SustainedOutputTokensPerS = float64(output) * r.sustainedPerSession(&s.Load)
	}
	s.Goodput = r.goodput(&s.Load)
	s.AfterWarmup = afterWarmup(records, r.l.Workload.WarmupTurns)
	if s.PromptTokens > 0 {
		s.HitRatioTokens = float64(s.PrefillTokensReused) / float64(s.PromptTokens)
	}
	c := r.sys.Counts()
	s.RequestsTruncated, s.RequestsContextRejected = c.Truncated, r.sys.Rejected().For(hostcpu.RejectContextWindow)
	s.RequestsRejectedByReason = r.sys.Rejected().ByReason()
	for k, v := range c.Decisions {
		s.Decisions[k] = v
	}
	s.Decisions["query_hits"], s.Decisions["query_misses"] = c.QueryHits, c.QueryMiss
	s.Decisions["migrations"] = c.Migrations
	s.Evictions["device"] = c.DeviceEvictions
	s.Store["exports"], s.Store["exports_failed"] = c.Exports, c.ExportFailed
	if m := r.l.resolved.host.Mech; m.Prefetch != mech.PrefetchNone {
		s.Store["prefetches"], s.Store["prefetch_used"], s.Store["prefetch_late"] = c.Prefetches, c.PrefetchUsed, c.PrefetchLate
		if r.l.resolved.host.MaxConcurrency == 0 {
			s.Store["prefetch_deferred"], s.Store["prefetch_staged_peak_bytes"] = c.PrefetchDeferred, c.PrefetchStagedPeakBytes
		} else {
			s.Store["lookahead_window"] = int64(r.sys.LookAheadTurns())
			s.Store["lookaheads"], s.Store["lookahead_used"] = c.LookAheads, c.LookAheadUsed
			s.Store["lookahead_wasted"] = c.LookAheadWasted
		}
	}
	if rs := r.l.resolved; rs.host.Mech.PreloadOn(rs.host.Run(len(rs.tiers))) {
		s.Store["preloads"], s.Store["preload_used"], s.Store["preload_wasted"] = c.Preloads, c.PreloadUsed, c.PreloadWasted
	}
	if m := r.l.resolved.host.Mech; m.Save == mech.SaveAsync {
		s.Store["exports_blocked"], s.Store["exports_dropped"] = c.ExportsBlocked, c.ExportsDropped
	}
	k := res.Counted
	s.Conservation = map[string]int64{"requests": k.Requests, "decided": k.Decided, "queries": k.Queries,
		"hits": k.Hits, "misses": k.Misses, "exports_started": k.ExportsStarted, "exports_ended": k.ExportsEnded,
		"exports_dropped": k.ExportsDropped}
	if e := r.l.resolved.host.Engine; e.KVAlloc == hostcpu.AllocIncremental {
		s.Engine = &reports.EngineSummary{KVAlloc: e.KVAlloc.String(), Preemption: e.Preemption.String(), Preemptions: c.Preemptions,
			PreemptedTokensRecomputed: c.PreemptedTokensRecomputed, PreemptedBytesSwapped: c.PreemptedBytesSwapped,
			PreemptedBytesStored: c.PreemptedBytesStored, PeakRunning: c.PeakRunning, MeanBatch: c.MeanBatch()}
	}
	r.fillComponents(&s, now)
	r.hostFigures(&s, now, output)
	if r.l.resolved.functional != nil {
		f := r.sys.FunctionalCounts()
		s.Functional = map[string]int64{"imports_verified": f.Imports, "corrupt_detected": f.CorruptDetected,
			"unreadable": f.Unreadable, "faults_injected": f.Injected}
	}
	return s
}

// afterWarmup summarises the completed requests among records (in
// arrival order) after the first warmup of them, arrived, completed or
// not; nil without a warm-up.
func afterWarmup(records []hostcpu.Record, warmup int) *reports.WarmupSummary {
	if warmup == 0 {
		return nil
	}
	w := &reports.WarmupSummary{WarmupTurns: warmup}
	var ttft, fromAdmission []float64
	for _, rec := range records[min(warmup, len(records)):] {
		if !rec.Done {
			continue
		}
		ttft, fromAdmission = append(ttft, ms(rec.TTFT)), append(fromAdmission, ms(rec.Prefill))
		w.PromptTokens += rec.PromptTokens
		w.ReusedTokens += rec.ReusedTokens
	}
	w.Turns, w.TTFTms, w.TTFTFromAdmissionMs = len(ttft), reports.NewPercentiles(ttft), reports.NewPercentiles(fromAdmission)
	if w.PromptTokens > 0 {
		w.HitRatioTokens = float64(w.ReusedTokens) / float64(w.PromptTokens)
	}
	return w
}

// resumedTurn reports whether a request continues a context that was not
// on the accelerator: a later turn looked up or recomputed, or any request
// whose lookup hit the store, a first one included (a block-keyed trace's
// request reusing a prefix another stored). In a one-turn trace the hits
// are its resumed requests: until 2026-11-27 they were left out, and a
// Mooncake replay summarised no wait for KV at all.
func resumedTurn(rec hostcpu.Record) bool {
	return rec.Decision == hostcpu.Query || rec.Decision == hostcpu.Recomputed || rec.Hit
}

// sustainedPerSession turns a run's total into its rate at the load kept
// up for good: over the sessions, times the sessions per second delivered
// while they arrived.
func (r *Run) sustainedPerSession(load *reports.Load) float64 {
	return load.DeliveredSessionsPerS / float64(len(r.workload.Sessions))
}

// end is the run's simulated end: its last event, or the last write
// reaching a storage device's medium if that comes later.
func (r *Run) end() sim.Time {
	end := r.eng.Now()
	for _, d := range r.tierDevs {
		end = max(end, d.Traffic().DrainedAt)
	}
	return end
}

// fillComponents adds the bytes, utilisations and store figures.
func (r *Run) fillComponents(s *reports.Summary, now sim.Time) {
	var storage memory.Traffic
	for _, d := range r.tierDevs {
		t := d.Traffic()
		storage.BytesRead, storage.BytesWritten, storage.ReadBusy = storage.BytesRead+t.BytesRead, storage.BytesWritten+t.BytesWritten, storage.ReadBusy+t.ReadBusy
	}
	s.Bytes["storage_read"], s.Bytes["storage_write"] = storage.BytesRead, storage.BytesWritten
	add := func(key string, v int64) { s.Bytes[key] += v }
	busy := func(key string, t sim.Time) {
		if now > 0 {
			s.Utilization[key] += t.Seconds() / now.Seconds() / float64(len(r.nodes))
		}
	}
	for _, n := range r.nodes {
		host := n.host.Traffic()
		add("host_memory_read", host.BytesRead)
		add("host_memory_write", host.BytesWritten)
		add("gpu_pcie_h2d", n.gpu.HostToCard.Stats().Bytes)
		add("gpu_pcie_d2h", n.gpu.CardToHost.Stats().Bytes)
		busy("accelerator", n.exec.Stats().Busy)
		busy("gpu_pcie_h2d", n.gpu.HostToCard.Stats().Busy)
		if n.card != nil {
			add("fpga_pcie_h2c", n.card.HostToCard.Stats().Bytes)
			add("fpga_pcie_c2h", n.card.CardToHost.Stats().Bytes)
			add("p2p_to_gpu", n.p2pTo.Stats().Bytes)
			add("p2p_from_gpu", n.p2pFrom.Stats().Bytes)
			add("exchange_memory", n.exchange.Stats().Bytes)
			busy("fpga_pcie_h2c", n.card.HostToCard.Stats().Busy)
			busy("p2p_to_gpu", n.p2pTo.Stats().Busy)
		}
		for _, remote := range n.remotes {
			to, from := remote.Links()
			add("network_to_pool", to.Bytes)
			add("network_from_pool", from.Bytes)
		}
	}
	for i := range r.nodes {
		busy("cpu", sim.TimeOf(r.sys.CPUStats(i, now).Utilisation*float64(now)))
	}
	if now > 0 { // the pool's, shared by the nodes: ReadBusy x nodes passed MaxTime (1024 nodes, 2.5 h of reads) and went negative
		s.Utilization["storage_link_read"] += storage.ReadBusy.Seconds() / now.Seconds()
	}
	s.Tiers = r.tierSummaries(now, &s.Load)
	if r.dir != nil {
		st := r.dir.Stats()
		s.Evictions["store"], s.Evictions["store_expired"] = r.poolTotal(func(t kvstore.TierStats) int64 { return t.Evictions }),
			r.poolTotal(func(t kvstore.TierStats) int64 { return t.Expirations })
		s.InvariantChecks = st.Checks
		f1, f2 := r.dir.FIFOLevels()
		s.Store["links"], s.Store["fifo1_regions"], s.Store["fifo2_regions"] = int64(r.dir.Links()), int64(f1), int64(f2)
		s.Store["regions_allocated"], s.Store["regions_freed"] = st.RegionsAllocated, st.RegionsFreed
		s.Store["lookups"], s.Store["hops"] = st.Lookups, st.Hops
	}
}

// tierSummaries are each storage tier's figures: what the pool did in it
// and what its device saw.
func (r *Run) tierSummaries(now sim.Time, load *reports.Load) []reports.TierSummary {
	if r.pool == nil {
		return nil
	}
	var out []reports.TierSummary
	for i, d := range r.tierDevs {
		st, dir, dev := r.pool.Stats(i), r.pool.Tier(i), d.Traffic()
		t := reports.TierSummary{Name: r.pool.Name(i), Device: r.l.resolved.tierDevices[i],
			CapacityBytes: int64(dir.Regions()) * dir.Config().RegionBytes, Hits: dir.Stats().Hits, Lookups: dir.Stats().Lookups,
			BytesRead: dev.BytesRead, BytesWritten: dev.BytesWritten, DemotedIn: st.DemotedIn, DemotedOut: st.DemotedOut,
			Promoted: st.Promoted, Evictions: st.Evictions, Expirations: st.Expirations, Objects: int64(dir.Links()), HeldBytes: dir.HeldBytes()}
		if drive, drives, ok := r.tierDrives(i); ok {
			t.Drives, t.RatedDWPD = drives, drive.RatedDWPD
			if now > 0 {
				t.DriveBytesPerDay = float64(dev.BytesWritten) / float64(drives) * (86400 / now.Seconds())
				t.DriveWritesPerDay = t.DriveBytesPerDay / float64(drive.CapacityBytes)
			}
			if load.Judged {
				perDrive := float64(dev.BytesWritten) / float64(drives)
				t.SustainedDriveWritesPerDay = perDrive * r.sustainedPerSession(load) * 86400 / float64(drive.CapacityBytes)
			}
		}
		out = append(out, t)
	}
	return out
}

// tierDrives is the SSD preset a tier is made of, as the maker sells it,
// and how many drives its bytes stripe over; ok is false for a tier of
// DRAM. The preset's capacity, not the address space the run gives each
// drive (its share of the store), is what a drive write is: the rating is
// for the drive sold, and a store of 2 TB over two 3.84 TB drives writes a
// drive's worth when it writes 3.84 TB to each (until 2026-11-26 the
// one-tier form counted a drive write at its 1 TB share, 3.84 times too
// many, and an unlimited store's next to none).
func (r *Run) tierDrives(i int) (memory.SSDConfig, int, bool) {
	rs := r.l.resolved
	drives := 1
	if len(r.l.Storage.Tiers) == 0 && i == len(r.tierDevs)-1 {
		drives = rs.drives
	}
	cfg, err := memory.SSDPreset(rs.tierDevices[i])
	return cfg, drives, err == nil
}

// poolTotal sums one of the tiers' counts over every tier: the objects
// the pool dropped for good (a demotion is not an eviction), or those the
// TTL deleted (until 2026-11-27 store_expired read the top tier's alone).
func (r *Run) poolTotal(count func(kvstore.TierStats) int64) int64 {
	var n int64
	for i := range r.pool.Tiers() {
		n += count(r.pool.Stats(i))
	}
	return n
}
