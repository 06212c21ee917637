package memory

import (
	"fmt"

	"github.com/kvcosim/kvcosim/sim"
)

// SSD is an NVMe SSD. A command waits for a queue slot, occupies a
// controller core, then:
//   - a read reserves, for every page it touches, the page's plane for tR
//     and then the plane's NAND channel for the transfer; after the read
//     overhead its data crosses the host link (card to host);
//   - a write reserves write-buffer space (waiting if the buffer is full),
//     its data crosses the host link (host to card), and it is acknowledged
//     after the write overhead; the buffer drains a page at a time to the
//     next plane of a striped write pointer (channel transfer, then tPROG,
//     both times the write amplification), freeing the page's space.
//
// Resources are reserved first come first served (each plane and channel
// keeps the time it is next free), so a command costs a few events however
// many pages it touches.
type SSD struct {
	deviceStore
	eng  *sim.Engine
	cfg  SSDConfig
	host *PCIe
	ctrl *sim.Server

	planeFree, channelFree []sim.Time
	// stripe is planeOf for one round of pages over every plane;
	// pageXfer and pageProgram are a page's channel and program times,
	// write amplification included
	stripe                []stripeSlot
	pageXfer, pageProgram sim.Time
	cmds                  sim.Slots[ssdCmd]
	splits                sim.Slots[split]
	waiting               sim.FIFO[int] // commands beyond the queue depth
	inFlight              int

	bufferUsed   int64
	bufferWait   sim.FIFO[int] // writes waiting for buffer space
	pendingBytes int64         // buffered bytes not yet making a whole page
	writePage    int64         // the striped write pointer, in pages

	reads, writes             sim.Counter
	bytesRead, bytesWritten   sim.Counter
	readLatency, writeLatency *sim.Distribution
}

type ssdCmd struct {
	req     Request
	start   sim.Time
	floored bool // the small-I/O floor has been applied
	parent  int  // the split request it is part of, or -1
}

// split is a request longer than MaxIOBytes, done with its last command.
type split struct {
	left int
	done sim.Event
}

// The SSD's events.
const (
	opSSDControllerDone = iota
	opSSDDataReady
	opSSDComplete
	opSSDWriteArrived
	opSSDRelease
)

// NewSSD validates cfg and builds the drive.
func NewSSD(eng *sim.Engine, cfg SSDConfig) (*SSD, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	host, err := NewPCIe(eng, cfg.Host)
	if err != nil {
		return nil, err
	}
	ctrl, err := sim.NewServer(eng, cfg.Name+".controller", cfg.ControllerCores)
	if err != nil {
		return nil, err
	}
	return &SSD{eng: eng, cfg: cfg, host: host, ctrl: ctrl,
		planeFree: make([]sim.Time, cfg.Planes()), channelFree: make([]sim.Time, cfg.Channels), stripe: stripeOf(cfg),
		pageXfer:    sim.TimeOf(float64(cfg.ChannelBandwidth.TransferTime(cfg.PageBytes)) * cfg.WriteAmplification),
		pageProgram: sim.TimeOf(float64(cfg.ProgramTime) * cfg.WriteAmplification),
		readLatency: sim.NewDistribution(), writeLatency: sim.NewDistribution()}, nil
}

// Config returns the drive's configuration.
func (s *SSD) Config() SSDConfig { return s.cfg }

// AttachStore gives the drive a byte store for functional mode (blocks of
// blockBytes; unwritten bytes read as zeros with zeroFill) and returns it.
func (s *SSD) AttachStore(blockBytes int64, zeroFill bool) (*ByteStore, error) {
	return s.attach(s.cfg.Name, s.cfg.CapacityBytes, blockBytes, zeroFill)
}

// Access submits a read or write; one longer than MaxIOBytes goes as
// several commands. A range outside the drive is a programming error.
func (s *SSD) Access(r Request) {
	if r.Bytes <= 0 || r.Addr < 0 || r.Addr+r.Bytes > s.cfg.CapacityBytes {
		panic(fmt.Sprintf("memory: %s at %v: access [%d, %d) outside the drive's %d bytes",
			s.cfg.Name, s.eng.Now(), r.Addr, r.Addr+r.Bytes, s.cfg.CapacityBytes))
	}
	if r.Bytes <= s.cfg.MaxIOBytes {
		s.submit(r, -1)
		return
	}
	n := (r.Bytes + s.cfg.MaxIOBytes - 1) / s.cfg.MaxIOBytes
	parent := s.splits.Put(split{left: int(n), done: r.Done})
	for off := int64(0); off < r.Bytes; off += s.cfg.MaxIOBytes {
		part := Request{Addr: r.Addr + off, Bytes: min(s.cfg.MaxIOBytes, r.Bytes-off), Write: r.Write, Done: r.Done}
		s.submit(part, parent)
	}
}

