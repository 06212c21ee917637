package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// runLaneChain runs chain's cascade with three lanes' worth of events,
// on lanes or, without useLanes, straight into the heap.
func runLaneChain(seed uint64, useLanes bool) []int64 {
	eng := NewEngine(0)
	c := &chain{laneLast: make([]Time, 3)}
	if useLanes {
		for range c.laneLast {
			c.lanes = append(c.lanes, NewLane(eng, "lane"))
		}
	}
	return runChainOn(eng, c, seed)
}

func TestLaneKeepsTheEngineOrder(t *testing.T) {
	for seed := range uint64(20) {
		want := runLaneChain(seed, false)
		require.Greater(t, len(want), 200, "seed %d: the cascade died out", seed)
		require.Equal(t, want, runLaneChain(seed, true), "seed %d", seed)
	}
}

func TestLaneRejectsTimeGoingBack(t *testing.T) {
	eng := NewEngine(0)
	l := &logger{eng: eng}
	lane := NewLane(eng, "wire")
	lane.Schedule(10, Event{Handler: l, Op: 1})
	require.PanicsWithValue(t, `sim: lane "wire" at 0s: event *sim.logger op 2 arg 0 at 9ps, before now or the lane's last event at 10ps`,
		func() { lane.Schedule(9, Event{Handler: l, Op: 2}) })
	lane.Schedule(10, Event{Handler: l, Op: 3})
	eng.Schedule(10, Event{Handler: l, Op: 4})
	eng.Run()
	require.Equal(t, []string{"10ps:1", "10ps:3", "10ps:4"}, l.got)
	require.Equal(t, Time(10), lane.Last())
}

func TestLanePriority(t *testing.T) {
	eng := NewEngine(0)
	l := &logger{eng: eng}
	early := NewLaneP(eng, "early", PriorityEarly)
	eng.Schedule(10, Event{Handler: l, Op: 1})
	early.Schedule(10, Event{Handler: l, Op: 2})
	early.Schedule(10, Event{Handler: l, Op: 3})
	eng.ScheduleP(10, PriorityEarly, Event{Handler: l, Op: 4})
	eng.Run()
	require.Equal(t, []string{"10ps:2", "10ps:3", "10ps:4", "10ps:1"}, l.got)
}
