package memory

import (
	"fmt"
	"slices"
	"sort"

	"github.com/kvcosim/kvcosim/sim"
)

// The request-level resolution of the drive (SSDConfig.Resolution =
// ResolutionRequest). A request is worked out once, when it arrives, from
// the drive's rates instead of command by command and page by page: each
// of the drive's servers (queue slots, controller, write buffer, host link,
// NAND) is a first-come first-served flow that keeps the time it is next
// free, and a request of n commands streams through it.
//
//	issue      when fewer than QueueDepthMax commands are outstanding
//	controller the first command leaves CommandTime after the controller is
//	           free, the last ceil(n / ControllerCores) CommandTimes later
//	buffer     a write's command is admitted when the bytes written
//	           WriteBufferBytes before its end are programmed (release curve)
//	host link  the request's bytes in one reservation (Link.TransferFrom),
//	           starting no earlier than its first command is admitted and
//	           late enough that its last command goes after its admission
//	NAND       a fluid clock at the program rate, min(planes x page / tPROG,
//	           channels x channel rate) with write amplification: a page is
//	           programmed a page transfer plus tPROG after its arrival on an
//	           idle array, and on a busy one half a stripe's time after the
//	           clock passes it (a page waits for its plane's previous
//	           program; on average half a round of the stripe)
//	reads      go before queued programs: sense once the programs in
//	           progress on their planes end (an average part of tPROG, no
//	           later than their planes' latest programs), then stream at
//	           min(planes x page / tR, channels x channel rate) and cross
//	           the link card to host
//
// A request costs one event, its end. What it gives up against the page
// level: plane-by-plane and channel-by-channel detail (a read waits for
// the programs in progress on its planes on average, worked out from the
// write pointer, not for each plane's), a request's commands counted
// outstanding until its last ends, and a request's link transfer as one
// reservation (the link counts one transfer a request).
// TestRequestResolutionWithinBound holds it against the page level, and
// TestResolutionsAgainstReference both against a reference, in every
// regime of driveRegimes; docs/memory.md states the bounds.
type requestDrive struct {
	*ssdBase
	// writesDone holds write completions, which come in time order
	writesDone *sim.Lane
	flow       flowDrive
}

var _ Device = (*requestDrive)(nil)

func newRequestDrive(base *ssdBase) *requestDrive {
	return &requestDrive{ssdBase: base, writesDone: sim.NewLane(base.eng, base.cfg.Name+".writes"), flow: newFlowDrive(base.cfg)}
}

// flowDrive is the request resolution's state: the drive's rates, when
// each server is next free, the write stream's spans and the outstanding
// requests.
type flowDrive struct {
	program, sense, readChannels sim.Bandwidth
	// programIdle and programBusy are a page's time from arrival, and from
	// the fluid clock passing it, to its program's end
	programIdle, programBusy sim.Time
	pageRead                 sim.Time // tR plus a page's channel transfer
	stripe                   int64    // bytes of a page on every plane
	// tProg is a page's program time (write amplification included), the
	// longest a read waits on a plane (read priority); senseStripe is a
	// stripe's sensing, spread over the planes
	tProg, senseStripe sim.Time

	ctrlFree, nandClock, readFree, lastAdmit sim.Time
	written                                  int64              // bytes of writes admitted so far
	spans                                    sim.FIFO[flowSpan] // the writes, oldest first, while the buffer or a read can need them
	slots                                    flowSlots          // the outstanding requests' commands
	reqs                                     sim.Slots[flowReq]
}

// flowSpan is a write's bytes [x0, x1) of the drive's write stream, the
// arrival of its first and last byte at the card and the programs' ends.
type flowSpan struct {
	x0, x1         int64
	a0, a1, d0, d1 sim.Time
}

// flowOut is a request's commands, outstanding until end.
type flowOut struct {
	end  sim.Time
	cmds int64
}

// flowReq is a request under way.
type flowReq struct {
	req   Request
	start sim.Time
	cmds  int64
}

