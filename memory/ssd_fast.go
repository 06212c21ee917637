package memory

import (
	"fmt"

	"github.com/kvcosim/kvcosim/sim"
)

// The closed-form path of writes that meet an idle drive (no command in
// flight or waiting). Until a read arrives, nothing but writes touches the
// drive's queue, controller, write buffer, host link and NAND, and each of
// them serves in arrival order, so a command's times depend only on the
// commands before it: they follow from the same recurrences the events
// would run, in command order over the run of writes:
//
//	issue(i)  = max(its request's arrival, issue(i-1), end(i-QueueDepthMax))
//	ctrl(i)   = controller.submit(issue(i))
//	admit(i)  = the first time >= max(ctrl(i), admit(i-1)) at which the
//	            buffer, after every release up to then, has room
//	arrive(i) = link reservation from admit(i) (Link.TransferFrom)
//	end(i)    = arrive(i) + WriteOverhead; program(arrive(i)) gives the
//	            release of its pages
//
// A write arriving during the run joins it. Each write costs one event,
// at its end; when the last ends, the run's totals, link traffic and
// buffer releases are written out as the events would have left them. If
// a read arrives first, the drive goes back to the state it had when the
// run began, runs the recurrences again up to that instant and hands every
// command over to the event-by-event path in the stage it has reached
// (queue, controller, buffer queue, link, write overhead): the split of
// the closed form at that instant. TestSSDFastPathMatchesEventByEvent
// checks both paths give the same completions and totals.
type writeRun struct {
	active bool
	nextID int64 // numbers the run's writes across runs; end events carry it
	t0     sim.Time
	used0  int64     // buffer bytes in use at t0
	before []release // releases pending at t0
	reqs   []runWrite
	cmds   []soloCmd
	rels   []release // the run's own releases
	snap   ssdSnapshot
	cur    runCursor
}

// runWrite is a write of the run.
type runWrite struct {
	req          Request
	id           int64
	arrival, end sim.Time
	first, n     int // its commands, from cmds[first]
	raised       bool
}

// runCursor is where the recurrences stand after the last command worked
// out.
type runCursor struct {
	linkFree, lastAdmit, lastIssue sim.Time
	admitted, freed                int64
	next                           int
	blocked                        bool
}

// soloCmd is one command of the run; notYet marks a stage not reached.
type soloCmd struct {
	bytes                           int64
	issue, ctrl, admit, arrive, end sim.Time
}

// ssdSnapshot is the drive state a run changes as it is worked out.
type ssdSnapshot struct {
	nand         nandSnapshot
	ctrl         ctrlSnapshot
	lastRelease  sim.Time
	pendingBytes int64
}

// ctrlSnapshot is the controller's ring of end times.
type ctrlSnapshot struct {
	free []sim.Time
	next int
}

func (c *controller) save(p *ctrlSnapshot) {
	p.free, p.next = append(p.free[:0], c.free...), c.next
}

func (c *controller) restore(p *ctrlSnapshot) {
	copy(c.free, p.free)
	c.next = p.next
}

// nandSnapshot is the NAND's state: the planes (all of them, or a run of
// them: savePlanes), the write pointer and the channels.
type nandSnapshot struct {
	planes   nandPlanes
	channels []nandChannel
	idleAt   sim.Time
	owed     owedWrite
}

// notYet is the time of a stage a command has not reached.
const notYet = sim.MaxTime

func (s *pageDrive) save(p *ssdSnapshot) {
	s.saveNAND(&p.nand)
	s.ctrl.save(&p.ctrl)
	p.lastRelease, p.pendingBytes = s.lastRelease, s.pendingBytes
}

func (s *pageDrive) restore(p *ssdSnapshot) {
	s.restoreNAND(&p.nand)
	s.ctrl.restore(&p.ctrl)
	s.lastRelease, s.pendingBytes = p.lastRelease, p.pendingBytes
}

func (s *pageDrive) saveNAND(p *nandSnapshot) { s.savePlanes(p, 0, len(s.planes.base)) }

