package hostcpu

import (
	"fmt"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/hostcpu/mech"
	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/sim"
)

// loadState is where a layer-wise load stands.
type loadState int8

const (
	loadNone     loadState = iota
	loadAwaiting           // found; starts at admission
	loadLoading            // moving into the accelerator
	loadLanded             // landed; its first iteration not yet held to it
	loadApplied            // done with
)

// prefetchState is where a request's prefetch stands.
type prefetchState int8

const (
	prefetchNone     prefetchState = iota
	prefetchMoving                 // below-top extents on their way to host memory
	prefetchLanded                 // in host memory
	prefetchBlocked                // admitted while moving: the load starts when it lands
	prefetchDeferred               // beyond an open loop's look-ahead window: starts when the window reaches it
)

// layerwise is the layer-wise load (store.load: layerwise): a request's
// import starts at its admission and each layer of its first iteration
// waits for its own KV.
type layerwise struct{ s *System }

// prefetcher is the queue prefetch (store.prefetch: queue): a queued
// request's KV found below the top tier moves into host memory while the
// request waits. In an open loop every request is looked up as it
// arrives, so the queue may hold thousands; the prefetch reaches only
// the node's look-ahead window of them (walk), as CachedAttention's
// look-ahead spans as many jobs as its host DRAM holds (section 3.3).
type prefetcher struct{ s *System }

// startLoad begins a layer-wise load at admission: from host memory when a
// prefetch has landed, after it when one is still moving, else from
// where the store found it.
func (lw *layerwise) startLoad(slot int) {
	s := lw.s
	if s.preloads.usePreload(slot) {
		return
	}
	r := s.reqs.At(slot)
	r.loadStart, r.load = s.eng.Now(), loadLoading
	switch r.prefetch {
	case prefetchMoving:
		s.counts.PrefetchLate++
		r.prefetch = prefetchBlocked // the import starts when it lands
		return
	case prefetchLanded:
		s.counts.PrefetchUsed++
	case prefetchDeferred: // the head is always in the window, and every pop advances it
		s.check(fmt.Errorf("hostcpu: at %v: node%d: request %d was admitted while its prefetch waited for the look-ahead window (INV-42)", s.eng.Now(), r.node, r.rec.ID))
	}
	r.pendingImport = s.importFound(slot)
}

// loaded ends a layer-wise load now; an iteration held for it goes on.
func (lw *layerwise) loaded(slot int) {
	s := lw.s
	lw.landed(slot, s.eng.Now())
	r := s.reqs.At(slot)
	if n := s.nodes[r.node]; n.loadWait {
		n.loadWait = false
		s.iterationDone(n)
	} else if s.cfg.Mech.LoadWait == mech.LoadWaitRequest {
		s.kick(n) // it may be the only request the accelerator waits for
	}
}

// landed records a layer-wise load whose KV landed at end.
func (lw *layerwise) landed(slot int, end sim.Time) {
	s := lw.s
	r := s.reqs.At(slot)
	r.load, r.loadEnd = loadLanded, end
	s.fetch.release(s.nodes[r.node], &r.staged) // the load has read its prefetched copy
	r.rec.Import = end - r.loadStart
	s.span(r.node, PartStorage, TaskImport, "", r.sess.id, r.rec.Turn, r.loadStart, r.rec.ImportBytes)
}

// sitsOut reports whether a request stays out of the next iteration: its
// layer-wise load is still moving and store.load_wait is request.
func (lw *layerwise) sitsOut(r *request) bool {
	s := lw.s
	return r.load == loadLoading && s.cfg.Mech.LoadWait == mech.LoadWaitRequest
}

// holdForLoads keeps an iteration from ending before its members'
// layer-wise loads allow: each layer of the iteration starts when the
// layer before is done and its own KV has landed. Read in address order
// at an even rate over D, layer i lands at share f_i of D, and with C
// the iteration's compute the last layer ends at
// max(start + C, load start + max(f_0 D + C, D + C/L)), as f_i grows
// linearly in i. The batch shares the iteration, so all of it waits.
// It returns true while the iteration is held.
func (lw *layerwise) holdForLoads(n *nodeState) bool {
	s := lw.s
	now := s.eng.Now()
	end := now
	for _, m := range n.members {
		r := s.reqs.At(m.slot)
		switch r.load {
		case loadLoading:
			n.loadWait = true
			return true
		case loadLanded:
			r.load = loadApplied
			own := max(lw.layerwiseEnd(r, n.iterCost), now)
			end = max(end, own)
			if s.cfg.Mech.LoadWait == mech.LoadWaitRequest { // it sat out from its admission to this iteration's start
				r.rec.LoadStall = n.iterEnd - n.iterCost - r.admitted
			} else {
				r.rec.LoadStall = own - n.iterEnd
			}
			r.rec.KVWait = r.rec.Parked + r.rec.QueryTime + r.rec.LoadStall
		}
	}
	if end > now {
		s.eng.Schedule(end, sim.Event{Handler: s, Op: opIteration, Arg: int64(n.index)})
		return true
	}
	return false
}

// layerwiseEnd is when the last layer of an iteration of compute c ends
// for a request whose load ran from loadStart to loadEnd.
func (lw *layerwise) layerwiseEnd(r *request, c sim.Time) sim.Time {
	s := lw.s
	d := r.loadEnd - r.loadStart
	num, den := mech.FirstLayerShare(s.cfg.Mech.Layout, s.cfg.Layers)
	return r.loadStart + accel.LayerwiseEnd(d, c, s.cfg.Layers, num, den)
}

