package hostcpu

import (
	"cmp"
	"slices"

	"github.com/kvcosim/kvcosim/internal/names"
	"github.com/kvcosim/kvcosim/sim"
)

// closedLoop replays the workload with at most limit requests in flight,
// in trace order: a slot is free again only when its request and that
// request's export have both finished, so with one slot every export
// lands before the next query.
type closedLoop struct {
	limit, inFlight int
	queue           []turnRef
	next            int // the first turn not started
	order           ClosedOrder
}

// turnRef is one turn of one session.
type turnRef struct {
	session int64
	turn    int
	at      sim.Time // the turn's nominal arrival: the order
	started bool     // let in (or passed over: its session ended)
}

// newClosedLoop orders every turn by its nominal arrival (a timed turn's
// timestamp; otherwise the session's start plus its gaps), ties in
// session order.
func newClosedLoop(limit int, order ClosedOrder, sessions []*session) *closedLoop {
	c := &closedLoop{limit: limit, order: order}
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

// admitQueued starts queued turns in order while slots are free. A turn
// whose session still holds a slot (its previous turn, or that turn's
// export, has not ended) waits; in trace order so does everything behind
// it, in session order the turns of other sessions go past it. (A turn let
// in beside its session's export would hold a second slot that release,
// once per session, never frees.)
func (s *System) admitQueued() {
	c := s.closed
	for i := c.next; c.inFlight < c.limit && i < len(c.queue); i++ {
		ref := &c.queue[i]
		if ref.started {
			continue
		}
		sess := s.sessions[ref.session]
		if !sess.dropped && (sess.holdsSlot || sess.turn != ref.turn) { // its previous turn, or that turn's export, is not over
			if c.order == OrderTrace {
				break
			}
			continue
		}
		ref.started = true // a dropped session's turns are passed over
		if !sess.dropped {
			c.inFlight++
			sess.holdsSlot = true
			s.arrive(sess)
		}
		for c.next < len(c.queue) && c.queue[c.next].started {
			c.next++
		}
	}
	s.ahead.lookAhead()
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

// ClosedOrder is the order in which a closed loop lets its turns in.
type ClosedOrder int

const (
	// OrderTrace keeps the trace's order: a waiting turn holds back every
	// turn behind it.
	OrderTrace ClosedOrder = iota
	// OrderSession keeps each session's turns in order; a turn whose
	// session is busy waits while the turns behind it from other sessions
	// go on (a job queue).
	OrderSession
)

// ClosedOrders names the values of ClosedOrder.
var ClosedOrders = names.New("closed-loop order", map[ClosedOrder]string{
	OrderTrace:   "trace",
	OrderSession: "session",
})

// String returns the order's name.
func (o ClosedOrder) String() string { return ClosedOrders.Name(o) }
