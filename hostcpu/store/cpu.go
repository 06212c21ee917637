package store

import (
	"github.com/kvcosim/kvcosim/fpga"
	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/sim"
)

// PartCPU and PartFPGA are where a store's queries and exports run, as
// span parts.
const (
	PartCPU  = "cpu"
	PartFPGA = fpga.Part
)

// cpuStore is the software baseline (CachedAttention, LMCache): a CPU core
// hashes the tokens and walks the tables in host DRAM; the KV moves
// storage -> host memory (a bounce buffer) -> PCIe -> accelerator, and
// back the same way on export.
type cpuStore struct {
	h Host
	p Params
}

func newCPU(h Host, p Params) Store { return cpuStore{h, p} }

// Query looks the object up functionally now, once (its outcome and
// extents come from the same walk), and charges a core for hashing the
// tokens and walking the tables.
func (st cpuStore) Query(t Ticket, l Lookup) {
	found := st.find(t, l)
	hashed := 4 * l.HistoryTokens
	if st.p.Scheme == kvstore.SchemeBlock {
		hashed = 4 * l.PromptTokens
	}
	st.h.Compute(l.Node, sim.SumTime(st.p.CPUHashBandwidth.TransferTime(hashed), st.walk(found.Hops+found.BucketReads)), t)
}

// find looks a request's object up in the pool now, reports it, and
// carries out the moves between tiers it causes.
func (st cpuStore) find(t Ticket, l Lookup) kvstore.Found {
	found, moves, err := st.h.Pool().Find(st.h.Now(), l.Object)
	if err != nil {
		st.h.Fail(err)
	}
	MoveBetweenTiers(st.h, l.Node, moves)
	st.h.Found(t, found)
	return found
}

// walk is a core's time for this many host-memory accesses.
func (st cpuStore) walk(accesses int) sim.Time {
	return sim.MulTime(int64(accesses), st.p.HostAccessLatency)
}

// Import reads each found extent from storage into host memory and
// copies it into the engine's KV blocks. The bytes the session's
// asynchronous export is still writing are copied from its buffer in host
// memory instead: they are not in their tier yet (LMCache serves them
// from its CPU cache, CachedAttention from host memory).
func (st cpuStore) Import(t Ticket, in Import) int {
	n := st.h.Node(in.Node)
	parts := 0
	for _, e := range in.Extents {
		buffered, rest := unsaved(e, in.Saving)
		if buffered > 0 {
			st.h.Move(t, n.IntoEngine(), buffered)
			parts++
		}
		for _, x := range rest {
			st.h.Move(t, n.ImportHops(x, in.Staged), x.Bytes)
		}
		parts += len(rest)
	}
	return parts
}

// unsaved splits an extent into its bytes among the writes still in
// flight and the runs that are in its tier.
func unsaved(e kvstore.Extent, saving []kvstore.Extent) (buffered int64, rest []kvstore.Extent) {
	rest = []kvstore.Extent{e}
	for _, w := range saving {
		if w.Tier != e.Tier {
			continue
		}
		var left []kvstore.Extent
		for _, x := range rest {
			lo, hi := max(x.Addr, w.Addr), min(x.Addr+x.Bytes, w.Addr+w.Bytes)
			if lo >= hi {
				left = append(left, x)
				continue
			}
			buffered += hi - lo
			if x.Addr < lo {
				left = append(left, kvstore.Extent{Addr: x.Addr, Bytes: lo - x.Addr, Tier: x.Tier})
			}
			if end := x.Addr + x.Bytes; hi < end {
				left = append(left, kvstore.Extent{Addr: hi, Bytes: end - hi, Tier: x.Tier})
			}
		}
		rest = left
	}
	return buffered, rest
}

// Offload copies the KV from the accelerator into host memory.
func (st cpuStore) Offload(t Ticket, x Export) {
	n := st.h.Node(x.Node)
	st.h.Move(t, []Hop{{Link: n.FromGPU}, n.Staging(true)}, x.Bytes)
}

// Save updates the directory at once, charges a core for the hashing and
// table walks and writes the storage; the core's work and the writes run
// together.
func (st cpuStore) Save(t Ticket, x Export) int {
	n := st.h.Node(x.Node)
	res, moves, err := st.h.Pool().Save(st.h.Now(), x.Object)
	MoveBetweenTiers(st.h, x.Node, moves)
	st.h.Saved(t, Outcome{Export: res, Err: err})
	if _, bad := err.(*kvstore.InvariantError); bad {
		st.h.Fail(err)
	}
	service := sim.SumTime(st.p.CPUHashBandwidth.TransferTime(4*x.HistoryTokens), st.walk(res.Hops+3*res.Inserted+2*res.Superseded+1))
	st.h.Compute(x.Node, service, t)
	for _, w := range res.Writes {
		st.h.Move(t, []Hop{n.Staging(false), {Dev: n.Tiers[w.Tier], Addr: w.Addr, Write: true}}, w.Bytes)
	}
	return len(res.Writes) + 1
}

// Part is the CPU.
func (cpuStore) Part() string { return PartCPU }
