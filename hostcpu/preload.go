package hostcpu

import (
	"fmt"

	"github.com/kvcosim/kvcosim/hostcpu/mech"
	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/sim"
)

// Pre-loading: CachedAttention's layer-wise pre-loading reads a queued
// job's KV into a read buffer in HBM while the jobs before it run, so that
// the job finds its KV there when it starts. In a closed loop the turns
// held back for a slot are that queue: with store.preload: queue the
// top-tier object of the next held-back turn whose session is idle moves
// into its node's read buffer (store.preload_buffer bytes), one object at
// a time per node, in queue order. When the turn is admitted, its
// layer-wise load is that move, begun early; the buffer's bytes become the
// request's own KV memory.
//
// With store.preload: waiting the queue is a node's requests waiting for
// admission after their lookups, as an open loop forms it: the KV each
// found, from host memory (its tier on top, or a prefetch that has
// landed) or its tier, moves into the read buffer in the same way, among
// as many of the requests next in line as a batch holds.

// preloader is the pre-loads of the queued turns (store.preload: queue
// or waiting), on or off for the run.
type preloader struct {
	s  *System
	on bool
}

// preloadState is where a session's pre-load stands.
type preloadState int8

const (
	preloadNone    preloadState = iota
	preloadMoving               // its parts on their way into the read buffer
	preloadLanded               // in the read buffer
	preloadDropped              // wasted while moving: its parts still land
)

// preload is a session object's move into a node's read buffer.
type preload struct {
	state      preloadState
	key        kvstore.Key
	node       int
	parts      int
	bytes      int64
	start, end sim.Time
	waiter     int // the slot of a request whose load is this move, still moving; -1: none
	// staged is a prefetch's copy in host memory that the move reads,
	// freed when it lands
	staged int64
}

// held reports whether the pre-load is moving into, or in, the read
// buffer and no turn has used or wasted it yet.
func (p preload) held() bool { return p.state == preloadMoving || p.state == preloadLanded }

// preloadQueued starts the pre-loads of the queued turns: the closed
// loop's held-back turns (store.preload: queue) or the nodes' waiting
// requests (waiting).
func (pl *preloader) preloadQueued() {
	switch {
	case pl.s.cfg.Mech.Preload == mech.PreloadWaiting:
		pl.waitingChanged()
	case pl.on:
		pl.preloadHeldBack()
	}
}

// waitingChanged walks each node's waiting requests when one may have
// become pre-loadable (its lookup, prefetch or export ended) or the
// queue's head moved (an admission, a refusal); only store.preload:
// waiting walks them.
func (pl *preloader) waitingChanged() {
	if !pl.on || pl.s.cfg.Mech.Preload != mech.PreloadWaiting {
		return
	}
	for _, n := range pl.s.nodes {
		pl.preloadWaiting(n)
	}
}

// preloadHeldBack starts the pre-loads of the held-back turns in queue
// order, among as many of them as the look-ahead window spans (at least
// as many as the loop has slots): each node moves one object at a time,
// and a turn whose object does not fit its node's read buffer holds back
// the turns behind it, so the turn next in line gets its KV first.
func (pl *preloader) preloadHeldBack() {
	s := pl.s
	c := s.closed
	window := max(s.ahead.aheadWindow(), s.cfg.MaxConcurrency)
	for i, seen := c.next, 0; seen < window && i < len(c.queue); i++ {
		ref := c.queue[i]
		if ref.started {
			continue
		}
		seen++
		sess := s.sessions[ref.session]
		if sess.turn != ref.turn || !pl.preloadable(sess) {
			continue
		}
		n := s.nodes[sess.lastNode]
		if n.preloading {
			continue
		}
		extents, bytes := s.pool.OnTop(*sess.exported), pl.nextTurnImport(sess)
		if len(extents) == 0 || bytes == 0 {
			continue // not in the top tier (yet: a raise may bring it), or the turn will read none of it
		}
		if n.preloadBytes+bytes > s.cfg.Mech.PreloadBufferBytes {
			return // in queue order: no later turn goes first
		}
		pl.startPreload(sess, n, readable(extents, bytes), bytes, false)
	}
}

// preloadWaiting starts the pre-load of the first of the node's next
// MaxBatch waiting requests that may have one, in queue order, unless a
// pre-load is moving; a request whose KV does not fit the read buffer
// holds back those behind it.
func (pl *preloader) preloadWaiting(n *nodeState) {
	s := pl.s
	for i := 0; i < min(n.waiting.Len(), s.cfg.MaxBatch) && !n.preloading; i++ {
		r := s.reqs.At(n.waiting.At(i))
		if !pl.waitingPreloadable(n, r) {
			continue
		}
		if n.preloadBytes+r.rec.ImportBytes > s.cfg.Mech.PreloadBufferBytes {
			return
		}
		staged := r.prefetch == prefetchLanded
		pl.startPreload(r.sess, n, r.found.Extents, r.rec.ImportBytes, staged)
		if staged { // the pre-load reads the landed prefetch from host memory
			s.counts.PrefetchUsed++
			r.prefetch = prefetchNone
			r.sess.preload.staged, r.staged = r.staged, 0 // freed when the pre-load lands
			s.fetch.advance(n)                            // the request stages no more: the window reaches further
		}
	}
}

