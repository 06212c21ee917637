package memory

import (
	"fmt"
	"slices"

	"github.com/kvcosim/kvcosim/sim"
)

// The closed-form path of reads that meet an idle drive (no command in
// flight or waiting). Until a write arrives, nothing but reads touches the
// drive. A read's commands are issued in arrival order as queue slots
// free, take the controller in that order and sense their pages at the
// controller's end, in that order too, so the NAND serves them as the
// events would:
//
//	issue(i) = max(its read's arrival, issue(i-1), the (i+1-QueueDepthMax)-th end)
//	ctrl(i)  = controller.submit(issue(i))
//	ready(i) = readPages(its pages, from ctrl(i)) + ReadOverhead
//
// The card-to-host link carries them in order of ready time (ties in
// command order, the order their data-ready events were scheduled in), so
// a read that joins with an earlier ready time goes before commands
// already placed and moves their ends later: the link is worked out again
// from there. Each read costs one event at its end (moved later if its
// end moved); when the last ends, the run's totals and link traffic are
// written out. A write that arrives splits the run: the reads whose
// controller time has not come give their pages back (the NAND goes back
// to a checkpoint taken before the read that holds the first of them and
// senses again those of its commands before now) and every command goes
// on event by event in the stage it has reached (controller, data-ready,
// link) or back in the queue; the controller likewise gives back the
// commands not yet issued. A command's place on the link cannot move an
// end before its own ready time, so the ends that free the slots of
// earlier commands are settled when those are issued.
// TestSSDFastPathMatchesEventByEvent checks both paths give the same
// completions and totals.
type readRun struct {
	active bool
	nextID int64 // numbers the run's reads across runs; end events carry it
	reqs   []runRead
	cmds   []readCmd
	order  []int32 // the commands in link order: by ready time, then index
	open   int     // reads not yet raised
	// compactAt is the number of reads at which the run next drops the
	// ones it has raised (compactReads)
	compactAt int
	link0     sim.Time
	checks    []readCheck // the drive before each read whose controller time may be to come
	slots     []int       // scratch: the slots of the commands handed over
}

// readCheck is the NAND and the controller as they were before read req's
// commands were issued: of the planes, only those the read's pages lie
// on, from stripe position first on (savePlanes); going back to it puts
// back those of every later read first (restoreReads).
type readCheck struct {
	req   int
	first int
	nand  nandSnapshot
	ctrl  ctrlSnapshot
}

// runRead is a read of the run.
type runRead struct {
	req          Request
	id           int64
	arrival, end sim.Time
	first, n     int
	raised       bool
}

// readCmd is a command of a read run.
type readCmd struct {
	req                      int32 // its read in reqs
	bytes                    int64
	issue, ctrl, ready, done sim.Time
}

// fastRead takes read r into the closed-form path, starting a run if the
// drive is idle, and reports whether it did.
func (s *pageDrive) fastRead(r Request) bool {
	w := &s.readRun
	if r.Write || s.cfg.EventByEvent || s.cfg.SmallIOLatency > 0 || s.eng.Trace().AllSpans() {
		return false
	}
	if !w.active {
		if s.inFlight > 0 || s.waiting.Len() > 0 || s.bufferWait.Len() > 0 || s.run.active {
			return false
		}
		w.active, w.reqs, w.cmds, w.order, w.open, w.checks = true, w.reqs[:0], w.cmds[:0], w.order[:0], 0, w.checks[:0]
		w.compactAt = minCompact
		w.link0 = s.host.CardToHost.FreeAt()
	}
	now := s.eng.Now()
	if len(w.reqs) >= w.compactAt {
		s.compactReads()
	}
	k := len(w.reqs)
	c := w.checkpoint(k, now)
	page, planes := s.cfg.PageBytes, int64(len(s.planes.base))
	c.first = int(r.Addr / page % planes)
	s.savePlanes(&c.nand, c.first, int(min(planes, (r.Addr+r.Bytes-1)/page-r.Addr/page+1)))
	s.ctrl.save(&c.ctrl)
	n := int((r.Bytes + s.cfg.MaxIOBytes - 1) / s.cfg.MaxIOBytes)
	w.reqs = append(w.reqs, runRead{req: r, id: w.nextID, arrival: now, first: len(w.cmds), n: n})
	w.nextID++
	w.open++
	issue := now
	if len(w.cmds) > 0 {
		issue = max(issue, w.cmds[len(w.cmds)-1].issue)
	}
	for i := range n {
		if j := len(w.cmds) + 1 - s.cfg.QueueDepthMax; j >= 1 {
			issue = max(issue, w.cmds[w.order[j-1]].done)
		}
		part := min(s.cfg.MaxIOBytes, r.Bytes-int64(i)*s.cfg.MaxIOBytes)
		ctrl := s.ctrl.submit(issue)
		ready := s.readPages(r.Addr+int64(i)*s.cfg.MaxIOBytes, part, ctrl) + s.cfg.ReadOverhead
		w.cmds = append(w.cmds, readCmd{req: int32(k), bytes: part, issue: issue, ctrl: ctrl, ready: ready})
		s.placeOnLink(len(w.cmds) - 1)
	}
	x := &w.reqs[k]
	s.eng.Schedule(x.end, sim.Event{Handler: s, Op: opSSDReadEnd, Arg: x.id})
	return true
}

