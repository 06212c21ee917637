package sim

import "fmt"

// Handler receives the events scheduled for it. Components implement it on a
// pointer receiver, so that putting one in an Event allocates nothing.
type Handler interface {
	Handle(ev Event)
}

// Event is a typed value: who handles it and two words whose meaning the
// handler defines (an operation code and an argument such as a slot index).
// Events are copied into the queue by value; scheduling one allocates nothing
// once the queue has grown to its working size.
type Event struct {
	Handler Handler
	Op      int32
	Arg     int64
}

// name describes ev in panic messages.
func (ev Event) name() string { return fmt.Sprintf("%T op %d arg %d", ev.Handler, ev.Op, ev.Arg) }

// Priority orders events that fall on the same picosecond; lower runs first.
// Within one time and priority, events run in the order they were scheduled.
type Priority uint8

// The named priorities.
const (
	// PriorityTagged is for events whose order at a tie must not depend on
	// when they were scheduled (TaggedKey): before every other event at
	// their time, in the order of their tags.
	PriorityTagged Priority = iota
	// PriorityEarly is for state changes that every other handler at the
	// same time must already see (clock-edge updates, resets).
	PriorityEarly
	// PriorityNormal is the default.
	PriorityNormal
	// PriorityLate is for observers that sample state after everything else
	// at the same time has happened (statistics probes, watchdogs).
	PriorityLate
)

const seqBits = 56

// entry is one pending event. order packs the priority above a 56-bit
// scheduling sequence number, so (at, order) is a total order.
type entry struct {
	at    Time
	order uint64
	ev    Event
}

func (a *entry) before(b *entry) bool {
	return a.at < b.at || (a.at == b.at && a.order < b.order)
}

// Engine is the event loop. The zero value is not usable; call NewEngine.
type Engine struct {
	now     Time
	seq     uint64
	heap    []entry
	stopped bool
	stale   bool // heap[0] is the event handled last
	// current is the order of the event being handled once a push has
	// taken its place at the top (until then it is heap[0]'s): kept there
	// rather than on every step, which costs the hold model 3-5 %
	current uint64
	handled uint64
	touched Time   // siftDown's prefetches land here, so the compiler keeps them
	tags    uint64 // the last tag NewTag gave
	trace   Tracer
	watch   func() // called every WatchEvents events by Run and RunUntil (nil: none)
}

// NewEngine returns an engine at time zero with room for capacity pending
// events before its queue grows.
func NewEngine(capacity int) *Engine {
	return &Engine{heap: make([]entry, 0, capacity)}
}

// Now returns the current simulated time.
func (e *Engine) Now() Time { return e.now }

// Pending returns the number of scheduled events not yet handled.
func (e *Engine) Pending() int {
	if e.stale {
		return len(e.heap) - 1
	}
	return len(e.heap)
}

// Handled returns the number of events dispatched so far.
func (e *Engine) Handled() uint64 { return e.handled }

// WatchEvents is how many handled events apart Run and RunUntil call the
// function given to Watch.
const WatchEvents = 1 << 14

// Watch has Run and RunUntil call f on the engine's goroutine after every
// WatchEvents handled events (nil: no more calls): a hook for a run's
// progress, which may read the model's state but must schedule nothing, so
// that a watched run handles the same events in the same order.
func (e *Engine) Watch(f func()) { e.watch = f }

// Trace returns the engine's trace hooks.
func (e *Engine) Trace() *Tracer { return &e.trace }

// Schedule runs ev at time at with PriorityNormal.
func (e *Engine) Schedule(at Time, ev Event) { e.ScheduleP(at, PriorityNormal, ev) }

// After runs ev delay after now with PriorityNormal. A delay that carries
// the time past MaxTime panics with an *Overflow rather than wraps.
func (e *Engine) After(delay Time, ev Event) {
	at, ok := AddTime(e.now, delay)
	if !ok {
		e.overflow(ev, fmt.Sprintf("now + %v", delay))
	}
	e.ScheduleP(at, PriorityNormal, ev)
}

// ScheduleP runs ev at time at with priority p. Scheduling before Now is a
// programming error and panics with both times and the event; a negative
// time, a sum that wrapped past MaxTime, panics with an *Overflow. (The
// checks sit out of line so that the common path inlines.)
func (e *Engine) ScheduleP(at Time, p Priority, ev Event) {
	if at < e.now {
		e.scheduledBeforeNow(at, ev)
	}
	e.seq++
	e.push(entry{at: at, order: uint64(p)<<seqBits | e.seq, ev: ev})
}

