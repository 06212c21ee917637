package hostcpu

import (
	"cmp"
	"slices"

	"github.com/kvcosim/kvcosim/sim"
)

// closedLoop replays the workload with at most limit requests in flight,
// in trace order: a slot is free again only when its request and that
// request's export have both finished, so with one slot every export
// lands before the next query.
type closedLoop struct {
	limit, inFlight int
	queue           []turnRef
	next            int
	ahead           int // the look-ahead has passed the turns before this one
}

// turnRef is one turn of one session.
type turnRef struct {
	session int64
	turn    int
	at      sim.Time // the turn's nominal arrival: the order
}

// newClosedLoop orders every turn by its nominal arrival (a timed turn's
// timestamp; otherwise the session's start plus its gaps), ties in
// session order.
func newClosedLoop(limit int, sessions []*session) *closedLoop {
	c := &closedLoop{limit: limit}
	for _, sess := range sessions {
		at := sess.plan.Start
		for i, t := range sess.plan.Turns {
			at += t.Gap
			if sess.plan.Timed {
				at = t.Arrival
			}
			c.queue = append(c.queue, turnRef{session: sess.index, turn: i, at: at})
		}
	}
	slices.SortStableFunc(c.queue, func(a, b turnRef) int { return cmp.Compare(a.at, b.at) })
	return c
}

// admitQueued starts queued turns while slots are free. A turn whose session's
// previous turn has not ended waits, and so does everything behind it.
func (s *System) admitQueued() {
	c := s.closed
	for c.inFlight < c.limit && c.next < len(c.queue) {
		ref := c.queue[c.next]
		sess := s.sessions[ref.session]
		if sess.dropped {
			c.next++
			continue
		}
		if sess.running || sess.turn != ref.turn {
			return
		}
		c.next++
		c.inFlight++
		sess.holdsSlot = true
		s.arrive(sess)
	}
	s.lookAhead()
}

// release frees the session's slot once its turn and export are over.
func (s *System) release(sess *session) {
	if s.closed == nil || !sess.holdsSlot || sess.running || sess.exporting {
		return
	}
	sess.holdsSlot = false
	s.closed.inFlight--
	s.eng.Schedule(s.eng.Now(), sim.Event{Handler: s, Op: opAdmit})
}
