package memory

import (
	"testing"

	"github.com/kvcosim/kvcosim/sim"
)

// BenchmarkDRAMRandom64B issues random 64 B reads to one DDR4-3200 channel,
// 64 in flight, and reports simulated requests per wall second.
func BenchmarkDRAMRandom64B(b *testing.B) {
	cfg := DDR4_3200()
	eng := sim.NewEngine(0)
	d, err := NewDRAM(eng, cfg)
	if err != nil {
		b.Fatal(err)
	}
	f := &randomFeeder{d: d, rng: sim.NewStreams(1).Stream("bench"), left: b.N}
	b.ReportAllocs()
	b.ResetTimer()
	for range min(64, b.N) {
		f.issue()
	}
	eng.Run()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "requests/s")
}

// randomFeeder keeps a fixed number of random 64 B reads in flight.
type randomFeeder struct {
	d    *DRAM
	rng  *sim.Stream
	left int
	done int
}

func (f *randomFeeder) issue() {
	f.left--
	f.d.Access(Request{Addr: f.rng.Int64N(f.d.cfg.CapacityBytes()/64) * 64, Bytes: 64, Done: sim.Event{Handler: f}})
}

func (f *randomFeeder) Handle(sim.Event) {
	f.done++
	if f.left > 0 {
		f.issue()
	}
}
