package reports

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Load is a run's offered load against what it delivered, and whether it
// kept up. A run that cannot keep up says little about its designs (every
// latency is queueing that grows with the run's length), so every run
// computes this and says so when it is saturated.
//
// The offered load is the sessions' first turns, the requests whose arrival
// never waits for the system (a later turn follows its predecessor's
// answer, so an overloaded system slows its own offered load): the middle
// 80 % of them in order of arrival, so that a few stragglers neither
// stretch the windows nor hide a queue. Their arrivals span the offered
// window; every request arriving in it counts for the queue's growth.
type Load struct {
	// Judged is false for a run of fewer than MinJudgedSessions first
	// turns, or whose first turns all arrived at once: no rate to judge.
	Judged bool `json:"judged"`
	// ArrivalWindowS is from the first arrival of those first turns to the
	// last; FirstTokenWindowS from the first of their first tokens to the
	// last (at least the arrival window).
	ArrivalWindowS    float64 `json:"arrival_window_s"`
	FirstTokenWindowS float64 `json:"first_token_window_s"`
	// OfferedSessionsPerS and DeliveredSessionsPerS are those first turns
	// over the two windows; DeliveredShare is the second over the first.
	OfferedSessionsPerS   float64 `json:"offered_sessions_per_s"`
	DeliveredSessionsPerS float64 `json:"delivered_sessions_per_s"`
	DeliveredShare        float64 `json:"delivered_share"`
	// TTFTByQuarterMs is the mean TTFT of the requests arriving in each
	// quarter of the arrival window: a queue that grows through the run
	// (for the accelerator, or for the store a resumed turn waits on)
	// shows here.
	TTFTByQuarterMs [4]float64 `json:"ttft_by_quarter_ms"`
	// ArrivalsByQuarter counts them; an empty quarter's mean is 0 and
	// takes no part in the test of a growing queue.
	ArrivalsByQuarter [4]int `json:"arrivals_by_quarter"`
	// Why says what found the run saturated; empty when it kept up.
	Why string `json:"why,omitempty"`
}

// The saturation tests: delivered under MinDeliveredShare of offered, or a
// mean TTFT that rises from each quarter of the arrival window to the next
// (over the quarters that had arrivals, at least three) and ends at least
// GrowthFactor times and GrowthMinMs above the first one's. Runs of fewer than MinJudgedSessions first turns are not
// judged.
const (
	MinDeliveredShare = 0.9
	GrowthFactor      = 2.0
	GrowthMinMs       = 1000.0
	MinJudgedSessions = 8
)

// Served is a completed request: when it arrived and its TTFT, in ms, and
// whether it is its session's first turn.
type Served struct {
	ArrivalMs, TTFTms float64
	FirstTurn         bool
}

// NewLoad measures the load of a run from its completed requests.
func NewLoad(served []Served) Load {
	var l Load
	var firsts []Served
	for _, x := range served {
		if x.FirstTurn {
			firsts = append(firsts, x)
		}
	}
	if len(firsts) < MinJudgedSessions {
		return l
	}
	slices.SortStableFunc(firsts, func(a, b Served) int { return cmp.Compare(a.ArrivalMs, b.ArrivalMs) })
	firsts = firsts[len(firsts)/10 : len(firsts)-len(firsts)/10]
	from, to := firsts[0].ArrivalMs, firsts[len(firsts)-1].ArrivalMs
	if to <= from {
		return l // every session at once: no rate to judge
	}
	firstToken, lastToken := math.Inf(1), math.Inf(-1)
	for _, x := range firsts {
		firstToken, lastToken = min(firstToken, x.ArrivalMs+x.TTFTms), max(lastToken, x.ArrivalMs+x.TTFTms)
	}
	l.ArrivalWindowS = (to - from) / 1e3
	l.FirstTokenWindowS = max(l.ArrivalWindowS, (lastToken-firstToken)/1e3)
	n := float64(len(firsts))
	l.OfferedSessionsPerS, l.DeliveredSessionsPerS = n/l.ArrivalWindowS, n/l.FirstTokenWindowS
	l.DeliveredShare = l.DeliveredSessionsPerS / l.OfferedSessionsPerS
	for _, x := range served {
		if x.ArrivalMs >= from && x.ArrivalMs <= to {
			q := min(3, int(4*(x.ArrivalMs-from)/(to-from)))
			l.TTFTByQuarterMs[q] += x.TTFTms
			l.ArrivalsByQuarter[q]++
		}
	}
	for q := range l.TTFTByQuarterMs {
		l.TTFTByQuarterMs[q] /= float64(max(1, l.ArrivalsByQuarter[q]))
	}
	l.Judged = true
	l.Why = l.saturation()
	return l
}

// saturation names the test a run fails, or returns "".
func (l *Load) saturation() string {
	if l.DeliveredShare < MinDeliveredShare {
		return fmt.Sprintf("delivered %.1f %% of the offered load (%.3g of %.3g sessions/s): the first tokens of first turns that arrived over %.0f s came over %.0f s",
			100*l.DeliveredShare, l.DeliveredSessionsPerS, l.OfferedSessionsPerS, l.ArrivalWindowS, l.FirstTokenWindowS)
	}
	var q []float64
	for i, n := range l.ArrivalsByQuarter {
		if n > 0 {
			q = append(q, l.TTFTByQuarterMs[i])
		}
	}
	if len(q) < 3 {
		return ""
	}
	for i := 1; i < len(q); i++ {
		if q[i] <= q[i-1] {
			return ""
		}
	}
	first, last := q[0], q[len(q)-1]
	if last >= GrowthFactor*first && last-first >= GrowthMinMs {
		t := l.TTFTByQuarterMs
		return fmt.Sprintf("the queue grew through the run: mean TTFT by quarter of the arrival window %.0f, %.0f, %.0f, %.0f ms", t[0], t[1], t[2], t[3])
	}
	return ""
}
