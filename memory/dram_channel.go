package memory

import (
	"fmt"

	"github.com/kvcosim/kvcosim/sim"
)

// cmdKind is a DRAM command.
type cmdKind uint8

const (
	cmdACT cmdKind = iota
	cmdPRE
	cmdRD
	cmdWR
	numCmds
	// cmdREF marks an all-bank refresh in command logs; it has no timing
	// state of its own.
	cmdREF = numCmds
)

func (c cmdKind) isColumn() bool { return c == cmdRD || c == cmdWR }

// never is an "earliest cycle" that constrains nothing.
const never = sim.Cycles(-1 << 40)

// node holds, for one level of the hierarchy (channel, rank, bank group,
// bank), the earliest cycle at which each command may issue there.
type node struct {
	earliest [numCmds]sim.Cycles
}

func (n *node) atLeast(c cmdKind, t sim.Cycles) { n.earliest[c] = max(n.earliest[c], t) }

type bankState struct {
	node
	openRow int // -1 when precharged
}

type rankState struct {
	node
	groups      []node
	banks       []bankState // index bankGroup*banksPerGroup + bank
	actHistory  [4]sim.Cycles
	actNext     int // oldest entry of actHistory
	nextRefresh sim.Cycles
	refreshes   int64
}

// decision is the command FR-FCFS chose: for queue entry idx, at cycle at.
type decision struct {
	idx int
	cmd cmdKind
	at  sim.Cycles
}

// burst is one queued access of one burst.
type burst struct {
	loc     location
	write   bool
	req     int        // request slot in the device
	arrival sim.Cycles // first cycle it may be scheduled
}

// channel is one channel's controller: JEDEC timing state per level, an
// FR-FCFS queue of bursts and a FIFO of jobs that feed it.
type channel struct {
	dev    *DRAM
	index  int
	t      DRAMTiming
	cmdBus sim.Cycles // next free command slot
	ranks  []rankState

	dataFree      sim.Cycles
	lastDataRank  int
	lastDataWrite bool

	queue      []burst
	hitMarks   []bool // per bank: a queued burst hits its open row
	jobs       sim.FIFO[*job]
	generation int64 // bumped to invalidate a pending decision
	// pending is the decision a scheduled event will carry out: nothing
	// changes the timing state between the decision and its cycle unless a
	// new burst arrives, which bumps generation.
	pending decision

	bursts, activates int64
	// log, when set (in tests), receives every command with its cycle.
	log func(cmd cmdKind, l location, at sim.Cycles)
}

func newChannel(dev *DRAM, index int) *channel {
	c := dev.cfg
	ch := &channel{dev: dev, index: index, t: c.Timing, dataFree: never, lastDataRank: -1}
	ch.ranks = make([]rankState, c.Ranks)
	ch.hitMarks = make([]bool, c.Ranks*c.BankGroups*c.BanksPerGroup)
	for r := range ch.ranks {
		rk := &ch.ranks[r]
		rk.groups = make([]node, c.BankGroups)
		rk.banks = make([]bankState, c.BankGroups*c.BanksPerGroup)
		for b := range rk.banks {
			rk.banks[b].openRow = -1
		}
		for i := range rk.actHistory {
			rk.actHistory[i] = never
		}
		rk.nextRefresh = c.Timing.NREFI
	}
	return ch
}

func (ch *channel) bank(l location) *bankState {
	return &ch.ranks[l.rank].banks[l.bankGroup*ch.dev.cfg.BanksPerGroup+l.bank]
}

// next returns the command a burst needs now under the open-page policy.
func (ch *channel) next(b *burst) cmdKind {
	switch open := ch.bank(b.loc).openRow; {
	case open == b.loc.row && b.write:
		return cmdWR
	case open == b.loc.row:
		return cmdRD
	case open >= 0:
		return cmdPRE
	default:
		return cmdACT
	}
}

