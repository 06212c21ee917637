package sim

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// raiser is a model whose events schedule others (at ties often, at every
// priority, on a lane too), reserve keys and ask whether earlier keys have
// passed, and as their last act raise a completion now: through Continue,
// or through Schedule as the reference. Both must handle the same events
// in the same order, see the same keys passed and count the same events.
type raiser struct {
	eng         *Engine
	rng         *Stream
	lane        *Lane
	viaContinue bool
	left        int
	keys        []Key
	log         []string
}

func (m *raiser) Handle(ev Event) {
	passed := ""
	for _, k := range m.keys[max(0, len(m.keys)-4):] {
		passed += fmt.Sprint(m.eng.Precedes(k))
	}
	m.log = append(m.log, fmt.Sprintf("%v op %d arg %d %s", m.eng.Now(), ev.Op, ev.Arg, passed))
	if ev.Op == 1 { // a completion
		return
	}
	for range m.rng.IntN(4) {
		if m.left == 0 {
			break
		}
		m.left--
		at := m.eng.Now() + Time(m.rng.IntN(3))
		next := Event{Handler: m, Arg: int64(m.left)}
		switch m.rng.IntN(4) {
		case 0:
			m.lane.Schedule(max(at, m.lane.Last()), next)
		default:
			m.eng.ScheduleP(at, Priority(1+m.rng.IntN(3)), next)
		}
	}
	if m.rng.IntN(3) == 0 {
		m.keys = append(m.keys, m.eng.Reserve(m.eng.Now()+Time(m.rng.IntN(2))))
	}
	if m.rng.IntN(2) == 0 {
		done := Event{Handler: m, Op: 1, Arg: ev.Arg}
		if m.viaContinue {
			m.eng.Continue(done)
		} else {
			m.eng.Schedule(m.eng.Now(), done)
		}
	}
}

func runRaiser(seed uint64, viaContinue bool) ([]string, uint64) {
	eng := NewEngine(0)
	m := &raiser{eng: eng, rng: NewStreams(seed).Stream("raiser"), viaContinue: viaContinue, left: 3000}
	m.lane = NewLane(eng, "raiser")
	for i := range 5 {
		eng.Schedule(Time(i), Event{Handler: m, Arg: -1})
	}
	eng.Run()
	return m.log, eng.Handled()
}

// TestContinueIsAnEventScheduledNow: a completion raised with Continue is
// handled where Schedule(Now()) would have put it, everything else keeps
// its order and its keys' answers, and the count of events is the same.
func TestContinueIsAnEventScheduledNow(t *testing.T) {
	for seed := range uint64(20) {
		want, wantN := runRaiser(seed, false)
		got, gotN := runRaiser(seed, true)
		require.Greater(t, len(want), 1000)
		require.Equal(t, want, got, "seed %d", seed)
		require.Equal(t, wantN, gotN, "seed %d: events counted", seed)
	}
}