// placeOnLink puts command i in link order and works the link out again
// from there, moving later commands' ends.
func (s *pageDrive) placeOnLink(i int) {
	w := &s.readRun
	w.order = append(w.order, int32(i))
	first := s.linkPlace(len(w.order) - 1)
	link := s.host.CardToHost
	latency := link.Config().Latency
	free := w.link0
	if first > 0 {
		free = w.cmds[w.order[first-1]].done - latency
	}
	for _, i := range w.order[first:] {
		c := &w.cmds[i]
		free = max(c.ready, free) + link.WireTime(c.bytes)
		c.done = free + latency
		r := &w.reqs[c.req]
		r.end = max(r.end, c.done)
	}
}

// linkPlace moves the command at the end of the link order back to its
// place (by ready time, then index) and returns that place.
func (s *pageDrive) linkPlace(j int) int {
	w := &s.readRun
	c := w.order[j]
	for ; j > 0 && w.cmds[w.order[j-1]].ready > w.cmds[c].ready; j-- {
		w.order[j] = w.order[j-1]
	}
	w.order[j] = c
	return j
}

// readEnd is the end of the run's read id, or an earlier time it was
// expected to end at: it is raised at its end, and with the last the run
// is written out.
func (s *pageDrive) readEnd(id int64) {
	w := &s.readRun
	if !w.active || id < w.reqs[0].id || id > w.reqs[len(w.reqs)-1].id {
		return
	}
	x := &w.reqs[id-w.reqs[0].id]
	if x.end > s.eng.Now() {
		s.eng.Schedule(x.end, sim.Event{Handler: s, Op: opSSDReadEnd, Arg: id})
		return
	}
	x.raised = true
	s.finish(x.req, x.arrival, false)
	if w.open--; w.open == 0 {
		s.settleReads(s.eng.Now())
	}
}

// minCompact is the fewest reads a run holds before it drops those it has
// raised.
const minCompact = 64

// compactReads drops from the front of the run the reads it has raised
// whose commands are the first on the link (so that what stays is worked
// out as before), writing out their totals and link traffic: a run that
// never ends, because reads keep the drive busy, holds only what is under
// way. It next tries when the run has twice as many reads as it kept.
func (s *pageDrive) compactReads() {
	w := &s.readRun
	cut, seen := 0, int32(-1) // reads to drop; the largest command index on the link so far
	for q, pos := 0, 0; q < len(w.reqs) && w.reqs[q].raised; q++ {
		end := w.reqs[q].first + w.reqs[q].n
		for ; pos < end; pos++ {
			seen = max(seen, w.order[pos])
		}
		if int(seen) == end-1 {
			cut = q + 1
		}
	}
	defer func() { w.compactAt = max(minCompact, 2*len(w.reqs)) }()
	if cut == 0 {
		return
	}
	f := w.reqs[cut].first
	arrived := linkTally{link: s.host.CardToHost}
	for _, i := range w.order[:f] {
		c := w.cmds[i]
		s.reads.Add(1)
		s.bytesRead.Add(c.bytes)
		arrived.add(c.bytes, c.done)
	}
	arrived.flush()
	w.link0 = s.host.CardToHost.FreeAt()
	w.cmds = w.cmds[:copy(w.cmds, w.cmds[f:])]
	for i := range w.cmds {
		w.cmds[i].req -= int32(cut)
	}
	w.reqs = w.reqs[:copy(w.reqs, w.reqs[cut:])]
	for i := range w.reqs {
		w.reqs[i].first -= f
	}
	w.order = w.order[:copy(w.order, w.order[f:])]
	for i := range w.order {
		w.order[i] -= int32(f)
	}
	w.checks = slices.DeleteFunc(w.checks, func(c readCheck) bool { return c.req < cut })
	for i := range w.checks {
		w.checks[i].req -= cut
	}
}

// checkpoint returns the place for read k's checkpoint, first dropping
// those of reads whose every command has reached the controller's end by
// now (a write arriving later cannot reach back to them); their snapshots'
// buffers are reused.
func (w *readRun) checkpoint(k int, now sim.Time) *readCheck {
	live := 0
	for ; live < len(w.checks); live++ {
		x := w.reqs[w.checks[live].req]
		if w.cmds[x.first+x.n-1].ctrl > now {
			break
		}
	}
	if live == len(w.checks) {
		w.checks = w.checks[:0]
	} else if live > 0 {
		n := copy(w.checks, w.checks[live:])
		clear(w.checks[n:]) // their buffers are the ones moved forward
		w.checks = w.checks[:n]
	}
	if len(w.checks) < cap(w.checks) {
		w.checks = w.checks[:len(w.checks)+1]
	} else {
		w.checks = append(w.checks, readCheck{})
	}
	c := &w.checks[len(w.checks)-1]
	c.req = k
	return c
}

