package sim

import "fmt"

// Lane is a sequence of events whose times never decrease, such as the
// arrivals at the far end of a wire. Only its earliest event waits in the
// engine's heap, so a component with hundreds of events in flight costs the
// heap one entry instead of hundreds; each event keeps the place in the
// total order (time, priority, scheduling sequence) that Schedule would
// have given it, so a model runs exactly as if every event were in the heap.
type Lane struct {
	eng     *Engine
	name    string
	pending FIFO[entry]
	last    Time
	prio    Priority
}

// NewLane returns an empty lane on eng; name identifies it in invariant
// failures.
func NewLane(eng *Engine, name string) *Lane { return NewLaneP(eng, name, PriorityNormal) }

// NewLaneP is NewLane whose events take priority p (ties at one
// picosecond go before or after the normal events, as for ScheduleP).
func NewLaneP(eng *Engine, name string, p Priority) *Lane {
	return &Lane{eng: eng, name: name, prio: p}
}

// Last returns the time of the latest event scheduled on the lane (0 before
// the first).
func (l *Lane) Last() Time { return l.last }

// Schedule raises ev at time at with the lane's priority. Scheduling
// before the lane's last event, or in the past, is a programming error; a
// negative time, a sum that wrapped past MaxTime, panics with an
// *Overflow, as Engine.ScheduleP does.
func (l *Lane) Schedule(at Time, ev Event) {
	e := l.eng
	if at < 0 {
		e.overflow(ev, fmt.Sprintf("%v on lane %s (a time past MaxTime, wrapped)", at, l.name))
	}
	if at < e.now || at < l.last {
		panic(fmt.Sprintf("sim: lane %q at %v: event %s at %v, before now or the lane's last event at %v",
			l.name, e.now, ev.name(), at, l.last))
	}
	e.seq++
	x := entry{at: at, order: uint64(l.prio)<<seqBits | e.seq, ev: ev}
	if l.pending.Len() == 0 {
		e.push(l.stand(x))
	}
	l.pending.Push(x)
	l.last = at
}

// stand is the heap entry that holds x's place for the lane.
func (l *Lane) stand(x entry) entry {
	return entry{at: x.at, order: x.order, ev: Event{Handler: l}}
}

// Handle raises the lane's earliest event, first putting the next one in
// the heap.
func (l *Lane) Handle(Event) {
	x := l.pending.Pop()
	if l.pending.Len() > 0 {
		l.eng.push(l.stand(l.pending.Peek()))
	}
	x.ev.Handler.Handle(x.ev)
}
