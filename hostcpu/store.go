package hostcpu

import (
	"github.com/kvcosim/kvcosim/kvstore"
	"strconv"

	"github.com/kvcosim/kvcosim/fpga"
	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
)

// The designs' query, import and export paths.
//
// fpga: the node's FPGA engine queries (tokens by DMA, hash, tables in
// host memory across PCIe, storage into the card's HBM); the accelerator
// then pulls the imported KV over the peer-to-peer link. An export pushes
// the updated KV over the same link and the FPGA stores it.
//
// cpu: a CPU core hashes the tokens and walks the tables in host DRAM; the
// KV moves storage -> host memory (bounce buffer) -> PCIe -> accelerator,
// and back the same way on export.

// query starts the store lookup for a request.
func (s *System) query(slot int) {
	r := s.reqs.At(slot)
	r.stageStart = s.eng.Now()
	s.counts.Queries++
	n := s.nodes[r.node]
	if s.cfg.Design == FPGAStore {
		q := fpga.QueryRequest{Session: r.sess.id, TokenBytes: 4 * r.sess.historyLen,
			Reply: fpga.Reply{To: queryReplies{s}, Arg: int64(slot)}}
		if s.cfg.Scheme == kvstore.SchemeBlock {
			q.Blocks, q.TokenBytes = r.blockKeys, 4*r.promptLen
			if len(r.sess.plan.Turns[r.sess.turn].BlockKeys) > 0 {
				q.TokenBytes = 0 // the trace gives the keys: nothing to hash
			}
		} else {
			q.Key = s.patentKey(r.sess)
		}
		n.FPGA.Query(q)
		return
	}
	// design cpu: look up functionally now (once: its outcome and extents
	// come from the same walk), charge a core for the hashing and the
	// table walk
	now := s.eng.Now()
	var hops, buckets int
	var hashed int64
	if s.cfg.Scheme == kvstore.SchemeBlock {
		matched, h, err := s.dir.LookupPrefix(now, r.blockKeys)
		s.check(err)
		r.found = fpga.Result{MatchedBlocks: matched, Hops: h}
		r.reads = s.dir.PrefixExtents(r.blockKeys[:matched])
		hops, buckets, hashed = h, min(matched+1, len(r.blockKeys)), 4*r.promptLen
	} else {
		res, err := s.dir.Lookup(now, s.patentKey(r.sess))
		s.check(err)
		r.found = fpga.Result{Hit: res.Hit, Hops: res.Hops}
		r.reads = s.dir.ReadExtents(res)
		hops, buckets, hashed = res.Hops, 1, 4*r.sess.historyLen
	}
	service := s.cfg.CPUHashBandwidth.TransferTime(hashed) + sim.Time(hops+buckets)*s.cfg.HostAccessLatency
	n.cpu.Submit(sim.Job{Service: service, Done: sim.Event{Handler: s, Op: opQueried, Arg: int64(slot)}})
}

// queryReplies takes the FPGA engine's query results back to their
// requests.
type queryReplies struct{ s *System }

// Receive keeps the result with its request and goes on.
func (q queryReplies) Receive(slot int64, res fpga.Result) {
	q.s.reqs.At(int(slot)).found = res
	q.s.queried(int(slot))
}

// queried takes the lookup's result and starts the import of a hit.
func (s *System) queried(slot int) {
	r := s.reqs.At(slot)
	now := s.eng.Now()
	res := r.found
	s.span(r.node, s.storePart(), "query", r.sess.id, r.rec.Turn, r.stageStart, 4*r.promptLen,
		"hit", strconv.FormatBool(res.Hit || res.MatchedBlocks > 0), "hops", strconv.Itoa(res.Hops), "matched_blocks", strconv.Itoa(res.MatchedBlocks))
	r.rec.QueryTime = now - r.stageStart
	r.stageStart = now
	var reused int64
	if s.cfg.Scheme == kvstore.SchemeBlock {
		reused = min(int64(res.MatchedBlocks)*s.cfg.BlockTokens, r.promptLen)
		r.rec.Hit = res.MatchedBlocks > 0
	} else if res.Hit {
		reused, r.rec.Hit = r.sess.historyLen, true
	}
	if r.rec.Hit {
		s.counts.QueryHits++
	} else {
		s.counts.QueryMiss++
	}
	r.rec.ReusedTokens = reused
	if reused == 0 {
		s.imported(slot)
		return
	}
	bytes := reused * s.cfg.KVBytesPerToken
	r.rec.ImportBytes = bytes
	n := s.nodes[r.node]
	if s.cfg.Design == FPGAStore {
		// the FPGA imported into its HBM; the accelerator pulls it over P2P
		// (or the FPGA wrote straight into the accelerator's memory)
		r.pendingImport = 1
		var hops []hop
		if n.P2PToGPU != nil {
			hops = []hop{{link: n.P2PToGPU}}
		}
		s.moveExtent(slot, hops, bytes, opImported)
		return
	}
	r.pendingImport = len(r.reads)
	for _, e := range r.reads {
		s.moveExtent(slot, []hop{{dev: n.Storage, addr: e.Addr}, {dev: n.HostMemory, write: true}, {link: n.ToGPU}}, e.Bytes, opImported)
	}
}

// imported counts the import's parts; with the last the request queues.
func (s *System) imported(slot int) {
	r := s.reqs.At(slot)
	if r.pendingImport > 1 {
		r.pendingImport--
		return
	}
	r.pendingImport = 0
	now := s.eng.Now()
	if r.rec.ReusedTokens > 0 {
		r.rec.Import = now - r.stageStart
		s.span(r.node, partStorage, "import", r.sess.id, r.rec.Turn, r.stageStart, r.rec.ImportBytes)
		if s.fn != nil && !s.readImport(r) {
			r.rec.ReusedTokens = 0 // the bytes failed their checks: recompute
		}
	}
	r.stageStart = now
	s.enqueue(slot)
}

// hop is one step of a data movement: a device access or a link transfer.
type hop struct {
	dev   memory.Device
	addr  int64
	write bool
	link  *sim.Link
}

// transfer moves bytes through hops, one after another, then raises op
// for the request (or export) id.
type transfer struct {
	hops  []hop
	step  int
	bytes int64
	op    int32
	id    int64
}

// moveExtent starts a transfer of bytes through hops.
func (s *System) moveExtent(id int, hops []hop, bytes int64, op int32) {
	t := s.moves.Put(transfer{hops: hops, bytes: bytes, op: op, id: int64(id)})
	s.transferStep(t)
}

// transferStep issues the next hop of a transfer, or finishes it.
func (s *System) transferStep(t int) {
	tr := s.moves.At(t)
	if tr.step == len(tr.hops) {
		done := s.moves.Take(t)
		s.Handle(sim.Event{Handler: s, Op: done.op, Arg: done.id})
		return
	}
	h := tr.hops[tr.step]
	tr.step++
	next := sim.Event{Handler: s, Op: opTransfer, Arg: int64(t)}
	switch {
	case h.link != nil:
		h.link.Transfer(tr.bytes, next)
	case tr.bytes > 0:
		h.dev.Access(memory.Request{Addr: h.addr, Bytes: tr.bytes, Write: h.write, Done: next})
	default:
		s.transferStep(t)
	}
}

// check records an invariant violation from the store and stops the run.
func (s *System) check(err error) {
	if err != nil && s.failure == nil {
		s.failure = err
		s.eng.Stop()
	}
}