func (s *pageDrive) restoreNAND(p *nandSnapshot) { s.restorePlanes(p, 0) }

// savePlanes saves the NAND, but of the planes' free and chain times only
// the n from stripe position first on (wrapping round): a read changes
// only those of the planes its pages lie on.
func (s *pageDrive) savePlanes(p *nandSnapshot, first, n int) {
	p.planes.base = appendRing(p.planes.base[:0], s.planes.base, first, n)
	p.planes.chain = appendRing(p.planes.chain[:0], s.planes.chain, first, n)
	p.planes.desc = append(p.planes.desc[:0], s.planes.desc...)
	p.planes.lap, p.planes.pos = s.planes.lap, s.planes.pos
	p.channels = append(p.channels[:0], s.channels.ch...)
	p.idleAt, p.owed = s.channels.idleAt, s.channels.owed
}

// restorePlanes puts back the NAND savePlanes saved from position first.
func (s *pageDrive) restorePlanes(p *nandSnapshot, first int) {
	s.restorePlaneTimes(p, first)
	copy(s.planes.desc, p.planes.desc)
	s.planes.lap, s.planes.pos = p.planes.lap, p.planes.pos
	copy(s.channels.ch, p.channels)
	s.channels.idleAt, s.channels.owed = p.idleAt, p.owed
}

// restorePlaneTimes puts back only the planes' free and chain times
// savePlanes saved from position first.
func (s *pageDrive) restorePlaneTimes(p *nandSnapshot, first int) {
	copyRing(s.planes.base, first, p.planes.base)
	copyRing(s.planes.chain, first, p.planes.chain)
}

// appendRing appends to dst the n values of ring from position first on,
// wrapping round.
func appendRing(dst, ring []sim.Time, first, n int) []sim.Time {
	end := min(first+n, len(ring))
	dst = append(dst, ring[first:end]...)
	return append(dst, ring[:n-(end-first)]...)
}

// copyRing copies src into ring from position first on, wrapping round.
func copyRing(ring []sim.Time, first int, src []sim.Time) {
	k := copy(ring[first:], src)
	copy(ring, src[k:])
}

// fastWrite takes write r into the closed-form path, starting a run if the
// drive is idle, and reports whether it did.
func (s *pageDrive) fastWrite(r Request) bool {
	w := &s.run
	if !r.Write || s.cfg.EventByEvent || s.cfg.SmallIOLatency > 0 || s.eng.Trace().AllSpans() {
		return false
	}
	if !w.active {
		if s.inFlight > 0 || s.waiting.Len() > 0 || s.bufferWait.Len() > 0 || s.readRun.active {
			return false
		}
		s.freeReleased()
		w.t0, w.used0 = s.eng.Now(), s.bufferUsed
		w.before, w.reqs, w.cmds, w.rels = w.before[:0], w.reqs[:0], w.cmds[:0], w.rels[:0]
		for i := range s.pendingReleases.Len() {
			w.before = append(w.before, s.pendingReleases.At(i))
		}
		s.save(&w.snap)
		w.cur = runCursor{linkFree: s.host.HostToCard.FreeAt(), lastAdmit: w.t0}
	}
	n := int((r.Bytes + s.cfg.MaxIOBytes - 1) / s.cfg.MaxIOBytes)
	w.reqs = append(w.reqs, runWrite{req: r, id: w.nextID, arrival: s.eng.Now(), first: len(w.cmds), n: n})
	if !s.workOut(len(w.reqs)-1, notYet) {
		w.reqs = w.reqs[:len(w.reqs)-1]
		if w.active {
			s.handOver()
		} else {
			s.restore(&w.snap)
		}
		return false
	}
	w.active = true
	w.nextID++
	x := &w.reqs[len(w.reqs)-1]
	x.end = w.cmds[len(w.cmds)-1].end
	s.eng.Schedule(x.end, sim.Event{Handler: s, Op: opSSDRunEnd, Arg: x.id})
	return true
}

