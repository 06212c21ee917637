package memory

import (
	"fmt"

	"github.com/kvcosim/kvcosim/sim"
)

// Request is one access to a memory device: a byte range, its direction and
// the event raised when the last byte has moved.
type Request struct {
	Addr, Bytes int64
	Write       bool
	Done        sim.Event
}

// reqState tracks a request until its last part completes. A part is one
// burst on the burst path, or one channel's share on the bulk path.
type reqState struct {
	parts int64
	end   sim.Cycles
	start sim.Time
	req   Request
}

// job is one channel's share of a request, waiting in the channel's FIFO.
type job struct {
	req      int
	write    bool
	bulk     bool
	addr     int64 // next address to examine on the burst path
	end      int64
	left     int64 // bursts of this channel still to enqueue (burst path)
	arrival  sim.Cycles
	startLoc location
}

// DRAM is a cycle-level DRAM device: several channels, each with its own
// controller. Requests of any size are split into bursts; a request from
// BulkMinBytes up takes the bulk path, which issues each row's run of
// column commands in closed form (same timing rules, one step per row
// activation), so long sequential transfers simulate quickly.
type DRAM struct {
	deviceStore
	eng      *sim.Engine
	cfg      DRAMConfig
	clock    sim.Clock
	mapping  mapping
	block    streamBlock
	channels []*channel
	reqs     sim.Slots[reqState]

	reads, writes         sim.Counter
	bytesRead, bytesWrote sim.Counter
	latency               *sim.Distribution
}

// NewDRAM validates cfg and builds the device.
func NewDRAM(eng *sim.Engine, cfg DRAMConfig) (*DRAM, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	clock, err := sim.NewClock(cfg.ClockHz)
	if err != nil {
		return nil, fmt.Errorf("dram %q: %w", cfg.Name, err)
	}
	m, err := parseMapping(cfg.mapping(), cfg)
	if err != nil {
		return nil, err
	}
	d := &DRAM{eng: eng, cfg: cfg, clock: clock, mapping: m, block: m.streamBlock(), latency: sim.NewDistribution()}
	for i := range cfg.Channels {
		d.channels = append(d.channels, newChannel(d, i))
	}
	return d, nil
}

// Config returns the device's configuration.
func (d *DRAM) Config() DRAMConfig { return d.cfg }

// AttachStore gives the device a byte store for functional mode (blocks of
// blockBytes; unwritten bytes read as zeros with zeroFill) and returns it.
func (d *DRAM) AttachStore(blockBytes int64, zeroFill bool) (*ByteStore, error) {
	return d.attach(d.cfg.Name, d.cfg.CapacityBytes(), blockBytes, zeroFill)
}

// Clock returns the device's command clock.
func (d *DRAM) Clock() sim.Clock { return d.clock }

// Access starts a request; its Done event is raised when the data has
// moved. An address range outside the device is a programming error.
func (d *DRAM) Access(r Request) {
	if r.Bytes <= 0 || r.Addr < 0 || r.Addr+r.Bytes > d.cfg.CapacityBytes() {
		panic(fmt.Sprintf("memory: %s at %v: access [%d, %d) outside the device's %d bytes",
			d.cfg.Name, d.eng.Now(), r.Addr, r.Addr+r.Bytes, d.cfg.CapacityBytes()))
	}
	arrival := d.clock.FirstEdgeAtOrAfter(d.eng.Now()) + d.cfg.ControllerCycles
	slot := d.reqs.Put(reqState{start: d.eng.Now(), req: r})
	burst := d.cfg.BurstBytes()
	first, end := r.Addr/burst*burst, r.Addr+r.Bytes
	bulk := d.cfg.BulkMinBytes > 0 && r.Bytes >= d.cfg.BulkMinBytes && d.block.ok
	perChannel := make([]int64, len(d.channels))
	if bulk && end-first >= d.block.bytes {
		for i := range perChannel {
			perChannel[i] = 1 // one part per channel: every channel takes part
		}
	} else {
		for a := first; a < end; a += burst {
			perChannel[d.mapping.decode(a).channel]++
		}
		if bulk {
			for i, n := range perChannel {
				perChannel[i] = min(n, 1)
			}
		}
	}
	st := d.reqs.At(slot)
	for ch, n := range perChannel {
		if n == 0 {
			continue
		}
		st.parts += n
		d.channels[ch].jobs.Push(&job{req: slot, write: r.Write, bulk: bulk, addr: first, end: end, left: n, arrival: arrival})
		d.channels[ch].kick()
	}
	if r.Write {
		d.writes.Add(1)
		d.bytesWrote.Add(r.Bytes)
	} else {
		d.reads.Add(1)
		d.bytesRead.Add(r.Bytes)
	}
}

// partsDone records that parts of request slot finished moving data at
// cycle end; the request completes with its last part.
func (d *DRAM) partsDone(slot int, parts int64, end sim.Cycles) {
	st := d.reqs.At(slot)
	st.parts -= parts
	st.end = max(st.end, end)
	if st.parts > 0 {
		return
	}
	done := d.reqs.Take(slot)
	at := max(d.clock.Edge(done.end)+d.cfg.ExtraLatency, d.eng.Now())
	d.latency.AddTime(at - done.start)
	if tr := d.eng.Trace(); tr.AllSpans() {
		op := "read"
		if done.req.Write {
			op = "write"
		}
		tr.Emit(sim.Span{Component: d.cfg.Name, Operation: op, ID: done.req.Done.Arg, Start: done.start, End: at, Bytes: done.req.Bytes})
	}
	if done.req.Done.Handler != nil {
		d.eng.Schedule(at, done.req.Done)
	}
}

// DRAMStats are a device's totals.
type DRAMStats struct {
	Reads, Writes, BytesRead, BytesWritten int64
	Bursts, Activates, Refreshes           int64
	// Latency is the request latency (arrival to completion) in ps.
	Latency sim.Summary
}

// Traffic returns the bytes read and written.
func (d *DRAM) Traffic() Traffic {
	st := d.Stats()
	return Traffic{BytesRead: st.BytesRead, BytesWritten: st.BytesWritten}
}

// Stats returns the totals so far.
func (d *DRAM) Stats() DRAMStats {
	s := DRAMStats{Reads: d.reads.Value(), Writes: d.writes.Value(), BytesRead: d.bytesRead.Value(),
		BytesWritten: d.bytesWrote.Value(), Latency: d.latency.Summary()}
	for _, ch := range d.channels {
		s.Bursts += ch.bursts
		s.Activates += ch.activates
		for r := range ch.ranks {
			s.Refreshes += ch.ranks[r].refreshes
		}
	}
	return s
}
