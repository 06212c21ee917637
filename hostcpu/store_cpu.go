package hostcpu

import (
	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/sim"
)

// cpuStore is the software baseline (CachedAttention, LMCache): a CPU core
// hashes the tokens and walks the tables in host DRAM; the KV moves
// storage -> host memory (a bounce buffer) -> PCIe -> accelerator, and
// back the same way on export.
type cpuStore struct{ s *System }

func newCPUStore(s *System) Store { return cpuStore{s} }

// Query looks the object up functionally now, once (its outcome and
// extents come from the same walk), and charges a core for hashing the
// tokens and walking the tables.
func (st cpuStore) Query(slot int) {
	st.s.lookUp(slot, func(r *request, found kvstore.Found) sim.Time {
		hashed := 4 * r.sess.historyLen
		if st.s.cfg.Scheme == kvstore.SchemeBlock {
			hashed = 4 * r.promptLen
		}
		return sim.SumTime(st.s.cfg.CPUHashBandwidth.TransferTime(hashed), sim.MulTime(int64(found.Hops+found.BucketReads), st.s.cfg.HostAccessLatency))
	})
}

// lookUp finds a request's object in the pool now, carries out the moves
// between tiers it causes, and has a core spend service on it before the
// lookup ends.
func (s *System) lookUp(slot int, service func(*request, kvstore.Found) sim.Time) {
	r := s.reqs.At(slot)
	found, moves, err := s.pool.Find(s.eng.Now(), s.queryObject(r))
	s.check(err)
	s.move(r.node, moves)
	r.found = found
	s.nodes[r.node].cpu.Submit(sim.Job{Service: service(r, found), Done: sim.Event{Handler: s, Op: opQueried, Arg: int64(slot)}})
}

// Import reads each found extent from storage into host memory and
// copies it to the accelerator. The bytes the session's asynchronous
// export is still writing are copied from its buffer in host memory
// instead: they are not in their tier yet (LMCache serves them from its
// CPU cache, CachedAttention from host memory).
func (st cpuStore) Import(slot int) int {
	s := st.s
	r := s.reqs.At(slot)
	parts := 0
	for _, e := range r.found.Extents {
		buffered, rest := unsaved(e, r.sess.saving)
		if buffered > 0 {
			s.moveExtent(slot, []hop{{link: s.nodes[r.node].ToGPU}}, buffered, opImported)
			parts++
		}
		for _, x := range rest {
			s.moveExtent(slot, s.importHops(r, x.Tier, x.Addr), x.Bytes, opImported)
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
func (st cpuStore) Offload(id int) {
	s := st.s
	t := s.exports.At(id)
	n := s.nodes[t.node]
	s.moveExtent(id, []hop{{link: n.FromGPU}, n.staging(true)}, t.bytes, opExportStep)
}

// Save updates the directory at once, charges a core for the hashing and
// table walks and writes the storage; the core's work and the writes run
// together.
func (st cpuStore) Save(id int) int {
	s := st.s
	t := s.exports.At(id)
	n := s.nodes[t.node]
	res, moves, err := s.pool.Save(s.eng.Now(), t.object())
	s.move(t.node, moves)
	t.result = exportOutcome{Export: res, Err: err}
	if _, bad := err.(*kvstore.InvariantError); bad {
		s.check(err)
	}
	service := sim.SumTime(s.cfg.CPUHashBandwidth.TransferTime(4*t.sess.historyLen),
		sim.MulTime(int64(res.Hops+3*res.Inserted+2*res.Superseded+1), s.cfg.HostAccessLatency))
	n.cpu.Submit(sim.Job{Service: service, Done: sim.Event{Handler: s, Op: opExportStep, Arg: int64(id)}})
	for _, w := range res.Writes {
		s.moveExtent(id, []hop{n.staging(false), {dev: n.Tiers[w.Tier], addr: w.Addr, write: true}}, w.Bytes, opExportStep)
	}
	return len(res.Writes) + 1
}

// Part is the CPU.
func (cpuStore) Part() string { return PartCPU }

// move carries out the pool's moves between tiers in the background:
// each extent read from its tier into host memory and written from host
// memory into its new tier, taking the devices' time without holding up
// the request that caused it.
func (s *System) move(node int, moves []kvstore.Move) {
	n := s.nodes[node]
	for _, m := range moves {
		for _, x := range m.Read {
			s.moveExtent(-1, []hop{{dev: n.Tiers[x.Tier], addr: x.Addr}, n.staging(true)}, x.Bytes, opMoved)
		}
		for _, x := range m.Write {
			s.moveExtent(-1, []hop{n.staging(false), {dev: n.Tiers[x.Tier], addr: x.Addr, write: true}}, x.Bytes, opMoved)
		}
	}
}
