package memory

import (
	"fmt"
	"testing"
	"time"

	"github.com/kvcosim/kvcosim/sim"
)

type doneCounter struct {
	n    int
	last sim.Time
	eng  *sim.Engine
}

func (d *doneCounter) Handle(sim.Event) { d.n++; d.last = d.eng.Now() }

func TestTry(t *testing.T) {
	for _, name := range []string{"ddr4-3200", "ddr5-4800", "hbm2-u55c", "hbm3-h100"} {
		cfg, _ := DRAMPreset(name)
		eng := sim.NewEngine(0)
		d, err := NewDRAM(eng, cfg)
		if err != nil {
			t.Fatal(err)
		}
		dc := &doneCounter{eng: eng}
		d.Access(Request{Addr: 0, Bytes: 64, Done: sim.Event{Handler: dc}})
		eng.Run()
		fmt.Println(name, "idle read", dc.last, "cycles", d.clock.CyclesAt(dc.last))
		start := eng.Now()
		w := time.Now()
		size := int64(1 << 30)
		d.Access(Request{Addr: 0, Bytes: size, Done: sim.Event{Handler: dc}})
		eng.Run()
		el := dc.last - start
		fmt.Printf("  1GiB bulk in %v => %.2f GB/s of %.1f (wall %v)\n", el, float64(size)/el.Seconds()/1e9, cfg.PeakBandwidth().GBps(), time.Since(w))
		// random 64B reads
		cfg.Ranks = 1
		cfg.QueueDepth = 64
		eng = sim.NewEngine(0)
		d, _ = NewDRAM(eng, cfg)
		dc = &doneCounter{eng: eng}
		r := sim.NewStreams(1).Stream("r")
		n := 20000
		for range n {
			d.Access(Request{Addr: r.Int64N(cfg.CapacityBytes()/64) * 64, Bytes: 64, Done: sim.Event{Handler: dc}})
		}
		w = time.Now()
		eng.Run()
		fmt.Printf("  random: %d reads in %v => %.3f per cycle, %.2f GB/s (wall %v) acts %d\n", n, dc.last, float64(n)/float64(d.clock.CyclesAt(dc.last))/float64(cfg.Channels), float64(n*64)/dc.last.Seconds()/1e9, time.Since(w), d.Stats().Activates)
	}
}