// workOut works out the commands of the run's writes from the k-th on,
// carrying out on the NAND the arrivals up to stop. With stop = notYet it
// reports whether every command ends.
func (s *pageDrive) workOut(k int, stop sim.Time) bool {
	w, c := &s.run, &s.run.cur
	maxIO, bufferBytes, qd := s.cfg.MaxIOBytes, s.cfg.WriteBufferBytes, s.cfg.QueueDepthMax
	link := s.host.HostToCard
	for ; k < len(w.reqs); k++ {
		r := &w.reqs[k]
		w.cmds = w.cmds[:r.first]
		for i := range r.n {
			x := soloCmd{bytes: min(maxIO, r.req.Bytes-int64(i)*maxIO), issue: max(r.arrival, c.lastIssue),
				ctrl: notYet, admit: notYet, arrive: notYet, end: notYet}
			if j := len(w.cmds) - qd; j >= 0 {
				x.issue = max(x.issue, w.cmds[j].end)
			}
			if x.issue > stop {
				return true
			}
			c.lastIssue = x.issue
			x.ctrl = s.ctrl.submit(x.issue)
			if !c.blocked && x.ctrl <= stop {
				t := max(x.ctrl, c.lastAdmit)
				for {
					for ; c.next < len(w.before)+len(w.rels) && w.release(c.next).at <= t; c.next++ {
						c.freed += w.release(c.next).bytes
					}
					if used := w.used0 + c.admitted - c.freed; used+x.bytes <= bufferBytes || used <= 0 {
						break
					}
					if c.next == len(w.before)+len(w.rels) {
						if stop == notYet {
							return false // space no release will free
						}
						t = notYet
						break
					}
					t = w.release(c.next).at
				}
				if c.blocked = t > stop; !c.blocked {
					x.admit, c.lastAdmit, c.admitted = t, t, c.admitted+x.bytes
					c.linkFree = max(t, c.linkFree) + link.WireTime(x.bytes)
					x.arrive = c.linkFree + link.Config().Latency
					x.end = x.arrive + s.cfg.WriteOverhead
					if x.arrive <= stop {
						if at, bytes, ok := s.program(x.arrive, x.bytes); ok {
							w.rels = append(w.rels, release{at: at, bytes: bytes})
						}
					}
				}
			}
			w.cmds = append(w.cmds, x)
		}
	}
	return stop != notYet || w.cmds[len(w.cmds)-1].end != notYet
}

// release returns the k-th release from t0: those pending then, then the
// run's own.
func (w *writeRun) release(k int) release {
	if k < len(w.before) {
		return w.before[k]
	}
	return w.rels[k-len(w.before)]
}

// runEnd is the end of the run's write id: its completion is raised, and
// with the last write the run is written out.
func (s *pageDrive) runEnd(id int64) {
	w := &s.run
	if !w.active || id < w.reqs[0].id || id > w.reqs[len(w.reqs)-1].id {
		return
	}
	if x := &w.reqs[id-w.reqs[0].id]; !x.raised {
		x.raised = true
		s.finish(x.req, x.arrival, false)
	}
	if id == w.reqs[len(w.reqs)-1].id {
		s.settleRun(s.eng.Now())
	}
}

// handOver splits the run at now, when a read arrives: the drive is wound
// back to the run's start, the recurrences run again up to now, and the
// commands still under way go on event by event.
func (s *pageDrive) handOver() {
	now := s.eng.Now()
	w := &s.run
	s.restore(&w.snap)
	w.rels = w.rels[:0]
	w.cur = runCursor{linkFree: s.host.HostToCard.FreeAt(), lastAdmit: w.t0}
	s.workOut(0, now)
	s.settleRun(now)
}

