package sim_test

import (
	"fmt"

	"github.com/kvcosim/kvcosim/sim"
)

func ExampleParseTime() {
	t, err := sim.ParseTime("1.5 us")
	fmt.Println(t, int64(t), err)
	_, err = sim.ParseTime("-3ns")
	fmt.Println(err)
	// Output:
	// 1.5us 1500000 <nil>
	// duration "-3ns": negative values are not allowed
}

func ExampleClock() {
	qsfp := sim.MustClockMHz(322.265625) // period 3103.03 ps: not a whole number
	fmt.Println(qsfp.Edge(1), qsfp.Edge(2), qsfp.Edge(1_000_000_000))
	fmt.Println(qsfp.CyclesAt(10*sim.Nanosecond), qsfp.NextEdge(10*sim.Nanosecond))
	fmt.Println(qsfp.After(5*sim.Nanosecond, 20)) // 20 cycles from the next edge
	// Output:
	// 3.103ns 6.206ns 3.10303030303s
	// 3 12.412ns
	// 68.266ns
}

// printer prints the events it handles.
type printer struct{ eng *sim.Engine }

func (p printer) Handle(ev sim.Event) { fmt.Println(p.eng.Now(), "op", ev.Op) }

func ExampleEngine() {
	eng := sim.NewEngine(16)
	p := printer{eng}
	eng.Schedule(2*sim.Nanosecond, sim.Event{Handler: p, Op: 1})
	eng.ScheduleP(2*sim.Nanosecond, sim.PriorityEarly, sim.Event{Handler: p, Op: 2})
	eng.Schedule(5*sim.Nanosecond, sim.Event{Handler: p, Op: 3})
	eng.RunUntil(2 * sim.Nanosecond) // events at exactly 2ns run
	fmt.Println("paused at", eng.Now(), "pending", eng.Pending())
	eng.Run()
	// Output:
	// 2ns op 2
	// 2ns op 1
	// paused at 2ns pending 1
	// 5ns op 3
}

func ExampleServer() {
	eng := sim.NewEngine(16)
	cpu, _ := sim.NewServer(eng, "cpu", 1)
	cpu.Submit(sim.Job{Service: 3 * sim.Microsecond})
	cpu.Submit(sim.Job{Service: 1 * sim.Microsecond}) // waits 3 us
	eng.Run()
	st := cpu.Stats(eng.Now())
	fmt.Printf("done at %v, utilisation %.2f, mean wait %v\n", eng.Now(), st.Utilisation, sim.Time(st.Wait.Mean))
	// Output: done at 4us, utilisation 1.00, mean wait 1.5us
}

func ExampleLink() {
	eng := sim.NewEngine(16)
	// PCIe-like: 256 B payloads, 24 B of header each, 450 ns one way.
	pcie, _ := sim.NewLink(eng, "pcie", sim.LinkConfig{Bandwidth: 16 * sim.GBps, Latency: 450 * sim.Nanosecond,
		PacketPayloadBytes: 256, PacketHeaderBytes: 24})
	fmt.Println(pcie.Transfer(4096, sim.Event{}))
	fmt.Println(pcie.Transfer(4096, sim.Event{})) // serialises behind the first
	// Output:
	// 730ns
	// 1.01us
}

func ExampleStreams() {
	streams := sim.NewStreams(42)
	ssd := streams.Stream("ssd") // its draws depend only on 42 and "ssd"
	think, _ := sim.LogNormalFromMedianP90(40, 302)
	fmt.Printf("%.3f %.3f\n", think.Sample(ssd), think.Sample(ssd))
	// Output: 391.601 11.413
}

func ExampleDistribution() {
	d := sim.NewDistribution()
	for i := 1; i <= 1000; i++ {
		d.AddTime(sim.Time(i) * sim.Microsecond)
	}
	s := d.Summary()
	fmt.Println(s.Count, sim.Time(s.Mean), sim.Time(s.P50).Round(sim.Microsecond), sim.Time(s.P99).Round(sim.Microsecond))
	// Output: 1000 500.5us 500us 990us
}

func ExampleTracer() {
	eng := sim.NewEngine(16)
	rec := &sim.SpanRecorder{}
	eng.Trace().AddSink(rec)
	link, _ := sim.NewLink(eng, "dma", sim.LinkConfig{Bandwidth: sim.GBps})
	link.Transfer(1000, sim.Event{})
	sp := rec.Spans[0]
	fmt.Println(sp.Component, sp.Operation, sp.Start, sp.End, sp.Bytes)
	// Output: dma transfer 0s 1us 1000
}

// A stage of a node's part says where it ran and what it was as fields,
// and a component's levels reach the sinks that take them.
func ExampleLevelSink() {
	eng := sim.NewEngine(16)
	sink := &levelPrinter{}
	eng.Trace().AddSink(sink)
	eng.Trace().Emit(sim.Span{Component: "node0.fpga", Operation: "query/hash", Part: "fpga", Task: "query", Stage: "hash",
		Clocked: true, Cycles: 540, End: 1800 * sim.Nanosecond})
	eng.Trace().EmitLevel(sim.Level{Component: "store", At: sim.Microsecond, Values: []sim.Count{{Name: "fifo1_regions", Value: 12}}})
	// Output:
	// fpga query hash: 540 cycles in 1.8us
	// store at 1us: fifo1_regions 12
}

type levelPrinter struct{}

func (levelPrinter) Span(sp sim.Span) {
	fmt.Printf("%s %s %s: %d cycles in %v\n", sp.Part, sp.Task, sp.Stage, sp.Cycles, sp.End-sp.Start)
}

func (levelPrinter) Level(l sim.Level) {
	fmt.Printf("%s at %v: fifo1_regions %d\n", l.Component, l.At, l.Value("fifo1_regions"))
}

func ExampleLane() {
	eng := sim.NewEngine(16)
	p := printer{eng}
	wire := sim.NewLane(eng, "wire") // arrivals on a wire never overtake each other
	wire.Schedule(3*sim.Nanosecond, sim.Event{Handler: p, Op: 1})
	wire.Schedule(7*sim.Nanosecond, sim.Event{Handler: p, Op: 2})
	eng.Schedule(3*sim.Nanosecond, sim.Event{Handler: p, Op: 3}) // scheduled later, so after op 1
	fmt.Println("in the heap:", eng.Pending())
	eng.Run()
	// Output:
	// in the heap: 2
	// 3ns op 1
	// 3ns op 3
	// 7ns op 2
}
