package memory

import "github.com/kvcosim/kvcosim/sim"

// bulkStream issues one channel's share of a long sequential transfer in
// closed form: per unit (the bursts that share a rank, bank and row, over
// the bank groups a block rotates through) it opens the rows with the
// ordinary ACT/PRE timing, then places the unit's column commands at a
// fixed interval that satisfies nCCD_S, nCCD_L and the data bus, and
// applies the last command of each bank group to the timing state. A
// refresh that falls due splits the unit, as it would split a stream of
// individual commands.
type bulkStream struct {
	ch        *channel
	cmd       cmdKind
	notBefore sim.Cycles
	lastEnd   sim.Cycles
	issued    int64 // bursts issued so far
	// The previous unit, to bound when the next unit's bursts would enter
	// a queue of QueueDepth entries (and so when its rows may be opened).
	prevC0, prevInterval sim.Cycles
	prevStart, prevN     int64
}

// runBulk streams a bulk job's share on this channel.
func (ch *channel) runBulk(j *job, now sim.Cycles) {
	d := ch.dev
	s := bulkStream{ch: ch, cmd: cmdRD, notBefore: max(now, j.arrival)}
	if j.write {
		s.cmd = cmdWR
	}
	size := d.block.bytes
	for start := j.addr / size * size; start < j.end; start += size {
		if loc, n := ch.share(max(j.addr, start), min(j.end, start+size), start); n > 0 {
			s.unit(loc, n)
		}
	}
	d.partsDone(j.req, 1, s.lastEnd)
}

// share returns the first location and the number of this channel's bursts
// in [lo, hi) of the block at blockStart.
func (ch *channel) share(lo, hi, blockStart int64) (location, int64) {
	d := ch.dev
	burst := d.cfg.BurstBytes()
	if lo == blockStart && hi == blockStart+d.block.bytes {
		first := blockStart + int64(ch.index)*d.mapping.weight[fChannel]*burst
		return d.mapping.decode(first), d.block.bytes / burst / int64(d.cfg.Channels)
	}
	var first location
	n := int64(0)
	for a := lo; a < hi; a += burst {
		if loc := d.mapping.decode(a); loc.channel == ch.index {
			if n == 0 {
				first = loc
			}
			n++
		}
	}
	return first, n
}

// groupAt returns the location of the j-th burst of a unit that starts at
// loc and rotates over groups bank groups.
func groupAt(loc location, j int64, groups int64) location {
	loc.bankGroup = int((int64(loc.bankGroup) + j) % groups)
	return loc
}

func ceilDiv(a, b sim.Cycles) sim.Cycles { return (a + b - 1) / b }

// unit issues n bursts that start at loc.
func (s *bulkStream) unit(loc location, n int64) {
	ch, t := s.ch, s.ch.t
	groups := int64(ch.dev.block.rotateGroups)
	rk := &ch.ranks[loc.rank]
	for n > 0 {
		nb := s.notBefore
		if k := s.issued - int64(ch.dev.cfg.QueueDepth); s.prevN > 0 && k >= s.prevStart {
			nb = max(nb, s.prevC0+sim.Cycles(k-s.prevStart)*s.prevInterval)
		}
		g := min(groups, n)
		for !s.allOpen(loc, g, groups) { // a refresh while opening one closes the others
			for j := range g {
				s.open(groupAt(loc, j, groups), nb)
			}
		}
		interval := max(t.NCCDS, t.burstCycles(), ceilDiv(t.NCCDL, sim.Cycles(g)))
		c0 := nb
		for j := range g {
			c0 = max(c0, ch.ready(s.cmd, groupAt(loc, j, groups))-sim.Cycles(j)*interval)
		}
		k := n
		if c0+sim.Cycles(n-1)*interval >= rk.nextRefresh {
			k = max(0, int64(ceilDiv(rk.nextRefresh-c0, interval)))
		}
		if k > 0 {
			if ch.log != nil { // the commands whose effect the last ones subsume
				for j := range max(0, k-g) {
					ch.log(s.cmd, groupAt(loc, j, groups), c0+sim.Cycles(j)*interval)
				}
			}
			for j := max(0, k-g); j < k; j++ {
				s.lastEnd = max(s.lastEnd, ch.issue(s.cmd, groupAt(loc, j, groups), c0+sim.Cycles(j)*interval))
			}
			ch.bursts += k - min(k, g) // issue counted the ones it applied
			s.prevC0, s.prevInterval, s.prevStart, s.prevN = c0, interval, s.issued, k
			s.issued += k
		}
		if k == n {
			return
		}
		ch.refreshDue(loc.rank, rk.nextRefresh)
		loc = groupAt(loc, k, groups)
		n -= k
	}
}

// open precharges and activates until l's row is open, never before nb.
func (s *bulkStream) open(l location, nb sim.Cycles) {
	ch := s.ch
	for ch.bank(l).openRow != l.row {
		cmd := cmdACT
		if ch.bank(l).openRow >= 0 {
			cmd = cmdPRE
		}
		at := max(ch.ready(cmd, l), nb)
		if !ch.refreshDue(l.rank, at) {
			ch.issue(cmd, l, at)
		}
	}
}

// allOpen reports whether the rows of the first g bank groups of a unit
// are all open.
func (s *bulkStream) allOpen(loc location, g, groups int64) bool {
	for j := range g {
		l := groupAt(loc, j, groups)
		if s.ch.bank(l).openRow != l.row {
			return false
		}
	}
	return true
}
