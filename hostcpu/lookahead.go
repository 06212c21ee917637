package hostcpu

import (
	"github.com/kvcosim/kvcosim/hostcpu/mech"
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"github.com/kvcosim/kvcosim/kvstore"
)

// Look-ahead fetching: CachedAttention's scheduler sees its job queue, and
// before a job runs AttentionStore moves the job's KV from the SSD into
// host DRAM, over a window of the jobs next in line, and keeps those
// sessions' KV from eviction. In a closed loop the turns held back for a
// slot are that queue: with store.prefetch: queue the objects of the next
// PrefetchWindowTurns of them are raised into the top tier, in the
// background, before they are let in.

// lookAheads is the closed loop's look-ahead: on, it raises the objects
// of held-back turns into the top tier; an automatic window spans
// firstWindow turns until anything is stored; raises counts the sessions
// whose raise is moving.
type lookAheads struct {
	s                   *System
	on                  bool
	firstWindow, raises int
}

// raiseDepth is how many raises move at once: one, in queue order, as a
// fetcher that walks its queue, so the turn next in line gets its object
// first (the raise's own chunks keep the drive busy, streamDepth deep).
// Raising the whole window at once shares the drive among them all and
// every raise lands late (the CachedAttention replay's LLaMA-2-13B: mean
// TTFT 1.9 s against 0.34 s one at a time).
const raiseDepth = 1

// unwindowedTokens sizes the automatic window of a model without a context
// window: an object of the synthetic workload's longest prompt.
const unwindowedTokens = 8192

// firstWindow is the automatic look-ahead window before anything is
// stored: as many objects of a whole context window as the top tier holds
// beside the objects of the turns in flight (whose exports land there).
func firstWindow(cfg Config, pool *kvstore.Pool) int {
	window := cfg.ContextTokens
	if window == 0 {
		window = unwindowedTokens
	}
	return windowOf(cfg, pool, window*cfg.KVBytesPerToken)
}

// windowOf is how many objects of the given size the top tier holds
// beside those of the turns in flight.
func windowOf(cfg Config, pool *kvstore.Pool, objectBytes int64) int {
	return int(max(0, topTierBytes(pool)/objectBytes-int64(cfg.MaxConcurrency)))
}

// topTierBytes is the capacity of the pool's top tier.
func topTierBytes(pool *kvstore.Pool) int64 {
	top := pool.Tier(0)
	return int64(top.Regions()) * top.Config().RegionBytes
}

// LookAheadTurns is the closed loop's look-ahead window in turns (0:
// none), as store.prefetch_window set it or auto sizes it at the end of
// the run.
func (s *System) LookAheadTurns() int { return s.ahead.aheadWindow() }

// aheadWindow is the look-ahead window now (0: none). Auto sizes it, as
// CachedAttention sizes its window by the host memory and the sessions'
// KV, by the objects stored so far: as many of their mean size as the top
// tier holds beside those of the turns in flight.
func (la *lookAheads) aheadWindow() int {
	s := la.s
	if !la.on {
		return 0
	}
	if s.cfg.Mech.PrefetchWindowTurns != mech.AutoWindow {
		return s.cfg.Mech.PrefetchWindowTurns
	}
	var held, objects int64
	for i := range s.pool.Tiers() {
		held += s.pool.Tier(i).HeldBytes()
		objects += int64(s.pool.Tier(i).Links())
	}
	if held == 0 {
		return la.firstWindow
	}
	return windowOf(s.cfg, s.pool, held/objects)
}

// lookAhead raises the objects of the first held-back turns, as many as
// the window holds and raiseDepth at a time; those already on top stay.
func (la *lookAheads) lookAhead() {
	s := la.s
	c := s.closed
	window := la.aheadWindow()
	for i, seen := c.next, 0; seen < window && la.raises < raiseDepth && i < len(c.queue); i++ {
		if !c.queue[i].started {
			seen++
			la.raise(s.sessions[c.queue[i].session])
		}
	}
	s.preloads.preloadQueued()
}

// raise moves a session's stored object into the top tier: its extents are
// read from the lower tier into host memory (counted down in
// sess.raising), and the pool's moves (the write into the top tier, the
// demotions it causes) run in the background. A session whose turn or
// export is under way is passed over: its newest KV is on its way to the
// top tier already.
func (la *lookAheads) raise(sess *session) {
	s := la.s
	if sess.exported == nil || sess.running || sess.exporting || sess.dropped || sess.raising > 0 || sess.resident >= 0 ||
		sess.preload.held() {
		return // nothing stored, its newest KV on the way up, or resident on (or pre-loaded into) an accelerator
	}
	read, moves, err := s.pool.Raise(s.eng.Now(), *sess.exported)
	s.check(err)
	if len(read) == 0 {
		return
	}
	la.settleRaise(sess, false) // raised before and demoted again unused
	sess.raised, sess.raisedKey = true, *sess.exported
	la.keepRaised(sess, 1)
	s.counts.LookAheads++
	n := s.nodes[sess.lastNode]
	for _, x := range read {
		if x.Bytes > 0 {
			sess.raising++
			s.moves.start(ticket(opRaised, int(sess.index)), n.ToHost(x.Tier, x.Addr), x.Bytes)
		}
	}
	if sess.raising > 0 {
		la.raises++
	}
	store.MoveBetweenTiers(host{s}, sess.lastNode, moves)
}

// raisedPart counts a part of a raise landing; a request that waits for
// the raise counts it as its prefetch's. With the raise's last part the
// next raise in line starts.
func (la *lookAheads) raisedPart(index int64) {
	s := la.s
	sess := s.sessions[index]
	sess.raising--
	if slot := sess.waiter; slot >= 0 {
		if sess.raising == 0 {
			sess.waiter = -1
		}
		s.fetch.prefetched(slot)
	}
	if sess.raising == 0 {
		la.raises--
		la.lookAhead() // the next raise in line
	}
}

// meetRaise settles a session's raise at its next lookup: used when the
// lookup found the object in the top tier, wasted otherwise.
func (la *lookAheads) meetRaise(r *request) {
	la.settleRaise(r.sess, r.found.Hit && onTop(r.found.Extents))
}

// settleRaise counts a session's unsettled raise used or wasted: at its
// next lookup, or wasted when the next turn needs no lookup (its KV is
// resident, or truncation left no history) or ends the session.
func (la *lookAheads) settleRaise(sess *session, used bool) {
	s := la.s
	if !sess.raised {
		return
	}
	sess.raised = false
	la.keepRaised(sess, -1)
	if used {
		s.counts.LookAheadUsed++
	} else {
		s.counts.LookAheadWasted++
	}
}

// keepRaised counts a raised object as waiting (queue-aware eviction
// keeps the look-ahead window's objects) or no longer.
func (la *lookAheads) keepRaised(sess *session, by int) {
	s := la.s
	if s.waiting == nil {
		return
	}
	k := sess.raisedKey
	if s.waiting[k] += by; s.waiting[k] == 0 {
		delete(s.waiting, k)
	}
}

// onTop reports whether every extent lies in the top tier.
func onTop(xs []kvstore.Extent) bool {
	for _, x := range xs {
		if x.Tier > 0 {
			return false
		}
	}
	return true
}

// unsettledRaises counts the raises no turn has settled. A raise is for a
// turn already in the closed loop's queue, and a closed loop runs every
// turn, so at the end of a run there are none.
func (la *lookAheads) unsettledRaises() int64 {
	s := la.s
	var n int64
	for _, sess := range s.sessions {
		if sess.raised {
			n++
		}
	}
	return n
}