func newFlowDrive(c SSDConfig) flowDrive {
	stripe := int64(c.Planes()) * c.PageBytes
	amp := func(b sim.Bandwidth) sim.Bandwidth { return sim.Bandwidth(float64(b) / c.WriteAmplification) }
	channels := c.ChannelBandwidth * sim.Bandwidth(c.Channels)
	program := amp(flowRate(stripe, c.ProgramTime, channels))
	xfer := sim.TimeOf(float64(c.ChannelBandwidth.TransferTime(c.PageBytes)) * c.WriteAmplification)
	tProg := sim.TimeOf(float64(c.ProgramTime) * c.WriteAmplification)
	sense := flowRate(stripe, c.ReadTime, channels)
	return flowDrive{program: program, sense: sense, readChannels: channels,
		programIdle: xfer + tProg, programBusy: xfer + max(0, tProg-program.TransferTime(stripe)/2),
		pageRead: c.ReadTime + c.ChannelBandwidth.TransferTime(c.PageBytes), stripe: stripe, tProg: tProg, senseStripe: c.ReadTime,
		slots: flowSlots{rest: flowOuts{latest: true}}}
}

// flowRate returns the rate of bytes every t, at most limit: limit where
// t is 0 (Validate allows a tPROG or tR of 0, which leaves the channels
// the bound) or the quotient passes it.
func flowRate(bytes int64, t sim.Time, limit sim.Bandwidth) sim.Bandwidth {
	if r := float64(bytes) * float64(sim.Second) / float64(t); t > 0 && r < float64(limit) {
		return sim.Bandwidth(r)
	}
	return limit
}

// Access works request r out at the request level and raises its end.
func (s *requestDrive) Access(r Request) {
	f, now, whole := &s.flow, s.eng.Now(), r
	// a write longer than half the buffer is gated by its own releases: it
	// goes in pieces of whole commands, one event for the last; a piece is
	// at least a command (a buffer under two commands has no whole command
	// in its half, and a piece of none would never end)
	piece := max(s.cfg.MaxIOBytes, s.cfg.WriteBufferBytes/2/s.cfg.MaxIOBytes*s.cfg.MaxIOBytes)
	for r.Write && r.Bytes > max(s.cfg.WriteBufferBytes/2, piece) {
		part := r
		part.Bytes = piece
		part.Done = sim.Event{}
		s.flowWrite(now, part, f.slots.issue(now))
		r.Addr, r.Bytes = r.Addr+part.Bytes, r.Bytes-part.Bytes
	}
	n := s.commands(whole.Bytes)
	issue := f.slots.issue(now)
	var end sim.Time
	if r.Write {
		end = s.flowWrite(now, r, issue)
	} else {
		end = s.flowRead(r, issue)
	}
	ev := sim.Event{Handler: s, Op: opSSDFlowDone, Arg: int64(f.reqs.Put(flowReq{req: whole, start: now, cmds: n}))}
	floor := now + s.cfg.SmallIOLatency
	floored := whole.Bytes <= s.cfg.SmallIOBytes && floor > end
	if floored {
		end = floor
	}
	if r.Write && !floored { // writes end in order of their link transfers
		s.writesDone.Schedule(end, ev)
	} else { // a read's own wait for its planes, or the floor, can pass later ones
		s.eng.Schedule(end, ev)
	}
	f.slots.add(flowOut{end: end, cmds: n}, int64(s.cfg.QueueDepthMax), now)
}

// flowSlots holds the outstanding requests' commands for the queue slots,
// split by end: top, the requests ending latest whose commands number
// fewer than the queue depth, and rest, the others. The slots are free for
// a request at the latest end in rest (then fewer than the depth remain),
// or now if that has passed: a heap each, where sorting every outstanding
// request at every request cost a run of 80,000 requests past the
// drive's rate 55 s. Requests that have ended may stay in either (the
// oldest ends, they never hold up a request after them): top holds fewer
// than the depth, and rest is cleared when its latest has ended and
// compacted when it has doubled.
type flowSlots struct {
	top, rest flowOuts // top by its earliest end, rest by its latest
	topCmds   int64    // the commands in top
	kept      int      // rest's size when last compacted
}

// issue returns when a request arriving at now gets its first command a
// queue slot: now, or when enough outstanding requests have ended that
// fewer than QueueDepthMax commands remain.
func (q *flowSlots) issue(now sim.Time) sim.Time {
	if q.rest.Len() == 0 || q.rest.h[0].end <= now {
		q.rest.h = q.rest.h[:0]
		return now
	}
	return q.rest.h[0].end
}