// scheduledBeforeNow panics for an event scheduled at a time before now.
func (e *Engine) scheduledBeforeNow(at Time, ev Event) {
	if at < 0 {
		e.overflow(ev, fmt.Sprintf("%v (a time past MaxTime, wrapped)", at))
	}
	panic(fmt.Sprintf("sim: event %s scheduled at %v, before now %v", ev.name(), at, e.now))
}

// overflow panics with an *Overflow for ev, asked for at the time what.
func (e *Engine) overflow(ev Event, what string) {
	panic(&Overflow{Event: ev.name(), Now: e.now, What: what})
}

// Key is a place in the engine's total order of events: a time and the
// sequence number a Schedule made at that moment would have taken. A
// component whose time-ordered effects only change its own state (space
// freed in a buffer, say) reserves a key per effect instead of scheduling
// an event, applies the effects whose keys precede the event being
// handled when it next looks at that state, and schedules an event at a
// key only when something must wake there. The model runs exactly as if
// every effect were an event.
type Key struct {
	At    Time
	order uint64
}

// NewTag returns a tag for TaggedKey that no other caller of this engine
// has had, each greater than the last.
func (e *Engine) NewTag() uint64 {
	e.tags++
	return e.tags
}

// TaggedKey is the key at time at of the events tagged tag
// (PriorityTagged): they run before every other event at that time, and
// among themselves in the order of their tags, however late each was
// scheduled. A component whose one event stands for a chain of events,
// each scheduled at the one before, keys them so: its event then falls
// among the others at a tie where the last of the chain's would have, and
// Precedes tells whether one of the chain's has had its turn. (Tagged
// events are scheduled at the time being handled only at a key that
// Precedes does not find passed.)
func TaggedKey(at Time, tag uint64) Key {
	return Key{At: at, order: uint64(PriorityTagged)<<seqBits | tag}
}

// Continue raises ev now, with PriorityNormal, as Schedule(Now(), ev)
// would, and handles it at once when that event would be the next one
// handled: nothing else is pending at this time before it (only
// PriorityLate events may be). Then it is counted and keyed as that event
// and the order of everything else is the same, without a trip through
// the queue: a completion a component reports the moment it happens (a
// drive's, one for every piece of every export in a cluster's day). The
// caller must do nothing after it that the event's handler could see.
// Otherwise it is scheduled.
func (e *Engine) Continue(ev Event) {
	if e.pendingNow() {
		e.Schedule(e.now, ev)
		return
	}
	e.seq++
	order := uint64(PriorityNormal)<<seqBits | e.seq
	if e.stale {
		e.heap[0].order = order // the handled event's entry stands for this one until a push takes it
	} else {
		e.current = order
	}
	e.handled++
	ev.Handler.Handle(ev)
}

// pendingNow reports whether an event is pending now (not PriorityLate)
// besides the one being handled.
func (e *Engine) pendingNow() bool {
	h, first := e.heap, 0
	if e.stale { // heap[0] is the event being handled: the next is a child of it
		first = 1
	}
	for i := first; i < min(len(h), 2*first+1); i++ {
		if h[i].at == e.now && Priority(h[i].order>>seqBits) < PriorityLate {
			return true
		}
	}
	return false
}

// Reserve returns the key an event scheduled now at time at, with
// PriorityNormal, would take.
func (e *Engine) Reserve(at Time) Key {
	if at < e.now {
		e.scheduledBeforeNow(at, Event{})
	}
	e.seq++
	return Key{At: at, order: uint64(PriorityNormal)<<seqBits | e.seq}
}

// Precedes reports whether an event at key k would already have been
// handled: k comes before the event being handled.
func (e *Engine) Precedes(k Key) bool {
	current := e.current
	if e.stale {
		current = e.heap[0].order
	}
	return k.At < e.now || (k.At == e.now && k.order < current)
}

// ScheduleAt runs ev at the reserved key k; each key takes at most one
// event (the queue's order needs distinct keys). A key that precedes the
// event being handled is a programming error.
func (e *Engine) ScheduleAt(k Key, ev Event) {
	if e.Precedes(k) {
		panic(fmt.Sprintf("sim: event %s scheduled at a key of %v that precedes the event being handled at %v", ev.name(), k.At, e.now))
	}
	e.push(entry{at: k.At, order: k.order, ev: ev})
}

// Overflow is the panic of an event that would pass MaxTime: a run whose
// load carries simulated time past what int64 picoseconds hold.
type Overflow struct {
	Event string // the handler (the component), op and arg
	Now   Time
	What  string // the time asked for
}

