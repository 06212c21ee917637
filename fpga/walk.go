package fpga

import (
	"fmt"

	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
)

// The closed form of an operation whose phases left all use links and
// flat memories (or the clock): a chain walk's table accesses over PCIe and
// host memory, a token read, a signal, an exchange read, an import once its
// storage read is done. Each of those ports serves in arrival order and
// its arrival times follow from when it is asked (sim.Link), so the walk
// books its phases at once (up to walkAhead of them), each from the
// arrival of the one before (sim.Link.TransferFrom ahead of now), holds
// the ports, and raises one event at the last one's end instead of one a
// phase.
//
// The first request anyone else makes of a held port, or any look at its
// state, splits the walk at that instant (Yield): the ports go back to
// what they were when the walk began, the phases asked for before now are
// booked again, and the one under way gets its completion event, as the
// event path would have left them; the request then queues behind. The
// operation goes on event by event from there, and in closed form again
// from its next phase. TestWalkMatchesEventByEvent runs both paths.
//
// As with the drive's closed form (docs/memory.md), what the two paths may
// order differently is a tie to the picosecond: the walk's end event takes
// its place in the order of events when the walk begins, the event path's
// when its last phase is asked for.

// wire is a port a walk books: a link or a flat memory.
type wire struct {
	link *sim.Link
	flat *memory.FlatMemory
}

// wireMark is a wire's state, to go back to.
type wireMark struct {
	link sim.LinkMark
	flat memory.FlatMark
}

func (w wire) channel() *sim.Link {
	if w.flat != nil {
		return w.flat.Link()
	}
	return w.link
}

func (w wire) mark() wireMark {
	if w.flat != nil {
		return wireMark{flat: w.flat.Mark()}
	}
	return wireMark{link: w.link.Mark()}
}

func (w wire) rewind(m wireMark) {
	if w.flat != nil {
		w.flat.Rewind(m.flat)
	} else {
		w.link.Rewind(m.link)
	}
}

// wires finds the ports a walk may book: each distinct link or flat
// memory once (the card's HBM may be both the exchange memory and the
// tables), and for each port its wire, or -1.
func (p *Ports) wires() ([]wire, [portCount]int8) {
	var ws []wire
	var of [portCount]int8
	for i := range of {
		of[i] = -1
	}
	add := func(pt port, w wire) {
		if w.link == nil && w.flat == nil {
			return
		}
		for i, x := range ws {
			if x == w {
				of[pt] = int8(i)
				return
			}
		}
		of[pt] = int8(len(ws))
		ws = append(ws, w)
	}
	flat := func(m Memory) *memory.FlatMemory {
		f, _ := m.(*memory.FlatMemory)
		return f
	}
	add(portToHost, wire{link: p.ToHost})
	add(portFromHost, wire{link: p.FromHost})
	add(portExchangeLink, wire{link: p.ExchangeLink})
	add(portForward, wire{link: p.Forward})
	add(portInbound, wire{link: p.Inbound})
	add(portHostMemory, wire{flat: flat(p.HostMemory)})
	add(portTables, wire{flat: flat(p.Tables)})
	add(portExchange, wire{flat: flat(p.Exchange)})
	return ws, of
}

// walkIndexes bounds the walks at once: an end event's argument is the
// walk's generation times walkIndexes plus its index.
const walkIndexes = 1 << 20

// maxWires bounds the distinct wires: the eight ports a walk may book.
const maxWires = 8

// walkAhead bounds the phases a walk books at once; at the last one's end
// the operation goes on (step), in closed form again if it may. A split
// takes back and books again the phases since the walk began, and the
// walk that follows it books those ahead once more: with every phase left
// booked at once, a table walk of n accesses split every few accesses
// (another operation's or the host's traffic on host memory) cost n^2/2
// bookings, 100 times its events at 8,000 reads, and plan went over every
// phase left at each step.
const walkAhead = 64

// walkRun is an operation in closed form: where it began, so that a split
// can work its phases out again, and the ports it holds.
type walkRun struct {
	e      *Engine
	id     int64 // the operation
	index  int32 // in the engine's walks
	gen    int64 // the end event's; a split makes it stale
	t0     sim.Time
	phase0 uint64
	phases int   // booked, from phase0
	held   uint8 // the wires, a bit each
	marks  [maxWires]wireMark
}

// walk runs operation id's next phases (at most walkAhead) in closed
// form, if every one uses a wire or the clock, there are at least two, and
// the wires are idle: no other operation of the engine is on them, in
// closed form or event by event (operations that overlap run event by
// event: each would split the other at every phase). It reports whether it
// did.
func (e *Engine) walk(id int64, op *subOp) bool {
	if e.cfg.EventByEvent || e.onWires > 0 || e.eng.Trace().AllSpans() {
		return false
	}
	held, phases := e.plan(*op)
	if phases < 2 {
		return false
	}
	for i := range e.wires {
		if held&(1<<i) != 0 && e.wires[i].channel().Held() {
			return false
		}
	}
	w := e.newWalk()
	now := e.eng.Now()
	*w = walkRun{e: e, id: id, index: w.index, gen: w.gen + 1, t0: now, phase0: op.phase, phases: phases, held: held}
	for i := range e.wires {
		if held&(1<<i) != 0 {
			w.marks[i] = e.wires[i].mark() // no holder's bookings in it: none holds the wire
		}
	}
	t := now
	for range phases {
		t = e.book(e.phaseOf(op), t, sim.Event{})
		op.phase++
	}
	for i := range e.wires {
		if held&(1<<i) != 0 {
			e.wires[i].channel().Hold(w)
		}
	}
	e.eng.Schedule(t, sim.Event{Handler: e, Op: opWalkEnd, Arg: w.gen*walkIndexes + int64(w.index)})
	return true
}

