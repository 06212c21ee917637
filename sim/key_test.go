package sim

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// counter is a model with one number of state: events add to it at random
// times (drawn in a cascade, ties frequent) and read it. In eager mode every
// addition is an event of its own; in lazy mode it reserves a key, applies
// the additions that precede the event being handled when it reads, and
// wakes at an addition's key only when a reader asked to be woken. Both
// must read the same values at the same times.
type counter struct {
	eng     *Engine
	rng     *Stream
	lazy    bool
	value   int64
	pending FIFO[keyedAdd]
	waking  bool
	lastAdd Time // additions come in time order, as a lane's do
	left    int
	reads   []string
}

type keyedAdd struct {
	key Key
	n   int64
}

const (
	opWork = iota
	opAdd
	opWake
)

func (c *counter) Handle(ev Event) {
	switch ev.Op {
	case opAdd:
		c.value += ev.Arg
	case opWake:
		c.waking = false
		c.value += c.pending.Pop().n
		c.wake()
	case opWork:
		c.apply()
		c.reads = append(c.reads, fmt.Sprintf("%v:%d", c.eng.Now(), c.value))
		for range c.rng.IntN(3) {
			if c.left == 0 {
				break
			}
			c.left--
			c.eng.After(Time(c.rng.IntN(4)), Event{Handler: c, Op: opWork})
		}
		c.add(c.eng.Now()+Time(c.rng.IntN(4)), int64(c.rng.IntN(100)))
		if c.rng.IntN(4) == 0 {
			c.waking = c.waking || c.scheduleWake()
		}
	}
}

// add makes an addition of n at time at, as an event or a keyed effect.
func (c *counter) add(at Time, n int64) {
	c.lastAdd = max(at, c.lastAdd)
	if !c.lazy {
		c.eng.Schedule(c.lastAdd, Event{Handler: c, Op: opAdd, Arg: n})
		return
	}
	c.pending.Push(keyedAdd{key: c.eng.Reserve(c.lastAdd), n: n})
}

func (c *counter) apply() {
	for c.lazy && c.pending.Len() > 0 && c.eng.Precedes(c.pending.Peek().key) {
		c.value += c.pending.Pop().n
	}
}

// scheduleWake asks for an event at the next addition (lazy mode only;
// eager additions are events anyway).
func (c *counter) scheduleWake() bool {
	if !c.lazy || c.waking || c.pending.Len() == 0 {
		return c.waking
	}
	c.eng.ScheduleAt(c.pending.Peek().key, Event{Handler: c, Op: opWake})
	return true
}

func (c *counter) wake() { c.waking = c.scheduleWake() }

func TestKeyedEffectsRunAsEvents(t *testing.T) {
	for seed := range uint64(200) {
		var reads [2][]string
		for i, lazy := range []bool{false, true} {
			eng := NewEngine(0)
			c := &counter{eng: eng, rng: NewStreams(seed).Stream("keys"), lazy: lazy, left: 300}
			eng.Schedule(0, Event{Handler: c, Op: opWork})
			eng.Run()
			c.apply()
			reads[i] = c.reads
		}
		require.Equal(t, reads[0], reads[1], "seed %d", seed)
	}
}

func TestScheduleAtRefusesAPassedKey(t *testing.T) {
	eng := NewEngine(0)
	l := &logger{eng: eng}
	k := eng.Reserve(5)
	eng.Schedule(10, Event{Handler: l})
	eng.Run()
	require.True(t, eng.Precedes(k))
	require.Panics(t, func() { eng.ScheduleAt(k, Event{Handler: l}) })
}

// TestRunUntilPassesTheKeysAtItsEnd: RunUntil(t) handles every event at t,
// so a key reserved at t before it has had its turn after it; one reserved
// at t afterwards has not.
func TestRunUntilPassesTheKeysAtItsEnd(t *testing.T) {
	eng := NewEngine(0)
	eng.Schedule(5, Event{Handler: &logger{eng: eng}})
	k := eng.Reserve(10)
	eng.RunUntil(10)
	require.True(t, eng.Precedes(k))
	require.False(t, eng.Precedes(eng.Reserve(10)))
}