func (o *Overflow) Error() string {
	return fmt.Sprintf("sim: at %v, event %s at %s passes MaxTime (%v): the run's simulated time overflows int64 picoseconds", o.Now, o.Event, o.What, MaxTime)
}

// RunChecked is Run that returns an *Overflow as an error instead of
// panicking; any other panic goes on.
func (e *Engine) RunChecked() (err error) {
	defer func() {
		if v := recover(); v != nil {
			o, ok := v.(*Overflow)
			if !ok {
				panic(v)
			}
			err = o
		}
	}()
	e.Run()
	return nil
}

// Stop makes Run or RunUntil return after the event being handled.
func (e *Engine) Stop() { e.stopped = true }

// Run handles events in order until none is left or Stop is called.
func (e *Engine) Run() { e.RunUntil(MaxTime) }

// RunUntil handles every event scheduled at or before t (events at exactly t
// do run), then sets the clock to t, unless Stop was called first or t is
// MaxTime, in which case the clock stays at the last event handled.
func (e *Engine) RunUntil(t Time) {
	e.stopped = false
	for !e.stopped {
		e.settle()
		if len(e.heap) == 0 || e.heap[0].at > t {
			break
		}
		before := e.handled
		e.Step()
		if e.watch != nil && e.handled/WatchEvents != before/WatchEvents { // a step may handle more than one (Continue)
			e.watch()
		}
	}
	if !e.stopped && t != MaxTime && t > e.now {
		// every key reserved so far at t has had its turn; the next has not
		e.now, e.current = t, uint64(PriorityNormal)<<seqBits|(e.seq+1)
	}
}

// Step handles the next event, if any, and reports whether there was one.
// The handled event stays at the top of the queue, marked stale, until the
// next push replaces it there (one sift instead of a pop and a push: in a
// model where handled events schedule the next, nearly every event) or the
// next step removes it. Since every key is distinct, the order of events
// is the same either way.
func (e *Engine) Step() bool {
	e.settle()
	if len(e.heap) == 0 {
		return false
	}
	top := &e.heap[0]
	e.now = top.at
	ev := top.ev
	e.stale = true
	e.handled++
	ev.Handler.Handle(ev)
	return true
}

// settle removes a stale top: the event handled last, if nothing took its
// place.
func (e *Engine) settle() {
	if e.stale {
		e.stale = false
		e.pop()
	}
}

// The queue is a binary min-heap of values. (A 4-ary heap is shallower, but
// its four 48-byte children span three cache lines; in the hold model at
// depth 65,536 the binary heap handled 5-8 % more events a second.)

func (e *Engine) push(x entry) {
	if e.stale { // the handled event's place is free: sift x down from it
		e.stale, e.current = false, e.heap[0].order
		e.siftDown(x, len(e.heap))
		return
	}
	h := append(e.heap, x)
	i := len(h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !x.before(&h[parent]) {
			break
		}
		h[i] = h[parent]
		i = parent
	}
	h[i].set(&x)
	e.heap = h
}

func (e *Engine) pop() {
	h := e.heap
	n := len(h) - 1
	last := h[n]
	h[n] = entry{} // drop the handler reference for the collector
	e.heap = h[:n]
	if n > 0 {
		e.siftDown(last, n)
	}
}

// siftDown places x from the root of the first n entries of the heap. On
// its way down it touches the first, third and fourth of the four
// grandchildren, whose 192 bytes span three or four cache lines, so that
// their lines are on their way while this level is compared: a prefetch,
// kept by folding the loads into e.touched. In the hold model at depth
// 65,536 it handled an event in 141 ns against 151 ns without (medians of
// eight runs in turn, 2026-11-26), and touching the third too took that to
// 134-136 ns against 144 ns (two runs in turn, later that day).
func (e *Engine) siftDown(x entry, n int) {
	h := e.heap
	i := 0
	var touch Time
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if g := 4*i + 6; g < n {
			touch ^= h[g-3].at ^ h[g-1].at ^ h[g].at
		}
		if c+1 < n && h[c+1].before(&h[c]) {
			c++
		}
		if !h[c].before(&x) {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i].set(&x)
	e.touched = touch
}

// set copies x field by field: a whole-struct copy of an argument just
// spilled to the stack reads it back with wide loads that miss the store
// buffer's forwarding, which costs more than the rest of a push.
func (a *entry) set(x *entry) {
	a.at, a.order, a.ev.Handler, a.ev.Op, a.ev.Arg = x.at, x.order, x.ev.Handler, x.ev.Op, x.ev.Arg
}