// submit queues one command.
func (s *SSD) submit(r Request, parent int) {
	slot := s.cmds.Put(ssdCmd{req: r, start: s.eng.Now(), parent: parent})
	if s.inFlight < s.cfg.QueueDepthMax {
		s.start(slot)
	} else {
		s.waiting.Push(slot)
	}
}

func (s *SSD) start(slot int) {
	s.inFlight++
	s.ctrl.Submit(sim.Job{Service: s.cfg.CommandTime, Done: sim.Event{Handler: s, Op: opSSDControllerDone, Arg: int64(slot)}})
}

// Handle advances a command through its stages.
func (s *SSD) Handle(ev sim.Event) {
	slot := int(ev.Arg)
	switch ev.Op {
	case opSSDControllerDone:
		if s.cmds.At(slot).req.Write {
			s.admitWrite(slot)
		} else {
			s.readFlash(slot)
		}
	case opSSDDataReady:
		s.host.CardToHost.Transfer(s.cmds.At(slot).req.Bytes, sim.Event{Handler: s, Op: opSSDComplete, Arg: ev.Arg})
	case opSSDWriteArrived:
		s.program(s.cmds.At(slot).req.Bytes)
		s.eng.After(s.cfg.WriteOverhead, sim.Event{Handler: s, Op: opSSDComplete, Arg: ev.Arg})
	case opSSDComplete:
		s.complete(slot)
	case opSSDRelease:
		s.bufferUsed -= ev.Arg
		s.admitWaitingWrites()
	}
}

// stripeSlot is a page's plane and channel.
type stripeSlot struct{ plane, channel int }

// stripeOf lists where one round of consecutive pages goes: striped over
// channels, then dies, then planes.
func stripeOf(c SSDConfig) []stripeSlot {
	out := make([]stripeSlot, c.Planes())
	for p := range out {
		channel := p % c.Channels
		die := p / c.Channels % c.DiesPerChannel
		pl := p / (c.Channels * c.DiesPerChannel) % c.PlanesPerDie
		out[p] = stripeSlot{(channel*c.DiesPerChannel+die)*c.PlanesPerDie + pl, channel}
	}
	return out
}

// planeOf returns page p's plane index and channel.
func (s *SSD) planeOf(p int64) (plane, channel int) {
	slot := s.stripe[p%int64(len(s.stripe))]
	return slot.plane, slot.channel
}

// readFlash reserves the planes and channels of every page the read
// touches; the data is ready when the last page has crossed its channel.
func (s *SSD) readFlash(slot int) {
	r := s.cmds.At(slot).req
	now := s.eng.Now()
	ready := now
	page := s.cfg.PageBytes
	for p := r.Addr / page; p <= (r.Addr+r.Bytes-1)/page; p++ {
		piece := min(r.Addr+r.Bytes, (p+1)*page) - max(r.Addr, p*page)
		plane, ch := s.planeOf(p)
		sensed := max(now, s.planeFree[plane]) + s.cfg.ReadTime
		s.planeFree[plane] = sensed
		s.channelFree[ch] = max(sensed, s.channelFree[ch]) + s.cfg.ChannelBandwidth.TransferTime(piece)
		ready = max(ready, s.channelFree[ch])
	}
	s.eng.Schedule(ready+s.cfg.ReadOverhead, sim.Event{Handler: s, Op: opSSDDataReady, Arg: int64(slot)})
}

// admitWrite reserves buffer space for a write and starts its data
// transfer, or queues it until programs free enough space.
func (s *SSD) admitWrite(slot int) {
	if s.bufferWait.Len() > 0 || !s.reserveBuffer(slot) {
		s.bufferWait.Push(slot)
	}
}

func (s *SSD) reserveBuffer(slot int) bool {
	n := s.cmds.At(slot).req.Bytes
	if s.bufferUsed+n > s.cfg.WriteBufferBytes && s.bufferUsed > 0 {
		return false
	}
	s.bufferUsed += n
	s.host.HostToCard.Transfer(n, sim.Event{Handler: s, Op: opSSDWriteArrived, Arg: int64(slot)})
	return true
}