// settleRun writes out the run as of now: the link traffic, the totals of
// the commands that have ended, the buffer's occupancy and releases, every
// command still under way at the stage it has reached, and the writes not
// yet begun in the queue.
func (s *pageDrive) settleRun(now sim.Time) {
	w := &s.run
	w.active = false
	maxIO := s.cfg.MaxIOBytes
	arrived := linkTally{link: s.host.HostToCard}
	for k := range w.reqs {
		x := &w.reqs[k]
		r := x.req
		cmds := w.cmds[min(x.first, len(w.cmds)):min(x.first+x.n, len(w.cmds))]
		ended := 0 // the commands that end by now, the first ones
		for ended < len(cmds) && cmds[ended].end <= now {
			ended++
		}
		parent := s.requeue(r, x.arrival, x.n, len(cmds), ended)
		for i, c := range cmds {
			if c.admit <= now {
				s.bufferUsed += c.bytes
				s.lastAdmit = c.admit
			}
			if c.arrive <= now {
				arrived.add(c.bytes, c.arrive)
			}
			if c.end <= now {
				s.writes.Add(1)
				s.bytesWritten.Add(c.bytes)
				continue
			}
			part := r
			part.Addr, part.Bytes = r.Addr+int64(i)*maxIO, c.bytes
			slot := s.cmds.Put(ssdCmd{req: part, start: x.arrival, ctrl: c.ctrl, parent: parent})
			s.inFlight++
			switch {
			case c.arrive <= now:
				s.writesDone.Schedule(c.end, sim.Event{Handler: s, Op: opSSDComplete, Arg: int64(slot)})
			case c.admit <= now:
				arrived.flush()
				if at := s.transferWrite(c.admit, c.bytes, slot); at != c.arrive {
					panic(fmt.Sprintf("memory: %s at %v: a run's command arrives at %v, the link says %v", s.cfg.Name, now, c.arrive, at))
				}
			default: // admitted by booking, once the run's releases are pending
				s.bufferWait.Push(slot)
			}
		}
		if ended == x.n && !x.raised {
			x.raised = true
			s.finish(r, x.arrival, false)
		}
	}
	arrived.flush()
	for _, x := range w.rels {
		if x.at <= now {
			s.bufferUsed -= x.bytes
		} else {
			s.scheduleRelease(x.at, x.bytes)
		}
	}
	s.wakeForSpace()
}

// requeue gives back to the queue what a closed-form run has not finished
// of request r, of n commands, arrived at start, made of them issued and
// ended of them ended: a split request gets its entry (its commands left to
// end and bytes not yet made, waiting for slots if any are), and a single
// command not yet issued waits. It returns the split's slot, or -1.
func (s *pageDrive) requeue(r Request, start sim.Time, n, made, ended int) int {
	if n == 1 {
		if made == 0 {
			s.waiting.Push(waiter{slot: s.cmds.Put(ssdCmd{req: r, start: start, parent: -1})})
		}
		return -1
	}
	if ended == n {
		return -1
	}
	rest, issued := r, int64(made)*s.cfg.MaxIOBytes
	rest.Addr, rest.Bytes = r.Addr+issued, r.Bytes-min(r.Bytes, issued)
	parent := s.splits.Put(split{left: n - ended, rest: rest, start: start})
	if rest.Bytes > 0 {
		s.waiting.Push(waiter{slot: parent, split: true})
	}
	return parent
}

// linkTally sums the transfers of a run's commands that have arrived, in
// command order, for sim.Link.Account on link: the wire carried them one
// after the other, so it is free when the last has crossed.
type linkTally struct {
	link         *sim.Link
	n, bytes     int64
	busy, freeAt sim.Time
}

// add counts a transfer of bytes that arrived at arrive.
func (t *linkTally) add(bytes int64, arrive sim.Time) {
	t.n++
	t.bytes += bytes
	t.busy += t.link.WireTime(bytes)
	t.freeAt = arrive - t.link.Config().Latency
}

// flush accounts the summed transfers to the link and starts a new sum.
func (t *linkTally) flush() {
	if t.n > 0 {
		t.link.Account(t.n, t.bytes, t.busy, t.freeAt)
	}
	t.n, t.bytes, t.busy = 0, 0, 0
}
