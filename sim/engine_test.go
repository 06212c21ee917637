package sim

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logger records the (time, op) of every event it handles.
type logger struct {
	eng *Engine
	got []string
}

func (l *logger) Handle(ev Event) { l.got = append(l.got, fmt.Sprintf("%v:%d", l.eng.Now(), ev.Op)) }

func TestEngineTotalOrder(t *testing.T) {
	eng := NewEngine(0)
	l := &logger{eng: eng}
	eng.ScheduleP(20, PriorityNormal, Event{Handler: l, Op: 1})
	eng.ScheduleP(10, PriorityLate, Event{Handler: l, Op: 2})
	eng.ScheduleP(10, PriorityNormal, Event{Handler: l, Op: 3})
	eng.ScheduleP(10, PriorityEarly, Event{Handler: l, Op: 4})
	eng.ScheduleP(10, PriorityNormal, Event{Handler: l, Op: 5})
	eng.ScheduleP(5, PriorityLate, Event{Handler: l, Op: 6})
	eng.Run()
	assert.Equal(t, []string{"5ps:6", "10ps:4", "10ps:3", "10ps:5", "10ps:2", "20ps:1"}, l.got)
	assert.Equal(t, uint64(6), eng.Handled())
	assert.Equal(t, Time(20), eng.Now())
}

// handlerFunc handles an event by calling itself.
type handlerFunc func(Event)

func (f handlerFunc) Handle(ev Event) { f(ev) }

// TestTaggedKeys: events at a tagged key run before every other event at
// their time, in the order of their tags however late each was scheduled;
// once the events of a time have begun, Precedes finds a tagged key there
// passed unless it is tagged after the one being handled.
func TestTaggedKeys(t *testing.T) {
	eng := NewEngine(0)
	l := &logger{eng: eng}
	first, second := eng.NewTag(), eng.NewTag()
	require.Less(t, first, second)
	eng.ScheduleP(10, PriorityEarly, Event{Handler: l, Op: 1})
	eng.ScheduleAt(TaggedKey(10, second), Event{Handler: l, Op: 2})
	eng.Schedule(10, Event{Handler: l, Op: 3})
	eng.ScheduleAt(TaggedKey(10, first), Event{Handler: l, Op: 4})
	eng.ScheduleAt(TaggedKey(5, second), Event{Handler: l, Op: 5})
	eng.Run()
	assert.Equal(t, []string{"5ps:5", "10ps:4", "10ps:2", "10ps:1", "10ps:3"}, l.got)

	cases := []struct {
		name          string
		handling      func(eng *Engine, h Handler)
		first, second bool // whether TaggedKey(10, first) and (10, second) have passed
	}{
		{"a normal event", func(eng *Engine, h Handler) { eng.Schedule(10, Event{Handler: h}) }, true, true},
		{"the first tag's", func(eng *Engine, h Handler) { eng.ScheduleAt(TaggedKey(10, first), Event{Handler: h}) }, false, false},
		{"the second tag's", func(eng *Engine, h Handler) { eng.ScheduleAt(TaggedKey(10, second), Event{Handler: h}) }, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eng := NewEngine(0)
			var passed [2]bool
			c.handling(eng, handlerFunc(func(Event) {
				passed = [2]bool{eng.Precedes(TaggedKey(10, first)), eng.Precedes(TaggedKey(10, second))}
			}))
			eng.Run()
			assert.Equal(t, [2]bool{c.first, c.second}, passed)
		})
	}
}

// chain schedules a random cascade: each event schedules 0-2 more at random
// delays (0 included, so ties at one time are frequent). With laneLast set,
// each new event is meant for lane k (at no earlier than the lane's last
// time) or the heap, and goes to lanes[k] when lanes are given, else into
// the heap at the same time: the two runs must handle the same events in
// the same order.
type chain struct {
	eng      *Engine
	rng      *Stream
	log      []int64
	lanes    []*Lane
	laneLast []Time
}

