package memory

import "github.com/kvcosim/kvcosim/sim"

// pageDrive is the drive worked out command by command and page by page
// (the default resolution). A command waits for a queue slot, occupies a
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
// many pages it touches. Writes are admitted by booking (ssd_booked.go),
// and writes and reads that meet an idle drive run in closed form
// (ssd_fast.go, ssd_readrun.go), with the same results.
type pageDrive struct {
	*ssdBase
	// ctrl holds the controller's cores; its completions, in time order,
	// are the lane ctrlDone
	ctrl     controller
	ctrlDone *sim.Lane

	// planes are indexed by stripe position (page p is on position p mod
	// Planes) and hold the striped write pointer
	planes   nandPlanes
	channels nandChannels
	cmds     sim.Slots[ssdCmd]
	// writesDone holds write completions, which come in time order
	writesDone *sim.Lane
	// arrivals holds the writes' arrivals at the card, at PriorityEarly:
	// at a tie a write programs its pages before a read senses
	arrivals *sim.Lane
	// pendingReleases are the buffer releases not yet applied, in time
	// order (see program), each at its reserved key: they are applied when
	// the buffer is next looked at, and one is raised as an event only
	// while writes wait for space (waking); lastRelease is the latest
	pendingReleases sim.FIFO[release]
	waking          bool
	run             writeRun // the closed-form path of writes (ssd_fast.go)
	readRun         readRun  // and of reads (ssd_readrun.go)
	splits          sim.Slots[split]
	waiting         sim.FIFO[waiter] // commands beyond the queue depth
	inFlight        int

	bufferUsed   int64
	bufferWait   sim.FIFO[int] // writes waiting for buffer space
	pendingBytes int64         // buffered bytes not yet making a whole page
	// lastAdmit is the latest write's admission, and ahead the pending
	// releases booking has counted (ssd_booked.go)
	lastAdmit sim.Time
	ahead     aheadReleases
}

var _ Device = (*pageDrive)(nil)

func newPageDrive(base *ssdBase) *pageDrive {
	cfg, eng := base.cfg, base.eng
	return &pageDrive{ssdBase: base,
		ctrl:       controller{free: make([]sim.Time, cfg.ControllerCores), service: cfg.CommandTime},
		ctrlDone:   sim.NewLane(eng, cfg.Name+".controller"),
		planes:     newNANDPlanes(cfg),
		channels:   newNANDChannels(cfg),
		writesDone: sim.NewLane(eng, cfg.Name+".writes"),
		arrivals:   sim.NewLaneP(eng, cfg.Name+".arrivals", sim.PriorityEarly)}
}

type ssdCmd struct {
	req     Request
	start   sim.Time
	ctrl    sim.Time // when a write leaves the controller (booked admission)
	floored bool     // the small-I/O floor has been applied
	parent  int      // the split request it is part of, or -1
}

// split is a request longer than MaxIOBytes, done with its last command:
// left commands to complete, rest the bytes not yet made into commands.
type split struct {
	left  int
	rest  Request
	start sim.Time
}

// Access submits a read or write; one longer than MaxIOBytes goes as
// several commands, made one at a time as queue slots free (a long export
// holds one entry while it waits, not thousands). A write that finds the
// drive idle, and the writes that follow it, run in closed form until a
// read arrives (ssd_fast.go); a read that finds it idle, and the reads
// that follow, until a write arrives (ssd_readrun.go). SSD.Access has
// checked the range.
func (s *pageDrive) Access(r Request) {
	if s.fastWrite(r) || s.fastRead(r) {
		return
	}
	if s.run.active {
		s.handOver()
	}
	if s.readRun.active {
		s.handOverReads()
	}
	if r.Bytes <= s.cfg.MaxIOBytes {
		s.waiting.Push(waiter{slot: s.cmds.Put(ssdCmd{req: r, start: s.eng.Now(), parent: -1})})
	} else {
		s.waiting.Push(waiter{slot: s.splits.Put(split{left: int(s.commands(r.Bytes)), rest: r, start: s.eng.Now()}), split: true})
	}
	s.startWaiting()
}

// waiter is a command, or the rest of a split request, waiting for a
// queue slot.
type waiter struct {
	slot  int
	split bool
}