// add puts a request's commands, outstanding until o.end, among the
// outstanding ones, with depth queue slots, at now.
func (q *flowSlots) add(o flowOut, depth int64, now sim.Time) {
	if q.rest.Len() > 0 && o.end < q.rest.h[0].end {
		q.rest.push(o)
	} else {
		q.top.push(o)
		q.topCmds += o.cmds
	}
	for q.topCmds >= depth {
		x := q.top.pop()
		q.topCmds -= x.cmds
		q.rest.push(x)
	}
	for q.rest.Len() > 0 && q.topCmds+q.rest.h[0].cmds < depth {
		x := q.rest.pop()
		q.topCmds += x.cmds
		q.top.push(x)
	}
	if q.rest.Len() > 2*q.kept+1024 {
		q.rest.h = slices.DeleteFunc(q.rest.h, func(x flowOut) bool { return x.end <= now })
		q.rest.init()
		q.kept = q.rest.Len()
	}
}

// flowOuts is a heap of outstanding requests by end: the earliest on top,
// or with latest the latest. Its moves are container/heap's, on the
// concrete type (through the interface, boxing each value, they were a
// twentieth of a cluster day's CPU).
type flowOuts struct {
	h      []flowOut
	latest bool
}

// Len is the number of requests in the heap.
func (q *flowOuts) Len() int { return len(q.h) }

// less reports whether request i goes above request j.
func (q *flowOuts) less(i, j int) bool {
	if q.latest {
		return q.h[i].end > q.h[j].end
	}
	return q.h[i].end < q.h[j].end
}

// push adds o.
func (q *flowOuts) push(o flowOut) {
	q.h = append(q.h, o)
	q.up(len(q.h) - 1)
}

// pop removes and returns the top request.
func (q *flowOuts) pop() flowOut {
	n := len(q.h) - 1
	q.h[0], q.h[n] = q.h[n], q.h[0]
	q.down(0, n)
	x := q.h[n]
	q.h = q.h[:n]
	return x
}

// init orders the requests into a heap.
func (q *flowOuts) init() {
	for i := len(q.h)/2 - 1; i >= 0; i-- {
		q.down(i, len(q.h))
	}
}

// up moves request j up to its place.
func (q *flowOuts) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !q.less(j, i) {
			return
		}
		q.h[i], q.h[j] = q.h[j], q.h[i]
		j = i
	}
}

// down moves request i down to its place among the first n.
func (q *flowOuts) down(i, n int) {
	for {
		j := 2*i + 1
		if j >= n {
			return
		}
		if j2 := j + 1; j2 < n && q.less(j2, j) {
			j = j2
		}
		if !q.less(j, i) {
			return
		}
		q.h[i], q.h[j] = q.h[j], q.h[i]
		i = j
	}
}

// flowController returns when a request of n commands issued at issue has
// its first and its last command through the controller.
func (s *requestDrive) flowController(issue sim.Time, n int64) (first, last sim.Time) {
	f, c := &s.flow, s.cfg
	start := max(issue, f.ctrlFree)
	f.ctrlFree = start + sim.MulTime(n, c.CommandTime)/sim.Time(c.ControllerCores)
	return start + c.CommandTime, start + sim.MulTime((n+int64(c.ControllerCores)-1)/int64(c.ControllerCores), c.CommandTime)
}

