package hostcpu

import (
	"github.com/kvcosim/kvcosim/kvstore"
	"strconv"

	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
)

// query starts the store lookup for a request.
func (s *System) query(slot int) {
	s.reqs.At(slot).stageStart = s.eng.Now()
	s.counts.Queries++
	s.store.Query(slot)
}

// queryObject is what a request looks for: the session's patent key, or
// the prompt's block keys.
func (s *System) queryObject(r *request) kvstore.Object {
	if s.cfg.Scheme == kvstore.SchemeBlock {
		return kvstore.Object{Blocks: r.blockKeys}
	}
	return kvstore.Object{Key: s.patentKey(r.sess)}
}

// queried takes the lookup's result and starts the import of a hit.
func (s *System) queried(slot int) {
	r := s.reqs.At(slot)
	now := s.eng.Now()
	res := r.found
	s.span(r.node, s.store.Part(), TaskQuery, "", r.sess.id, r.rec.Turn, r.stageStart, 4*r.promptLen,
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
	r.rec.ImportBytes = reused * s.cfg.KVBytesPerToken
	r.pendingImport = s.store.Import(slot)
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
		s.span(r.node, PartStorage, TaskImport, "", r.sess.id, r.rec.Turn, r.stageStart, r.rec.ImportBytes)
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
