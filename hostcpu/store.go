package hostcpu

import (
	"github.com/kvcosim/kvcosim/hostcpu/mech"
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"github.com/kvcosim/kvcosim/kvstore"
	"strconv"
)

// query starts the store lookup for a request.
func (s *System) query(slot int) {
	r := s.reqs.At(slot)
	r.stageStart = s.eng.Now()
	s.counts.Queries++
	s.keep(r, 1)
	s.store.Query(ticket(opQueried, slot), store.Lookup{Session: r.sess.id, Node: r.node, Object: s.keys.object(r),
		HistoryTokens: r.sess.historyLen, PromptTokens: r.promptLen, KeysGiven: len(r.sess.plan.Turns[r.sess.turn].BlockKeys) > 0})
}

// keep counts a request's keys as waiting (by +1 from its lookup) or not
// (by -1 at admission), for queue-aware eviction.
func (s *System) keep(r *request, by int) {
	if s.waiting == nil || r.kept == (by > 0) {
		return
	}
	r.kept = by > 0
	keys := r.blockKeys
	if s.cfg.Scheme != kvstore.SchemeBlock {
		keys = []kvstore.Key{s.keys.objectKey(r.sess)}
	}
	for _, k := range keys {
		if s.waiting[k] += by; s.waiting[k] == 0 {
			delete(s.waiting, k)
		}
	}
}

// queried takes the lookup's result and starts the import of a hit.
func (s *System) queried(slot int) {
	r := s.reqs.At(slot)
	now := s.eng.Now()
	res := r.found
	decided := now // the query is the decision; moving the data is import
	if r.importing {
		decided, r.importing = r.importSince, false
	}
	emitStage(s.eng.Trace(), r.node, s.store.Part(), TaskQuery, "", r.sess.id, r.rec.Turn, r.stageStart, decided, 4*r.promptLen,
		"hit", strconv.FormatBool(res.Hit || res.MatchedBlocks > 0), "hops", strconv.Itoa(res.Hops), "matched_blocks", strconv.Itoa(res.MatchedBlocks))
	r.rec.QueryTime = decided - r.stageStart
	r.stageStart = decided
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
	s.ahead.meetRaise(r)
	if reused == 0 {
		s.preloads.settlePreload(r.sess) // no load will use it
		s.imported(slot)
		return
	}
	r.rec.ImportBytes = reused * s.cfg.KVBytesPerToken
	if r.sess.cut > 0 {
		r.found.Extents = readable(r.found.Extents, r.rec.ImportBytes)
	}
	if s.cfg.Mech.Load == mech.LoadLayerwise {
		r.load = loadAwaiting // the load starts at admission
		s.fetch.prefetch(slot)
		s.enqueue(slot)
		s.preloads.waitingChanged()
		return
	}
	r.pendingImport = s.importFound(slot)
}

// importFound has the store move a request's found KV into the
// accelerator and returns in how many parts.
func (s *System) importFound(slot int) int {
	r := s.reqs.At(slot)
	return s.store.Import(ticket(opImported, slot), store.Import{Session: r.sess.id, Node: r.node, Bytes: r.rec.ImportBytes, Extents: r.found.Extents,
		Saving: r.sess.saving, Staged: r.prefetch == prefetchLanded})
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
	if r.load == loadLoading {
		s.loads.loaded(slot)
		return
	}
	if r.rec.ReusedTokens > 0 {
		r.rec.Import = now - r.stageStart
		r.rec.KVWait = r.rec.Parked + r.rec.QueryTime + r.rec.Import
		s.span(r.node, PartStorage, TaskImport, "", r.sess.id, r.rec.Turn, r.stageStart, r.rec.ImportBytes)
		if s.fn != nil && !s.fn.readImport(r) {
			r.rec.ReusedTokens = 0 // the bytes failed their checks: recompute
		}
	}
	r.stageStart = now
	s.enqueue(slot)
}

// check records an invariant violation from the store and stops the run.
func (s *System) check(err error) {
	if err != nil && s.failure == nil {
		s.failure = err
		s.eng.Stop()
	}
}