// startWaiting starts waiting commands, in order, while queue slots are
// free.
func (s *pageDrive) startWaiting() {
	for s.inFlight < s.cfg.QueueDepthMax && s.waiting.Len() > 0 {
		w := s.waiting.Peek()
		if !w.split {
			s.waiting.Pop()
			s.start(w.slot)
			continue
		}
		p := s.splits.At(w.slot)
		part := p.rest
		part.Bytes = min(s.cfg.MaxIOBytes, p.rest.Bytes)
		if p.rest.Addr, p.rest.Bytes = p.rest.Addr+part.Bytes, p.rest.Bytes-part.Bytes; p.rest.Bytes == 0 {
			s.waiting.Pop()
		}
		s.start(s.cmds.Put(ssdCmd{req: part, start: p.start, parent: w.slot}))
	}
}

func (s *pageDrive) start(slot int) {
	s.inFlight++
	ctrl := s.ctrl.submit(s.eng.Now())
	if c := s.cmds.At(slot); c.req.Write && s.booking() {
		c.ctrl = ctrl
		s.admitWrite(slot)
		return
	}
	s.ctrlDone.Schedule(ctrl, sim.Event{Handler: s, Op: opSSDControllerDone, Arg: int64(slot)})
}

// controller is ControllerCores cores in front of one FIFO queue, every
// command taking CommandTime: the i-th command starts when it arrives or
// when the (i-cores)-th ends, whichever is later, so completions come in
// order and the cores are a ring of end times.
type controller struct {
	free    []sim.Time // free[next] is the end of the command cores ago
	next    int
	service sim.Time
}

// submit takes a command arriving at now and returns when it is done.
func (c *controller) submit(now sim.Time) sim.Time {
	done := max(now, c.free[c.next]) + c.service
	c.free[c.next] = done
	if c.next++; c.next == len(c.free) {
		c.next = 0
	}
	return done
}

// Handle advances a command through its stages.
func (s *pageDrive) Handle(ev sim.Event) {
	slot := int(ev.Arg)
	switch ev.Op {
	case opSSDControllerDone:
		if s.cmds.At(slot).req.Write { // stage by stage: booking raises no controller event
			s.admitWrite(slot)
		} else {
			s.readFlash(slot)
		}
	case opSSDDataReady:
		s.host.CardToHost.Transfer(s.cmds.At(slot).req.Bytes, sim.Event{Handler: s, Op: opSSDComplete, Arg: ev.Arg})
	case opSSDWriteArrived:
		if at, bytes, ok := s.program(s.eng.Now(), s.cmds.At(slot).req.Bytes); ok {
			s.scheduleRelease(at, bytes)
		}
		s.writesDone.Schedule(s.eng.Now()+s.cfg.WriteOverhead, sim.Event{Handler: s, Op: opSSDComplete, Arg: ev.Arg})
	case opSSDComplete:
		s.complete(slot)
	case opSSDRunEnd:
		s.runEnd(ev.Arg)
	case opSSDReadEnd:
		s.readEnd(ev.Arg)
	case opSSDRelease: // the next release, woken for waiting writes
		s.waking = false
		s.bufferUsed -= s.pendingReleases.Pop().bytes
		s.admitWaitingWrites()
		s.wakeForSpace()
	}
}

// readFlash reserves the planes and channels of every page the read
// touches; the data is ready when the last page has crossed its channel.
func (s *pageDrive) readFlash(slot int) {
	r := s.cmds.At(slot).req
	ready := s.readPages(r.Addr, r.Bytes, s.eng.Now())
	s.eng.Schedule(ready+s.cfg.ReadOverhead, sim.Event{Handler: s, Op: opSSDDataReady, Arg: int64(slot)})
}

// admitWrite reserves buffer space for a write and starts its data
// transfer, or queues it until programs free enough space; with booked
// admission (ssd_booked.go) it does so as of when the write leaves the
// controller.
func (s *pageDrive) admitWrite(slot int) {
	if s.bufferWait.Len() > 0 || !s.reserveBuffer(slot) {
		s.bufferWait.Push(slot)
		s.wakeForSpace()
	}
}