func (c *chain) Handle(ev Event) {
	c.log = append(c.log, int64(c.eng.Now())*1000+ev.Arg)
	if len(c.log) > 20000 {
		return
	}
	for range c.rng.IntN(3) {
		at, next := c.eng.Now()+Time(c.rng.IntN(4)), Event{Handler: c, Arg: c.rng.Int64N(1000)}
		if len(c.laneLast) == 0 {
			c.eng.Schedule(at, next)
			continue
		}
		k := c.rng.IntN(len(c.laneLast) + 1)
		switch {
		case k == len(c.laneLast):
			c.eng.Schedule(at, next)
		case c.lanes != nil:
			c.laneLast[k] = max(at, c.laneLast[k])
			c.lanes[k].Schedule(c.laneLast[k], next)
		default:
			c.laneLast[k] = max(at, c.laneLast[k])
			c.eng.Schedule(c.laneLast[k], next)
		}
	}
}

func runChain(seed uint64) []int64 { return runChainOn(NewEngine(0), &chain{}, seed) }

func runChainOn(eng *Engine, c *chain, seed uint64) []int64 {
	c.eng, c.rng = eng, NewStreams(seed).Stream("chain")
	for i := range 50 {
		eng.Schedule(Time(i%3), Event{Handler: c, Arg: int64(i)})
	}
	eng.Run()
	return c.log
}

func TestEngineDeterministic(t *testing.T) {
	a, b := runChain(42), runChain(42)
	require.Greater(t, len(a), 1000)
	assert.Equal(t, a, b, "same seed, same sequence")
	assert.NotEqual(t, a, runChain(43), "another seed, another sequence")
	for i := 1; i < len(a); i++ {
		require.LessOrEqual(t, a[i-1]/1000, a[i]/1000, "time never goes backwards")
	}
}

// TestEngineWatch checks that a watched run calls its watch every
// WatchEvents events, at the engine's own count, and handles the same
// events in the same order as an unwatched one.
func TestEngineWatch(t *testing.T) {
	eng := NewEngine(0)
	var seen []uint64
	eng.Watch(func() { seen = append(seen, eng.Handled()) })
	watched := runChainOn(eng, &chain{}, 42)
	require.Greater(t, eng.Handled(), uint64(WatchEvents))
	assert.Equal(t, runChain(42), watched, "a watch changes nothing the run does")
	want := []uint64{}
	for n := uint64(WatchEvents); n <= eng.Handled(); n += WatchEvents {
		want = append(want, n)
	}
	assert.Equal(t, want, seen)
}

// TestEngineMatchesSortedReference compares the heap's order with a stable
// sort of the same events by (time, priority).
func TestEngineMatchesSortedReference(t *testing.T) {
	r := NewStreams(3).Stream("ref")
	eng := NewEngine(0)
	l := &logger{eng: eng}
	type key struct {
		at   Time
		prio Priority
		id   int
	}
	var ref []key
	for i := range 5000 {
		k := key{Time(r.IntN(100)), Priority(r.IntN(3)), i}
		ref = append(ref, k)
		eng.ScheduleP(k.at, k.prio, Event{Handler: l, Op: int32(i)})
	}
	eng.Run()
	// insertion sort by (at, prio) is stable, so equal keys keep their order
	for i := 1; i < len(ref); i++ {
		for j := i; j > 0 && (ref[j].at < ref[j-1].at || ref[j].at == ref[j-1].at && ref[j].prio < ref[j-1].prio); j-- {
			ref[j], ref[j-1] = ref[j-1], ref[j]
		}
	}
	require.Len(t, l.got, len(ref))
	for i, k := range ref {
		require.Equal(t, fmt.Sprintf("%v:%d", k.at, k.id), l.got[i], "position %d", i)
	}
}

