package sim

import (
	"fmt"
	"testing"
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