// plan returns the wires an operation's next phases (at most walkAhead)
// use, and how many there are; none if a phase uses a port that is
// neither a wire nor the clock.
func (e *Engine) plan(op subOp) (held uint8, phases int) {
	for ph := e.phaseOf(&op); ph.port != portNone && phases < walkAhead; ph = e.phaseOf(&op) {
		if ph.port != portClock {
			i := e.wireOf[ph.port]
			if i < 0 {
				return 0, 0
			}
			held |= 1 << i
		}
		phases++
		op.phase++
	}
	return held, phases
}

// book books a phase asked for at time at and returns its arrival. A flat
// memory's time does not depend on the address, so the exchange memory's
// ring (exchangeAddr, for a memory whose time does) is left alone.
func (e *Engine) book(ph phase, at sim.Time, done sim.Event) sim.Time {
	e.booked++
	if ph.port == portClock {
		end := e.clock.After(at, sim.Cycles(ph.bytes))
		if done.Handler != nil {
			e.eng.Schedule(end, done)
		}
		return end
	}
	w := e.wires[e.wireOf[ph.port]]
	if w.flat != nil {
		return w.flat.AccessFrom(at, memory.Request{Addr: ph.addr, Bytes: ph.bytes, Write: ph.write, Done: done})
	}
	return w.link.TransferFrom(at, ph.bytes, done)
}

// arrival is when a phase asked for at time at would be done, booking
// nothing.
func (e *Engine) arrival(ph phase, at sim.Time) sim.Time {
	if ph.port == portClock {
		return e.clock.After(at, sim.Cycles(ph.bytes))
	}
	return e.wires[e.wireOf[ph.port]].channel().Arrival(at, ph.bytes)
}

// Yield splits the walk now: its wires go back to where they were when it
// began, and the phases asked for before now (the first always) are booked
// again, the last of them, still under way, with its completion event.
func (w *walkRun) Yield() {
	e, now := w.e, w.e.eng.Now()
	e.splits++
	w.release(true)
	op := e.subs.At(int(w.id))
	op.phase = w.phase0
	t := w.t0
	for n := 0; ; n++ {
		ph := e.phaseOf(op)
		if n == w.phases || ph.port == portNone {
			panic(fmt.Sprintf("fpga: %s at %v: a walk split after its last phase ended at %v", e.cfg.Name, now, t))
		}
		if end := e.arrival(ph, t); end >= now {
			e.wire(op, ph)
			e.book(ph, t, sim.Event{Handler: e, Op: opPhaseDone, Arg: w.id})
			break
		}
		t = e.book(ph, t, sim.Event{})
		op.phase++
	}
}

// release lets the walk's wires go, first putting them back to where they
// were when it began if rewind is set, and frees its record; its end event
// is stale from now on.
func (w *walkRun) release(rewind bool) {
	for i := range w.e.wires {
		if w.held&(1<<i) != 0 {
			w.e.wires[i].channel().Let(w)
			if rewind {
				w.e.wires[i].rewind(w.marks[i])
			}
		}
	}
	w.gen++
	w.e.freeWalks = append(w.e.freeWalks, w.index)
}

// walkEnd ends the walk the event names, unless a split made it stale:
// the operation goes on from its next phase, or completes (step).
func (e *Engine) walkEnd(arg int64) {
	w := e.walks[arg%walkIndexes]
	if w.gen != arg/walkIndexes {
		return
	}
	w.release(false)
	e.step(w.id)
}

// wire counts an operation's phase about to go on a wire event by event.
func (e *Engine) wire(op *subOp, ph phase) {
	if ph.port != portClock && e.wireOf[ph.port] >= 0 {
		op.wired = true
		e.onWires++
	}
}

// unwire counts an operation's phase on a wire done.
func (e *Engine) unwire(op *subOp) {
	if op.wired {
		op.wired = false
		e.onWires--
	}
}

// newWalk returns a free walk record (they are kept: a walk is a Holder,
// so its address must not move while it holds).
func (e *Engine) newWalk() *walkRun {
	if n := len(e.freeWalks); n > 0 {
		i := e.freeWalks[n-1]
		e.freeWalks = e.freeWalks[:n-1]
		return e.walks[i]
	}
	if len(e.walks) == walkIndexes {
		panic(fmt.Sprintf("fpga: %s at %v: more than %d operations in closed form at once", e.cfg.Name, e.eng.Now(), walkIndexes))
	}
	w := &walkRun{index: int32(len(e.walks))}
	e.walks = append(e.walks, w)
	return w
}