// prefetch starts moving a queued request's KV found below the top tier
// into host memory (store.prefetch: queue).
func (pf *prefetcher) prefetch(slot int) {
	s := pf.s
	r := s.reqs.At(slot)
	if s.cfg.Mech.Prefetch != mech.PrefetchQueue || s.preloads.preloaded(r) {
		return // no prefetch, or the KV is on its way into the accelerator already
	}
	n := s.nodes[r.node]
	if n.KV.BlocksFor(r.rec.PromptTokens+r.rec.OutputTokens) > n.KV.Total() {
		return // it will be rejected at admission: nothing to fetch for
	}
	if r.sess.raising > 0 { // a look-ahead raise is on its way up: wait for it
		r.prefetch, r.prefetchParts, r.sess.waiter = prefetchMoving, r.sess.raising, slot
		s.counts.Prefetches++
		return
	}
	if b := belowTop(r.found.Extents); s.closed == nil && b > 0 {
		if staged, past := pf.walk(n); !past || !pf.inWindow(n.waiting.Len(), staged+b) {
			r.prefetch = prefetchDeferred // it joins the queue's tail beyond the window
			s.counts.PrefetchDeferred++
			return
		}
	}
	pf.start(slot)
}

// start moves the request's KV found below the top tier into host memory.
func (pf *prefetcher) start(slot int) {
	s := pf.s
	r := s.reqs.At(slot)
	n := s.nodes[r.node]
	var below int64
	for _, e := range r.found.Extents { // the parts land in later events, after the count is made
		if e.Tier > 0 && e.Bytes > 0 {
			r.prefetchParts++
			below += e.Bytes
			s.moves.start(ticket(opPrefetched, slot), n.ToHost(e.Tier, e.Addr), e.Bytes)
		}
	}
	if r.prefetchParts > 0 {
		r.prefetch = prefetchMoving
		s.counts.Prefetches++
		if s.closed == nil {
			r.staged = below
			pf.hold(n, below)
		}
	}
}

// hold counts bytes of prefetched KV into node n's host memory (bytes <
// 0: out of it), and the most any node has held at once.
func (pf *prefetcher) hold(n *nodeState, bytes int64) {
	n.staged += bytes
	c := &pf.s.counts
	c.PrefetchStagedPeakBytes = max(c.PrefetchStagedPeakBytes, n.staged)
}

// release counts a prefetched copy of *staged bytes out of node n's host
// memory, once the load or pre-load that reads it has landed.
func (pf *prefetcher) release(n *nodeState, staged *int64) {
	pf.hold(n, -*staged)
	*staged = 0
}

// advance starts the prefetches an open loop's look-ahead window now
// reaches on the node: its queue's head has moved, or a request's KV has
// left host memory for the accelerator's read buffer.
func (pf *prefetcher) advance(n *nodeState) {
	if pf.s.closed == nil && pf.s.cfg.Mech.Prefetch == mech.PrefetchQueue {
		pf.walk(n)
	}
}

// walk goes through the node's waiting requests in queue order as far as
// an open loop's look-ahead window reaches, starting the prefetches that
// waited for it. It returns the bytes the requests in the window stage
// and whether the window reaches past the queue's tail.
func (pf *prefetcher) walk(n *nodeState) (staged int64, past bool) {
	s := pf.s
	for i := range n.waiting.Len() {
		slot := n.waiting.At(i)
		r := s.reqs.At(slot)
		b := stagedBytes(r)
		if b == 0 {
			continue
		}
		if !pf.inWindow(i, staged+b) {
			return staged, false
		}
		staged += b
		if r.prefetch == prefetchDeferred {
			r.prefetch = prefetchNone
			pf.start(slot)
		}
	}
	return staged, true
}

// inWindow reports whether the i-th waiting request (0: the next to be
// admitted) lies in an open loop's look-ahead window, with staged the
// bytes it and those before it stage: the next accelerator.max_batch
// always, and beyond them store.prefetch_window requests or, with auto, as
// many as the node's share of the top tier holds what they all stage.
func (pf *prefetcher) inWindow(i int, staged int64) bool {
	s := pf.s
	switch w := s.cfg.Mech.PrefetchWindowTurns; {
	case i < s.cfg.MaxBatch:
		return true
	case w != mech.AutoWindow:
		return i < s.cfg.MaxBatch+w
	}
	return staged <= topTierBytes(s.pool)/int64(len(s.nodes))
}

// stagedBytes is the KV a waiting request stages in host memory: what it
// found below the top tier, with its prefetch moving, landed or waiting
// for the window.
func stagedBytes(r *request) int64 {
	switch r.prefetch {
	case prefetchMoving, prefetchLanded, prefetchDeferred:
		return belowTop(r.found.Extents)
	}
	return 0
}

// belowTop is how many of the extents' bytes lie below the top tier.
func belowTop(xs []kvstore.Extent) int64 {
	var b int64
	for _, x := range xs {
		if x.Tier > 0 {
			b += x.Bytes
		}
	}
	return b
}

// prefetched counts a prefetch's parts; with the last, a load that waits
// for it starts.
func (pf *prefetcher) prefetched(slot int) {
	s := pf.s
	r := s.reqs.At(slot)
	if r.prefetch != prefetchMoving && r.prefetch != prefetchBlocked {
		s.check(fmt.Errorf("hostcpu: at %v: node%d: a prefetch landed for request %d, which has none moving", s.eng.Now(), r.node, r.rec.ID))
		return
	}
	if r.prefetchParts--; r.prefetchParts > 0 {
		return
	}
	blocked := r.prefetch == prefetchBlocked
	r.prefetch = prefetchLanded
	if blocked {
		r.pendingImport = s.importFound(slot)
		return
	}
	s.preloads.waitingChanged()
}