func (s *SSD) admitWaitingWrites() {
	for s.bufferWait.Len() > 0 && s.reserveBuffer(s.bufferWait.Peek()) {
		s.bufferWait.Pop()
	}
}

// program drains whole pages of buffered data to the NAND. The space of
// the pages one write completes is freed together, when the last of them
// is programmed (one event per write, not per page).
func (s *SSD) program(bytes int64) {
	s.pendingBytes += bytes
	page := s.cfg.PageBytes
	pages := s.pendingBytes / page
	if pages == 0 {
		return
	}
	s.pendingBytes -= pages * page
	last := s.stripePages(pages)
	s.eng.Schedule(last, sim.Event{Handler: s, Op: opSSDRelease, Arg: pages * page})
}

// stripePages programs n pages from the write pointer and returns when
// the last is done: page by page, a channel carries each page in turn
// (free = max(now, free) + xfer) and its plane programs it after it
// arrives (free = max(arrival, free) + prog). A write is tens of pages
// and every page of a trace's KV export passes here, so the loop keeps
// its state in locals.
func (s *SSD) stripePages(n int64) sim.Time {
	xfer, prog := s.pageXfer, s.pageProgram
	now := s.eng.Now()
	stripe, channelFree, planeFree := s.stripe, s.channelFree, s.planeFree
	next := int(s.writePage % int64(len(stripe)))
	s.writePage += n
	var last sim.Time
	for range n {
		slot := stripe[next]
		if next++; next == len(stripe) {
			next = 0
		}
		arrive := max(now, channelFree[slot.channel]) + xfer
		channelFree[slot.channel] = arrive
		done := max(arrive, planeFree[slot.plane]) + prog
		planeFree[slot.plane] = done
		last = max(last, done)
	}
	return last
}

// complete finishes a command, no earlier than the small-I/O floor.
func (s *SSD) complete(slot int) {
	c := s.cmds.At(slot)
	if floor := c.start + s.cfg.SmallIOLatency; !c.floored && c.req.Bytes <= s.cfg.SmallIOBytes && floor > s.eng.Now() {
		c.floored = true
		s.eng.Schedule(floor, sim.Event{Handler: s, Op: opSSDComplete, Arg: int64(slot)})
		return
	}
	done := s.cmds.Take(slot)
	bytes := done.req.Bytes
	latency := s.eng.Now() - done.start
	if done.req.Write {
		s.writes.Add(1)
		s.bytesWritten.Add(bytes)
		s.writeLatency.AddTime(latency)
	} else {
		s.reads.Add(1)
		s.bytesRead.Add(bytes)
		s.readLatency.AddTime(latency)
	}
	if tr := s.eng.Trace(); tr.Enabled() {
		op := map[bool]string{false: "read", true: "write"}[done.req.Write]
		tr.Emit(sim.Span{Component: s.cfg.Name, Operation: op, ID: done.req.Done.Arg, Start: done.start, End: s.eng.Now(), Bytes: bytes})
	}
	s.raise(done)
	s.inFlight--
	if s.waiting.Len() > 0 {
		s.start(s.waiting.Pop())
	}
}

// SSDStats are a drive's totals.
type SSDStats struct {
	Reads, Writes, BytesRead, BytesWritten int64
	// ReadLatency and WriteLatency are per command, in ps.
	ReadLatency, WriteLatency sim.Summary
	// HostToCard and CardToHost are the host link's totals.
	HostToCard, CardToHost sim.LinkStats
}

// Stats returns the totals so far.
func (s *SSD) Stats() SSDStats {
	return SSDStats{Reads: s.reads.Value(), Writes: s.writes.Value(), BytesRead: s.bytesRead.Value(),
		BytesWritten: s.bytesWritten.Value(), ReadLatency: s.readLatency.Summary(), WriteLatency: s.writeLatency.Summary(),
		HostToCard: s.host.HostToCard.Stats(), CardToHost: s.host.CardToHost.Stats()}
}

// raise signals a command's completion, or its split request's with the
// last of its commands.
func (s *SSD) raise(c ssdCmd) {
	if c.parent >= 0 {
		p := s.splits.At(c.parent)
		if p.left--; p.left > 0 {
			return
		}
		s.splits.Take(c.parent)
	}
	if c.req.Done.Handler != nil {
		s.eng.Schedule(s.eng.Now(), c.req.Done)
	}
}
