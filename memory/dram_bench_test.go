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

// BenchmarkDRAMBulk1GiB streams 1 GiB sequentially through one DDR4-3200
// channel and through 8-channel host memory on the bulk path; it reports
// the wall time of one transfer and the simulated bandwidth.
func BenchmarkDRAMBulk1GiB(b *testing.B) {
	for _, c := range []struct {
		name string
		cfg  DRAMConfig
	}{{"ddr4-3200", DDR4_3200()}, {"host-ddr4x8", HostMemoryConfig()}} {
		b.Run(c.name, func(b *testing.B) {
			var simulated sim.Time
			b.ReportAllocs()
			for range b.N {
				eng := sim.NewEngine(0)
				d, err := NewDRAM(eng, c.cfg)
				if err != nil {
					b.Fatal(err)
				}
				finished := newCompletions(eng)
				d.Access(Request{Addr: 0, Bytes: 1 << 30, Done: finished.done(0)})
				eng.Run()
				simulated = finished.at[0]
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "wall-s/GiB")
			b.ReportMetric(float64(1<<30)/simulated.Seconds()/1e9, "sim-GB/s")
		})
	}
}

// BenchmarkSSDSequentialRead reads 128 KiB commands at QD32 from a CM6-class
// drive and reports simulated gigabytes per wall second.
func BenchmarkSSDSequentialRead(b *testing.B) {
	p := ioPattern{Size: 128 << 10, Depth: 32, Count: 20000}
	b.ReportAllocs()
	var simulated float64
	for range b.N {
		r, err := runSSD(KioxiaCM6(), p)
		if err != nil {
			b.Fatal(err)
		}
		simulated += float64(p.Size) * float64(p.Count) / 1e9
		_ = r
	}
	b.ReportMetric(simulated/b.Elapsed().Seconds(), "sim-GB/wall-s")
}