// waitingPreloadable reports whether a waiting request may be pre-loaded:
// its lookup found its session's object, whose KV it will load layer by
// layer, no prefetch of it is moving, the export before it is over, it
// will not be refused at admission, and it is not pre-loaded yet.
func (pl *preloader) waitingPreloadable(n *nodeState, r *request) bool {
	sess := r.sess
	return r.load == loadAwaiting && r.found.Hit && r.rec.ImportBytes > 0 &&
		(r.prefetch == prefetchNone || r.prefetch == prefetchLanded) &&
		sess.exported != nil && !sess.exporting && sess.preload.state == preloadNone &&
		n.KV.BlocksFor(r.rec.PromptTokens+r.rec.OutputTokens) <= n.KV.Total()
}

// nextTurnImport is how many bytes of its stored object the session's
// next turn will import once its own truncation, if any, has cut the
// history: none if the turn will be refused at the window or keep none of
// the object.
func (pl *preloader) nextTurnImport(sess *session) int64 {
	s := pl.s
	turn := sess.plan.Turns[sess.turn]
	promptLen := sess.historyLen + turn.NewTokenCount
	cut := s.window.cutFor(sess.historyLen, promptLen, turn.OutputCount)
	if cut > 0 && (s.cfg.ContextPolicy != ContextTruncate || cut >= promptLen) {
		return 0 // refused at the window
	}
	return s.window.stillValid(sess.storedTokens, cut) * s.cfg.KVBytesPerToken
}

// preloaded reports whether a session's pre-load of the object its request
// found is moving into, or in, the read buffer of the request's node: the
// request needs neither a prefetch nor a raise of that object.
func (pl *preloader) preloaded(r *request) bool {
	p := r.sess.preload
	return p.held() && p.node == r.node && r.found.Hit && p.key == *r.sess.exported
}

// preloadable reports whether a session's next turn may be pre-loaded:
// its last turn and export are over, it has a stored object, it is not
// resident on an accelerator, not being raised, and not pre-loaded yet.
func (pl *preloader) preloadable(sess *session) bool {
	return !sess.dropped && !sess.holdsSlot && sess.exported != nil && !sess.exporting && sess.resident < 0 &&
		sess.raising == 0 && sess.preload.state == preloadNone
}

// startPreload moves a session's extents into node n's read buffer, from
// host memory where they are staged there.
func (pl *preloader) startPreload(sess *session, n *nodeState, extents []kvstore.Extent, bytes int64, staged bool) {
	s := pl.s
	sess.preload = preload{state: preloadMoving, key: *sess.exported, node: n.index, bytes: bytes, start: s.eng.Now(), waiter: -1}
	n.preloadBytes += bytes
	n.preloading = true
	s.counts.Preloads++
	for _, x := range extents {
		if x.Bytes > 0 {
			sess.preload.parts++
			s.moves.start(ticket(opPreloaded, int(sess.index)), n.ImportHops(x, staged), x.Bytes)
		}
	}
	if sess.preload.parts == 0 { // nothing would land: the node would wait for it forever
		s.check(fmt.Errorf("hostcpu: at %v: node %d: a pre-load of %d B for session %d has no extent to move", s.eng.Now(), n.index, bytes, sess.id))
	}
}

// preloadedPart counts a part of a pre-load landing. With the last, a
// request whose load it is has its KV, and the node's next pre-load starts.
func (pl *preloader) preloadedPart(index int64) {
	s := pl.s
	sess := s.sessions[index]
	p := &sess.preload
	if p.state != preloadMoving && p.state != preloadDropped {
		s.check(fmt.Errorf("hostcpu: at %v: a pre-load part landed for session %d, which has none moving", s.eng.Now(), sess.id))
		return
	}
	if p.parts--; p.parts > 0 {
		return
	}
	s.nodes[p.node].preloading = false
	s.fetch.release(s.nodes[p.node], &p.staged) // it has read its prefetched copy
	switch {
	case p.state == preloadDropped:
		p.state = preloadNone
	case p.waiter >= 0:
		slot := p.waiter
		p.state = preloadNone
		s.loads.loaded(slot)
	default:
		p.state, p.end = preloadLanded, s.eng.Now()
	}
	pl.preloadQueued()
}

// usePreload makes an admitted request's layer-wise load its session's
// pre-load, if there is one of the object it found on its node, and
// reports whether it did; a pre-load it cannot use is wasted. Either way
// the read buffer's bytes leave it (a used pre-load's become the
// request's KV memory).
func (pl *preloader) usePreload(slot int) bool {
	s := pl.s
	r := s.reqs.At(slot)
	p := &r.sess.preload
	if !p.held() {
		return false
	}
	defer pl.preloadQueued()
	if !pl.preloaded(r) {
		pl.settlePreload(r.sess)
		return false
	}
	s.nodes[p.node].preloadBytes -= p.bytes
	s.counts.PreloadUsed++
	r.loadStart, r.load = p.start, loadLoading
	if p.state == preloadMoving {
		p.waiter = slot
		return true
	}
	p.state = preloadNone
	s.loads.landed(slot, p.end) // at admission: nothing waits for it yet
	return true
}

// settlePreload wastes a session's pre-load that its next turn cannot use
// (or that turn never comes) and frees its bytes of the read buffer; one
// still moving lands unused.
func (pl *preloader) settlePreload(sess *session) {
	s := pl.s
	p := &sess.preload
	if !p.held() {
		return
	}
	s.nodes[p.node].preloadBytes -= p.bytes
	s.counts.PreloadWasted++
	if p.state == preloadMoving {
		p.state = preloadDropped
		return
	}
	p.state = preloadNone
}

// unsettledPreloads counts the pre-loads no turn has used or wasted: a
// run runs or refuses every turn it pre-loads for, so at the end there are
// none.
func (pl *preloader) unsettledPreloads() int64 {
	s := pl.s
	var n int64
	for _, sess := range s.sessions {
		if sess.preload.held() {
			n++
		}
	}
	return n
}