// handOverReads splits the run at now, when a write arrives: the commands
// whose controller time is still to come give their pages back, those not
// yet issued their place in the controller, and every command goes on
// event by event. The NAND and the controller may go back to different
// reads' checkpoints: a command issued by now may still be in the
// controller.
func (s *pageDrive) handOverReads() {
	now := s.eng.Now()
	w := &s.readRun
	if k := slices.IndexFunc(w.cmds, func(c readCmd) bool { return c.ctrl > now }); k >= 0 {
		x := w.reqs[w.cmds[k].req]
		s.restoreReads(int(w.cmds[k].req))
		for i := x.first; i < k; i++ {
			c := w.cmds[i]
			s.readPages(x.req.Addr+int64(i-x.first)*s.cfg.MaxIOBytes, c.bytes, c.ctrl)
		}
	}
	if k := slices.IndexFunc(w.cmds, func(c readCmd) bool { return c.issue > now }); k >= 0 {
		x := w.reqs[w.cmds[k].req]
		s.ctrl.restore(&w.check(int(w.cmds[k].req)).ctrl)
		for i := x.first; i < k; i++ {
			s.ctrl.submit(w.cmds[i].issue)
		}
	}
	s.settleReads(now)
}

// restoreReads puts the NAND back as it was before read r: the planes of
// each read after it back in turn, from the last, then read r's
// checkpoint. Each read has a checkpoint from r's on (checkpoint drops
// only the earliest).
func (s *pageDrive) restoreReads(r int) {
	w := &s.readRun
	i := len(w.checks) - 1
	for ; w.checks[i].req != r; i-- {
		s.restorePlaneTimes(&w.checks[i].nand, w.checks[i].first)
	}
	s.restorePlanes(&w.checks[i].nand, w.checks[i].first)
}

// check returns read r's checkpoint.
func (w *readRun) check(r int) *readCheck {
	return &w.checks[slices.IndexFunc(w.checks, func(c readCheck) bool { return c.req == r })]
}

// settleReads writes out the run as of now: the link traffic in link
// order, the totals of the commands that have ended, and every command
// still under way at the stage it has reached.
func (s *pageDrive) settleReads(now sim.Time) {
	w := &s.readRun
	w.active = false
	w.slots = slices.Grow(w.slots[:0], len(w.cmds))[:len(w.cmds)]
	slots := w.slots
	for k := range w.reqs {
		x := &w.reqs[k]
		ended, made := 0, 0
		for _, c := range w.cmds[x.first : x.first+x.n] {
			if c.done <= now {
				ended++
			}
			if c.issue <= now {
				made++
			}
		}
		parent := s.requeue(x.req, x.arrival, x.n, made, ended)
		for i := x.first; i < x.first+made; i++ {
			c := w.cmds[i]
			if c.done <= now {
				s.reads.Add(1)
				s.bytesRead.Add(c.bytes)
				continue
			}
			part := x.req
			part.Addr, part.Bytes = x.req.Addr+int64(i-x.first)*s.cfg.MaxIOBytes, c.bytes
			slots[i] = s.cmds.Put(ssdCmd{req: part, start: x.arrival, parent: parent})
			s.inFlight++
			switch {
			case c.ready <= now: // on the link: below, in link order
			case c.ctrl <= now:
				s.eng.Schedule(c.ready, sim.Event{Handler: s, Op: opSSDDataReady, Arg: int64(slots[i])})
			default:
				s.ctrlDone.Schedule(c.ctrl, sim.Event{Handler: s, Op: opSSDControllerDone, Arg: int64(slots[i])})
			}
		}
		if ended == x.n && !x.raised {
			x.raised = true
			s.finish(x.req, x.arrival, false)
		}
	}
	arrived := linkTally{link: s.host.CardToHost}
	for _, i := range w.order {
		c := w.cmds[i]
		if c.ready > now {
			break
		}
		if c.done <= now {
			arrived.add(c.bytes, c.done)
			continue
		}
		arrived.flush()
		if at := s.host.CardToHost.TransferFrom(c.ready, c.bytes, sim.Event{Handler: s, Op: opSSDComplete, Arg: int64(slots[i])}); at != c.done {
			panic(fmt.Sprintf("memory: %s at %v: a read run's command arrives at %v, the link says %v", s.cfg.Name, now, c.done, at))
		}
	}
	arrived.flush()
}