func TestRunUntilBoundaries(t *testing.T) {
	cases := []struct {
		until   Time
		handled []string
		now     Time
	}{
		{9, nil, 9},
		{10, []string{"10ps:1"}, 10},
		{11, []string{"10ps:1"}, 11},
		{20, []string{"10ps:1", "20ps:2"}, 20},
	}
	for _, c := range cases {
		eng := NewEngine(0)
		l := &logger{eng: eng}
		eng.Schedule(10, Event{Handler: l, Op: 1})
		eng.Schedule(20, Event{Handler: l, Op: 2})
		eng.RunUntil(c.until)
		assert.Equal(t, c.handled, l.got, "RunUntil(%v) runs events at exactly t", c.until)
		assert.Equal(t, c.now, eng.Now())
		assert.Equal(t, 2-len(c.handled), eng.Pending())
	}
}

// stopper stops the engine when it handles Op 1.
type stopper struct{ logger }

func (s *stopper) Handle(ev Event) {
	s.logger.Handle(ev)
	if ev.Op == 1 {
		s.eng.Stop()
	}
}

func TestStop(t *testing.T) {
	eng := NewEngine(0)
	s := &stopper{logger{eng: eng}}
	eng.Schedule(5, Event{Handler: s, Op: 1})
	eng.Schedule(5, Event{Handler: s, Op: 2})
	eng.RunUntil(100)
	assert.Equal(t, []string{"5ps:1"}, s.got)
	assert.Equal(t, Time(5), eng.Now(), "a stopped run leaves the clock at the stopping event")
	eng.Run()
	assert.Equal(t, []string{"5ps:1", "5ps:2"}, s.got, "Run resumes after Stop")
}

func TestSchedulingIntoThePastPanics(t *testing.T) {
	eng := NewEngine(0)
	l := &logger{eng: eng}
	eng.Schedule(100, Event{Handler: l})
	eng.Run()
	assert.PanicsWithValue(t, "sim: event *sim.logger op 7 arg 3 scheduled at 99ps, before now 100ps", func() {
		eng.Schedule(99, Event{Handler: l, Op: 7, Arg: 3})
	})
}

func TestAfterPastMaxTimePanicsInsteadOfWrapping(t *testing.T) {
	eng := NewEngine(0)
	l := &logger{eng: eng}
	eng.Schedule(Second, Event{Handler: l})
	eng.Run()
	assert.PanicsWithError(t, (&Overflow{Event: "*sim.logger op 1 arg 2", Now: Second, What: "now + 9223372.036854775807s"}).Error(),
		func() { eng.After(MaxTime, Event{Handler: l, Op: 1, Arg: 2}) })
	assert.PanicsWithError(t, "sim: at 1s, event *sim.logger op 0 arg 0 at -5s (a time past MaxTime, wrapped) passes MaxTime (9223372.036854775807s): the run's simulated time overflows int64 picoseconds",
		func() { eng.Schedule(-5*Second, Event{Handler: l}) })
}

// overflower schedules its next event ever further until time overflows.
type overflower struct{ eng *Engine }

func (o *overflower) Handle(Event) { o.eng.After(MaxTime/3, Event{Handler: o}) }

func TestRunCheckedReturnsAnOverflow(t *testing.T) {
	eng := NewEngine(0)
	eng.Schedule(0, Event{Handler: &overflower{eng}})
	err := eng.RunChecked()
	assert.EqualError(t, err, "sim: at 9223372.036854775806s, event *sim.overflower op 0 arg 0 at now + 3074457.345618258602s passes MaxTime (9223372.036854775807s): the run's simulated time overflows int64 picoseconds")
	assert.Panics(t, func() { _ = NewEngine(0).RunChecked(); panic("other panics go on") })
}

func TestSteadyStateAllocatesNothing(t *testing.T) {
	eng := NewEngine(1024)
	h := &holder{eng: eng, fixed: Nanosecond, exp: MustExponential(1e6), rng: NewStreams(1).Stream("a")}
	for range 1000 {
		h.Handle(Event{})
	}
	allocs := testing.AllocsPerRun(10000, func() { eng.Step() })
	assert.Zero(t, allocs)
}
