package sim

import (
	"fmt"
	"testing"
	"time"
)

// holder is the hold model's only handler: every event it handles schedules
// exactly one new event.
type holder struct {
	eng   *Engine
	fixed Time
	exp   *Exponential
	rng   *Stream
}

func (h *holder) Handle(Event) {
	delay := h.fixed
	if h.exp != nil {
		delay = h.exp.Time(h.rng)
	}
	h.eng.After(delay, Event{Handler: h})
}

// BenchmarkEngineHold is the classic hold model: depth events pending, each
// handled event schedules one more at now + delay (1 ns fixed at depth 1,
// otherwise exponential with mean 1 us).
func BenchmarkEngineHold(b *testing.B) {
	for _, depth := range []int{1, 1024, 65536} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			eng := NewEngine(depth + 1)
			h := &holder{eng: eng, fixed: Nanosecond, rng: NewStreams(1).Stream("hold")}
			if depth > 1 {
				h.exp = MustExponential(float64(Microsecond))
			}
			for range depth {
				h.Handle(Event{})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				eng.Step()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// plainHeap is the baseline the engine is held against: a hand-written
// binary min-heap of value events (time, sequence, argument) ordered by
// time and sequence, with no handler interface, priorities, lanes, checks
// or counters: the least a discrete-event loop can do.
type plainHeap struct {
	h   []plainEntry
	seq uint64
}

type plainEntry struct {
	at  Time
	seq uint64
	arg int64
}

func (e *plainEntry) before(o *plainEntry) bool {
	return e.at < o.at || (e.at == o.at && e.seq < o.seq)
}

func (p *plainHeap) push(at Time, arg int64) {
	p.seq++
	x := plainEntry{at, p.seq, arg}
	h := append(p.h, x)
	i := len(h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !x.before(&h[parent]) {
			break
		}
		h[i] = h[parent]
		i = parent
	}
	h[i] = x
	p.h = h
}

func (p *plainHeap) pop() plainEntry {
	h := p.h
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].before(&h[c]) {
			c++
		}
		if !h[c].before(&last) {
			break
		}
		h[i] = h[c]
		i = c
	}
	if n > 0 {
		h[i] = last
	}
	p.h = h
	return top
}

// holdRounds is how many turns the engine and the plain heap take in
// BenchmarkEngineHoldAgainstPlainHeap: on a shared machine the load moves
// within a run, and turns give both the same share of it.
const holdRounds = 16

// BenchmarkEngineHoldAgainstPlainHeap runs the hold model on the engine and
// on the plain heap (its handler called directly) in the same process, in
// holdRounds turns of b.N/holdRounds events each, and reports the engine's
// rate as a share of the plain heap's (ratio), at depths 1 and 65,536.
func BenchmarkEngineHoldAgainstPlainHeap(b *testing.B) {
	for _, depth := range []int{1, 65536} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			eng := NewEngine(depth + 1)
			h := &holder{eng: eng, fixed: Nanosecond, rng: NewStreams(1).Stream("hold")}
			p := &plainHeap{h: make([]plainEntry, 0, depth+1)}
			rng := NewStreams(1).Stream("hold")
			delay := func() Time { return Nanosecond }
			if depth > 1 {
				h.exp = MustExponential(float64(Microsecond))
				exp := MustExponential(float64(Microsecond))
				delay = func() Time { return exp.Time(rng) }
			}
			for range depth {
				h.Handle(Event{})
				p.push(delay(), 0)
			}
			b.ReportAllocs()
			b.ResetTimer()
			var engine, plain time.Duration
			for round := range holdRounds {
				n := b.N*(round+1)/holdRounds - b.N*round/holdRounds
				start := time.Now()
				for range n {
					eng.Step()
				}
				engine += time.Since(start)
				start = time.Now()
				for range n {
					x := p.pop()
					p.push(x.at+delay(), x.arg)
				}
				plain += time.Since(start)
			}
			b.ReportMetric(float64(b.N)/engine.Seconds(), "engine-events/s")
			b.ReportMetric(float64(b.N)/plain.Seconds(), "plain-events/s")
			b.ReportMetric(plain.Seconds()/engine.Seconds(), "ratio")
		})
	}
}
