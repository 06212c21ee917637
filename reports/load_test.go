package reports

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fifoQueue serves sessions of one turn each, arriving as a Poisson stream
// at rate per second, one at a time in arrival order, each taking service
// seconds: the reference model of an open-loop queue. At utilisation
// rate x service under 1 it keeps up; over 1 its queue grows without bound.
func fifoQueue(n int, rate, service float64, seed uint64) []Served {
	r := rand.New(rand.NewPCG(seed, 1))
	var at, free float64
	out := make([]Served, n)
	for i := range out {
		at += r.ExpFloat64() / rate
		start := max(at, free)
		free = start + service
		out[i] = Served{ArrivalMs: at * 1e3, TTFTms: (free - at) * 1e3, FirstTurn: true}
	}
	return out
}

func TestLoadFindsTheQueueThatCannotKeepUp(t *testing.T) {
	for seed := range uint64(20) {
		for _, c := range []struct {
			utilisation float64
			saturated   bool
		}{{0.3, false}, {0.7, false}, {0.85, false}, {1.2, true}, {2, true}, {8, true}} {
			l := NewLoad(fifoQueue(2000, 1, c.utilisation, seed))
			assert.Equal(t, c.saturated, l.Why != "", "seed %d, utilisation %v: %+v", seed, c.utilisation, l)
			if c.saturated {
				assert.Less(t, l.DeliveredShare, 1.0)
			}
		}
	}
}

func TestLoadCases(t *testing.T) {
	steady := func(n int, gap, ttft float64) []Served {
		var s []Served
		for i := range n {
			s = append(s, Served{ArrivalMs: float64(i) * gap, TTFTms: ttft, FirstTurn: true})
		}
		return s
	}
	growing := steady(100, 1000, 0)
	for i := range growing {
		growing[i].TTFTms = 50 * float64(i) // the wait grows by less than a tenth of the window
	}
	later := steady(40, 1000, 100)
	for i := range 200 { // later turns, waiting ever longer on a store
		later = append(later, Served{ArrivalMs: float64(i) * 200, TTFTms: 20 * float64(i)})
	}
	for _, c := range []struct {
		name   string
		served []Served
		share  float64
		why    string
	}{
		{"keeps up", steady(100, 1000, 200), 1, ""},
		{"too few sessions to judge", steady(MinJudgedSessions-1, 1000, 1e6), 0, ""},
		{"every session at once", steady(100, 0, 5), 0, ""},
		{"first tokens spread over twice the arrivals", func() []Served {
			s := steady(100, 1000, 0)
			for i := range s {
				s[i].TTFTms = float64(i) * 1000 // served at one every 2 s
			}
			return s
		}(), 0.5, "delivered 50.0 %"},
		{"the queue grows, most of the rate kept", growing, 0.95, "the queue grew"},
		{"later turns wait ever longer", later, 1, "the queue grew"},
		{"later turns only", []Served{{ArrivalMs: 1}, {ArrivalMs: 2}}, 0, ""},
		{"a quarter without arrivals takes no part", func() []Served {
			s := steady(100, 1000, 0)
			for i := range s {
				if i >= 60 {
					s[i].ArrivalMs += 60_000 // a lull: the third quarter of the window has no arrival
				}
				s[i].TTFTms = 100 + 40*float64(i)
			}
			require.Contains(t, NewLoad(s).ArrivalsByQuarter, 0)
			return s
		}(), 0.98, "the queue grew"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := NewLoad(c.served)
			assert.InDelta(t, c.share, l.DeliveredShare, 0.02)
			assert.Equal(t, c.share > 0, l.Judged)
			if c.why == "" {
				assert.Empty(t, l.Why)
			} else {
				assert.Contains(t, l.Why, c.why)
			}
		})
	}
}

// A service whose first tokens come over twice the window the sessions
// arrived in delivers half its offered load.
func ExampleNewLoad() {
	var served []Served
	for i := range 100 {
		served = append(served, Served{ArrivalMs: float64(i) * 1000, TTFTms: float64(i) * 1000, FirstTurn: true})
	}
	l := NewLoad(served)
	fmt.Printf("%.2f of %.2f sessions/s\n%s\n", l.DeliveredSessionsPerS, l.OfferedSessionsPerS, l.Why)
	// Output:
	// 0.51 of 1.01 sessions/s
	// delivered 50.0 % of the offered load (0.506 of 1.01 sessions/s): the first tokens of first turns that arrived over 79 s came over 158 s
}
