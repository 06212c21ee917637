package hostcpu

import (
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/sim"
)

// host is what the System lends its store (store.Host): time, the pool,
// the nodes' hardware, transfers and cores, and where the store's reports
// land (a request's lookup, an export's outcome).
type host struct{ s *System }

// ticket is the store.Ticket of the System's event op for a request,
// export or session id: the op in the low byte, the id above it (so that
// id -1 with op 0 is store.Background).
func ticket(op int32, id int) store.Ticket { return store.Ticket(int64(id)<<8 | int64(op)) }

// idOf is the request, export or session id a ticket carries.
func idOf(t store.Ticket) int64 { return int64(t) >> 8 }

// eventOf is the event of h's a ticket ends with.
func eventOf(h sim.Handler, t store.Ticket) sim.Event {
	return sim.Event{Handler: h, Op: int32(t & 0xff), Arg: idOf(t)}
}

// Now is the simulated time.
func (h host) Now() sim.Time { return h.s.eng.Now() }

// Pool is the store's tiers and index (nil where the FPGAs keep it).
func (h host) Pool() *kvstore.Pool { return h.s.pool }

// Node is node i's hardware as a store reaches it.
func (h host) Node(i int) *store.Node { return &h.s.nodes[i].Node.Node }

// Move starts a transfer whose end raises t's event.
func (h host) Move(t store.Ticket, hops []store.Hop, bytes int64) {
	h.s.work.move(h.Now(), hops, bytes, h.s.moves.chunk)
	h.s.moves.start(t, hops, bytes)
}

// Compute has a core of the node spend service, then raises t's event.
func (h host) Compute(node int, service sim.Time, t store.Ticket) {
	h.s.work.Compute += service
	h.s.onCore(node, service, eventOf(h.s, t))
}

// Found keeps a lookup's outcome with its request.
func (h host) Found(t store.Ticket, f kvstore.Found) { h.s.reqs.At(int(idOf(t))).found = f }

// Importing keeps when a lookup's store began moving the found data.
func (h host) Importing(t store.Ticket, since sim.Time) {
	r := h.s.reqs.At(int(idOf(t)))
	r.importing, r.importSince = true, since
}

// Saved keeps an export's outcome with its export.
func (h host) Saved(t store.Ticket, o store.Outcome) {
	h.s.export.tasks.At(int(idOf(t))).result = o
}

// End raises t's event now.
func (h host) End(t store.Ticket) { h.s.Handle(eventOf(h.s, t)) }

// Later raises t's event at this instant, after the events already due.
func (h host) Later(t store.Ticket) { h.s.eng.Schedule(h.s.eng.Now(), eventOf(h.s, t)) }

// Fail stops the run on a broken invariant.
func (h host) Fail(err error) { h.s.check(err) }