// ready returns the earliest cycle at which cmd may issue to l.
func (ch *channel) ready(cmd cmdKind, l location) sim.Cycles {
	rk := &ch.ranks[l.rank]
	t := max(ch.cmdBus, rk.earliest[cmd], rk.groups[l.bankGroup].earliest[cmd], ch.bank(l).earliest[cmd])
	switch cmd {
	case cmdACT:
		t = max(t, rk.actHistory[rk.actNext]+ch.t.NFAW)
	case cmdRD, cmdWR:
		write := cmd == cmdWR
		lat := ch.t.NCL
		if write {
			lat = ch.t.NCWL
		}
		free := ch.dataFree
		if l.rank != ch.lastDataRank || write != ch.lastDataWrite {
			free += ch.t.NRTRS
		}
		t = max(t, free-lat)
	}
	return t
}

// issue applies cmd at cycle c to l: it updates every constraint that the
// command places on later ones. It returns the cycle at which a column
// command's data has left the bus.
func (ch *channel) issue(cmd cmdKind, l location, c sim.Cycles) sim.Cycles {
	t := ch.t
	rk := &ch.ranks[l.rank]
	grp := &rk.groups[l.bankGroup]
	bk := ch.bank(l)
	ch.cmdBus = c + 1
	bl := t.burstCycles()
	if ch.log != nil {
		ch.log(cmd, l, c)
	}
	switch cmd {
	case cmdACT:
		bk.openRow = l.row
		bk.atLeast(cmdACT, c+t.NRC)
		bk.atLeast(cmdRD, c+t.NRCD)
		bk.atLeast(cmdWR, c+t.NRCD)
		bk.atLeast(cmdPRE, c+t.NRAS)
		grp.atLeast(cmdACT, c+t.NRRDL)
		rk.atLeast(cmdACT, c+t.NRRDS)
		rk.actHistory[rk.actNext] = c
		rk.actNext = (rk.actNext + 1) % len(rk.actHistory)
		ch.activates++
	case cmdPRE:
		bk.openRow = -1
		bk.atLeast(cmdACT, c+t.NRP)
	case cmdRD:
		bk.atLeast(cmdPRE, c+t.NRTP)
		grp.atLeast(cmdRD, c+t.NCCDL)
		rk.atLeast(cmdRD, c+t.NCCDS)
		return ch.occupyBus(l.rank, false, c+t.NCL+bl)
	case cmdWR:
		end := c + t.NCWL + bl
		bk.atLeast(cmdPRE, end+t.NWR)
		grp.atLeast(cmdWR, c+t.NCCDL)
		rk.atLeast(cmdWR, c+t.NCCDS)
		grp.atLeast(cmdRD, end+t.NWTRL)
		rk.atLeast(cmdRD, end+t.NWTRS)
		return ch.occupyBus(l.rank, true, end)
	}
	return 0
}

func (ch *channel) occupyBus(rank int, write bool, end sim.Cycles) sim.Cycles {
	ch.dataFree, ch.lastDataRank, ch.lastDataWrite = end, rank, write
	ch.bursts++
	return end
}

// refreshDue performs the all-bank refresh of rank r if a command at cycle
// at would come at or after its due time. The refresh starts when it is
// due and every open bank may be precharged; no bank of the rank may be
// activated until nRP + nRFC later. Refreshes missed while the rank was
// idle collapse into the last one.
func (ch *channel) refreshDue(r int, at sim.Cycles) bool {
	rk := &ch.ranks[r]
	if at < rk.nextRefresh {
		return false
	}
	due := rk.nextRefresh + (at-rk.nextRefresh)/ch.t.NREFI*ch.t.NREFI
	start := due
	for i := range rk.banks {
		if rk.banks[i].openRow >= 0 {
			start = max(start, rk.banks[i].earliest[cmdPRE])
		}
	}
	for i := range rk.banks {
		rk.banks[i].openRow = -1
		rk.banks[i].atLeast(cmdACT, start+ch.t.NRP+ch.t.NRFC)
	}
	rk.nextRefresh = due + ch.t.NREFI
	rk.refreshes++
	if ch.log != nil {
		ch.log(cmdREF, location{channel: ch.index, rank: r}, start)
	}
	return true
}