// flowWrite works out write r and returns its end: the last command's data
// has crossed the link and been acknowledged.
func (s *requestDrive) flowWrite(now sim.Time, r Request, issue sim.Time) sim.Time {
	f, c := &s.flow, s.cfg
	n, firstBytes, lastBytes := s.commandSizes(r.Bytes)
	ctrlFirst, ctrlLast := s.flowController(issue, n)
	x0, x1 := f.written, f.written+r.Bytes
	y0, y1 := x0+firstBytes-c.WriteBufferBytes, x1-c.WriteBufferBytes // the bytes the first and last commands wait for
	admitFirst := max(ctrlFirst, f.lastAdmit, f.releaseAt(y0, now))
	link := s.host.HostToCard
	wire := link.WireTime
	arrFirst := max(admitFirst, link.FreeAt()) + wire(firstBytes) + link.Config().Latency
	// the last command goes after its admission and every earlier one's
	// (the release curve's kinks, the spans starting between y0 and y1,
	// looked at before releaseAt(y1) prunes them, and its own)
	admitLast := ctrlLast
	for i := f.spanAfter(y0); i < f.spans.Len() && f.spans.At(i).x0 < y1; i++ {
		sp := f.spans.At(i)
		admitLast = max(admitLast, sp.d0+wire(y1-sp.x0)-wire(lastBytes))
	}
	admitLast = max(admitLast, f.releaseAt(y1, now))
	lastStart, arrLast := flowStream(link, admitFirst, admitLast, r.Bytes, lastBytes)
	f.lastAdmit = max(admitFirst, lastStart)
	clock := max(arrFirst, f.nandClock)
	f.nandClock = max(clock+f.program.TransferTime(r.Bytes), arrLast+f.program.TransferTime(lastBytes))
	sp := flowSpan{x0: x0, x1: x1, a0: arrFirst, a1: arrLast,
		d0: max(arrFirst+f.programIdle, clock+f.program.TransferTime(firstBytes)+f.programBusy),
		d1: max(arrLast+f.programIdle, f.nandClock+f.programBusy)}
	sp.d0 = max(sp.d0, s.lastRelease) // the buffer drains in arrival order
	sp.d1 = max(sp.d1, sp.d0)
	if f.spans.Len() > 0 { // arrivedBy bisects on the arrivals
		if prev := f.spans.At(f.spans.Len() - 1); sp.a0 < prev.a0 || sp.a1 < prev.a1 {
			panic(fmt.Sprintf("memory: %s at %v: a write's arrival [%v, %v] before the previous one's [%v, %v]", c.Name, now, sp.a0, sp.a1, prev.a0, prev.a1))
		}
	}
	f.spans.Push(sp)
	f.written, s.lastRelease = x1, sp.d1
	return arrLast + c.WriteOverhead
}

// releaseAt returns when byte y of the write stream is programmed, its
// buffer space freed (0 for y before the stream), asked at now. The spans
// more than a stripe before both y and the bytes arrived by now are no
// longer needed: later lookups only go further, and reads, at now or
// later, look back at most a stripe from the bytes arrived when they
// sense.
func (f *flowDrive) releaseAt(y int64, now sim.Time) sim.Time {
	if y < 0 {
		return 0
	}
	keep := min(y, f.arrivedBy(now)) - f.stripe
	for f.spans.Len() > 1 && f.spans.Peek().x1 <= keep {
		f.spans.Pop()
	}
	i := f.spanAfter(y) - 1 // the last span starting at or before y
	if f.spans.Len() == 0 {
		return 0
	}
	if i < 0 {
		panic(fmt.Sprintf("memory: request-level drive: release of byte %d asked after its span was dropped (spans from %d)", y, f.spans.Peek().x0))
	}
	sp := f.spans.At(i)
	if y >= sp.x1 {
		return sp.d1
	}
	return sim.Interpolate(sp.d0, sp.d1, y-sp.x0, sp.x1-sp.x0)
}

// spanAfter returns the index of the first span starting after byte y (the
// spans' starts increase).
func (f *flowDrive) spanAfter(y int64) int {
	return sort.Search(f.spans.Len(), func(i int) bool { return f.spans.At(i).x0 > y })
}

// planesFree returns when the planes a read of bytes from addr senses at t
// have programmed the pages that reached the card before t: a plane is
// free after its latest page, and the write pointer stripes the stream's
// pages over the planes in turn, so the latest page on the read's run of
// planes is the stream's latest but the distance back to the run.
func (s *requestDrive) planesFree(addr, bytes int64, t sim.Time) sim.Time {
	f, page, planes := &s.flow, s.cfg.PageBytes, int64(s.cfg.Planes())
	arrived := f.arrivedBy(t) / page
	if arrived == 0 {
		return 0
	}
	first := addr / page
	touched := min((addr+bytes-1)/page-first+1, planes)
	latest := (arrived - 1) % planes
	back := (latest - first%planes + planes) % planes
	if back < touched {
		back = 0
	} else {
		back -= touched - 1
	}
	if back >= arrived {
		return 0
	}
	return f.programmedAt((arrived - back) * page)
}