func (s *pageDrive) reserveBuffer(slot int) bool {
	if s.booking() {
		return s.bookBuffer(slot)
	}
	s.freeReleased()
	n := s.cmds.At(slot).req.Bytes
	if s.bufferUsed+n > s.cfg.WriteBufferBytes && s.bufferUsed > 0 {
		return false
	}
	s.bufferUsed += n
	s.transferWrite(s.eng.Now(), n, slot)
	return true
}

// transferWrite sends write slot's n bytes over the host link from at and
// raises its arrival on the arrivals lane; it returns the arrival time.
func (s *pageDrive) transferWrite(at sim.Time, n int64, slot int) sim.Time {
	arrival := s.host.HostToCard.TransferFrom(at, n, sim.Event{Op: opSSDWriteArrived, Arg: int64(slot)})
	s.arrivals.Schedule(arrival, sim.Event{Handler: s, Op: opSSDWriteArrived, Arg: int64(slot)})
	return arrival
}

func (s *pageDrive) admitWaitingWrites() {
	for s.bufferWait.Len() > 0 && s.reserveBuffer(s.bufferWait.Peek()) {
		s.bufferWait.Pop()
	}
}

// program drains whole pages of buffered data, a write arriving at now,
// to the NAND. The space of the pages one write completes is freed
// together, when the last of them is programmed (one release per write,
// not per page), and no earlier than the space of earlier writes: the
// buffer drains in arrival order. It returns the release, if the write
// completed a page.
func (s *pageDrive) program(now sim.Time, bytes int64) (at sim.Time, freed int64, ok bool) {
	s.pendingBytes += bytes
	page := s.cfg.PageBytes
	pages := s.pendingBytes / page
	if pages == 0 {
		return 0, 0, false
	}
	s.pendingBytes -= pages * page
	s.lastRelease = max(s.stripePages(now, pages), s.lastRelease)
	return s.lastRelease, pages * page, true
}

// release is buffer space freed at a time; key is its place among the
// events.
type release struct {
	at    sim.Time
	bytes int64
	key   sim.Key
}

// scheduleRelease frees bytes of the write buffer at time at.
func (s *pageDrive) scheduleRelease(at sim.Time, bytes int64) {
	s.pendingReleases.Push(release{at: at, bytes: bytes, key: s.eng.Reserve(at)})
	s.wakeForSpace()
}

// freeReleased applies the releases that precede the event being handled.
func (s *pageDrive) freeReleased() {
	for s.pendingReleases.Len() > 0 && s.eng.Precedes(s.pendingReleases.Peek().key) {
		freed := s.pendingReleases.Pop().bytes
		s.bufferUsed -= freed
		if s.ahead.n > 0 {
			s.ahead.n--
			s.ahead.bytes -= freed
		}
	}
}

// wakeForSpace raises the next release as an event while writes wait for
// buffer space, so that they are admitted exactly when they would be if
// every release were an event; with booked admission it admits those the
// releases known make room for.
func (s *pageDrive) wakeForSpace() {
	if s.booking() {
		s.bookWaiting()
		return
	}
	s.freeReleased()
	if !s.waking && s.bufferWait.Len() > 0 && s.pendingReleases.Len() > 0 {
		s.waking = true
		s.eng.ScheduleAt(s.pendingReleases.Peek().key, sim.Event{Handler: s, Op: opSSDRelease})
	}
}

// complete finishes a command, no earlier than the small-I/O floor.
func (s *pageDrive) complete(slot int) {
	c := s.cmds.At(slot)
	if floor := c.start + s.cfg.SmallIOLatency; !c.floored && c.req.Bytes <= s.cfg.SmallIOBytes && floor > s.eng.Now() {
		c.floored = true
		s.eng.Schedule(floor, sim.Event{Handler: s, Op: opSSDComplete, Arg: int64(slot)})
		return
	}
	done := s.cmds.Take(slot)
	s.count(done.req, 1, done.start)
	s.raise(done)
	s.inFlight--
	s.startWaiting()
}

// raise signals a command's completion, or its split request's with the
// last of its commands, and records the request's latency.
func (s *pageDrive) raise(c ssdCmd) {
	if c.parent >= 0 {
		p := s.splits.At(c.parent)
		if p.left--; p.left > 0 {
			return
		}
		s.splits.Take(c.parent)
	}
	s.finish(c.req, c.start, false)
}