// decide picks the next command by FR-FCFS: the earliest cycle at which any
// queued burst's next command can issue (never before now); among those
// ready then, row hits (column commands) before others, then the oldest.
// A row is not closed while a queued burst still hits it.
func (ch *channel) decide(now sim.Cycles) decision {
	for {
		ch.markPendingHits()
		best := decision{idx: -1}
		for i := range ch.queue {
			b := &ch.queue[i]
			c := ch.next(b)
			if c == cmdPRE && ch.hitMarks[ch.bankIndex(b.loc)] {
				continue
			}
			t := max(ch.ready(c, b.loc), now, b.arrival)
			if best.idx < 0 || t < best.at || (t == best.at && c.isColumn() && !best.cmd.isColumn()) {
				best = decision{idx: i, cmd: c, at: t}
			}
		}
		if best.idx < 0 || !ch.refreshDue(ch.queue[best.idx].loc.rank, best.at) {
			return best
		}
	}
}

// markPendingHits flags every bank whose open row a queued burst hits.
func (ch *channel) markPendingHits() {
	clear(ch.hitMarks)
	for i := range ch.queue {
		l := ch.queue[i].loc
		if ch.bank(l).openRow == l.row {
			ch.hitMarks[ch.bankIndex(l)] = true
		}
	}
}

func (ch *channel) bankIndex(l location) int {
	c := ch.dev.cfg
	return (l.rank*c.BankGroups+l.bankGroup)*c.BanksPerGroup + l.bank
}

// Handle carries out a scheduled decision unless a later arrival superseded
// it.
func (ch *channel) Handle(ev sim.Event) {
	if ev.Arg != ch.generation {
		return
	}
	if ev.Op == opDecision {
		ch.carryOut(ch.pending)
	}
	ch.step()
}

// The channel's events: a scheduled decision, or new work to look at.
const (
	opDecision = iota
	opKick
)

// step issues every command due now, then schedules the next decision.
func (ch *channel) step() {
	clk := ch.dev.clock
	now := clk.FirstEdgeAtOrAfter(ch.dev.eng.Now())
	for {
		ch.fill()
		if len(ch.queue) == 0 {
			if ch.jobs.Len() == 0 {
				return
			}
			ch.runBulk(ch.jobs.Pop(), now)
			continue
		}
		d := ch.decide(now)
		if d.idx < 0 {
			panic(fmt.Sprintf("memory: %s channel %d at %v: queue of %d bursts with no issuable command",
				ch.dev.cfg.Name, ch.index, ch.dev.eng.Now(), len(ch.queue)))
		}
		if d.at > now {
			ch.generation++
			ch.pending = d
			ch.dev.eng.Schedule(clk.Edge(d.at), sim.Event{Handler: ch, Op: opDecision, Arg: ch.generation})
			return
		}
		ch.carryOut(d)
	}
}

// carryOut issues a decided command; a column command retires its burst.
func (ch *channel) carryOut(d decision) {
	b := ch.queue[d.idx]
	end := ch.issue(d.cmd, b.loc, d.at)
	if d.cmd.isColumn() {
		ch.queue = append(ch.queue[:d.idx], ch.queue[d.idx+1:]...)
		ch.dev.partsDone(b.req, 1, end)
	}
}

// kick reacts to new work: it replaces any pending decision with one now.
func (ch *channel) kick() {
	ch.generation++
	ch.dev.eng.Schedule(ch.dev.eng.Now(), sim.Event{Handler: ch, Op: opKick, Arg: ch.generation})
}

// fill moves bursts from the head burst-path job into the queue while it
// has room. A bulk job at the head waits until the queue has drained.
func (ch *channel) fill() {
	size := ch.dev.cfg.BurstBytes()
	for len(ch.queue) < ch.dev.cfg.QueueDepth && ch.jobs.Len() > 0 {
		j := ch.jobs.Peek()
		if j.bulk {
			return
		}
		for j.addr < j.end {
			loc := ch.dev.mapping.decode(j.addr)
			j.addr += size
			if loc.channel == ch.index {
				ch.queue = append(ch.queue, burst{loc: loc, write: j.write, req: j.req, arrival: j.arrival})
				j.left--
				break
			}
		}
		if j.left == 0 {
			ch.jobs.Pop()
		}
	}
}