// programInProgress returns how long a read of bytes from addr waits, at
// most, for the programs in progress on its planes: reads go before queued
// programs (read priority, docs/memory.md), so on a busy array a page
// waits for the rest of its plane's program. The write pointer gives
// consecutive planes their pages one after the other, so their programs
// end in turn: the rest on the read's first plane is a uniform part of
// tPROG, half of it on average, and the last of its n planes ends n/planes
// of a tPROG after it, so the read waits (1 + n/planes)/2 of a tPROG.
func (s *requestDrive) programInProgress(addr, bytes int64) sim.Time {
	page, planes := s.cfg.PageBytes, int64(s.cfg.Planes())
	n := min((addr+bytes-1)/page-addr/page+1, planes)
	return sim.Interpolate(0, s.flow.tProg, planes+n, 2*planes)
}

// arrivedBy returns how many bytes of the write stream had reached the card
// by t. The spans' arrivals increase (one link carries them in turn), so
// the last span whose first byte has arrived is found by bisection.
func (f *flowDrive) arrivedBy(t sim.Time) int64 {
	i := sort.Search(f.spans.Len(), func(i int) bool { return f.spans.At(i).a0 > t }) - 1
	switch {
	case i >= 0:
		sp := f.spans.At(i)
		if sp.a1 <= t {
			return sp.x1
		}
		return sim.Interpolate(sp.x0, sp.x1, int64(t-sp.a0), int64(sp.a1-sp.a0))
	case f.spans.Len() > 0:
		return f.spans.Peek().x0
	}
	return f.written
}

// programmedAt returns when the stream's bytes before x are programmed.
func (f *flowDrive) programmedAt(x int64) sim.Time {
	if i := f.spanAfter(x-1) - 1; i >= 0 {
		sp := f.spans.At(i)
		return sim.Interpolate(sp.d0, sp.d1, x-sp.x0, sp.x1-sp.x0)
	}
	return 0
}

// flowRead works out read r and returns its end: its last byte has crossed
// the link card to host. The NAND channels and the link carry the reads'
// data in turn, as if every read sensed at its controller's end; a read
// whose planes are still programming then ends no earlier than that wait
// allows, without holding up the reads behind it (their data goes first
// on the channels and the link, as it does page by page).
func (s *requestDrive) flowRead(r Request, issue sim.Time) sim.Time {
	f, c := &s.flow, s.cfg
	n, firstBytes, lastBytes := s.commandSizes(r.Bytes)
	ctrlFirst, ctrlLast := s.flowController(issue, n)
	wait := min(max(0, s.planesFree(r.Addr, r.Bytes, ctrlFirst)-ctrlFirst), s.programInProgress(r.Addr, r.Bytes))
	if f.nandClock > ctrlFirst { // a busy array's backlog grows by the read's sensing on its planes
		f.nandClock += sim.MulTime(r.Bytes, f.senseStripe) / sim.Time(f.stripe)
	}
	f.readFree = max(ctrlFirst, f.readFree) + f.readChannels.TransferTime(r.Bytes)
	readyFirst := ctrlFirst + f.pageRead + f.readChannels.TransferTime(firstBytes) + c.ReadOverhead
	readyLast := max(f.readFree+c.ReadTime, ctrlFirst+f.sense.TransferTime(r.Bytes)+f.pageRead, ctrlLast+f.pageRead) + c.ReadOverhead
	link := s.host.CardToHost
	_, arrival := flowStream(link, readyFirst, readyLast, r.Bytes, lastBytes)
	latency := link.Config().Latency
	return max(arrival, readyFirst+wait+link.WireTime(r.Bytes)+latency, readyLast+wait+link.WireTime(lastBytes)+latency)
}

// flowStream books a request's bytes on link in one reservation: its first
// command starts no earlier than first, its last no earlier than last and
// after the bytes before it have crossed. It returns when the last command
// starts and when the last byte arrives.
func flowStream(link *sim.Link, first, last sim.Time, bytes, lastBytes int64) (lastStart, arrival sim.Time) {
	whole, lastWire := link.WireTime(bytes), link.WireTime(lastBytes)
	lastStart = max(max(first, link.FreeAt())+whole-lastWire, last)
	return lastStart, link.TransferFrom(lastStart+lastWire-whole, bytes, sim.Event{})
}

// Handle ends a request worked out at the request level (opSSDFlowDone,
// its one event).
func (s *requestDrive) Handle(ev sim.Event) {
	d := s.flow.reqs.Take(int(ev.Arg))
	s.count(d.req, d.cmds, d.start)
	s.finish(d.req, d.start, true) // the request level ends here: nothing after it
}
