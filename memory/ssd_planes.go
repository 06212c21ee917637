package memory

import "github.com/kvcosim/kvcosim/sim"

// nandPlanes keeps when each NAND plane is next free, indexed by stripe
// position, and the striped write pointer. A long export keeps every plane
// busy: each page it writes finds its plane still programming the page
// written one stripe earlier, so the plane's free time just grows by a
// page's program time. That common case costs nothing per page: plane q is
// free at
//
//	base[q] + prog x (the writes to q so far) = base[q] + prog x (lap + [q < pos])
//
// so moving the pointer over a stripe position adds a program time to the
// position's free time without touching it, and only writes that find some
// plane free, and reads, store free times (as base = free - prog x writes).
//
// desc has bit q set when plane q is free later than plane q+1 (mod the
// planes): a run of positions with no bit set is in order of free time, so
// its earliest and latest are its first and last.
//
// chain[q] is when plane q's queued programs begin: from then to its free
// time it programs back to back (a whole number of program times), and
// before then it is busy with what a read cannot pass (a program in
// progress, an earlier read) or waits for the chain's first page. A read
// goes before the queued programs (read priority, see sense), so it needs
// to know where they begin; a write that finds every plane busy extends
// every chain without touching it.
type nandPlanes struct {
	base  []sim.Time
	desc  []uint64
	chain []sim.Time
	prog  sim.Time // a page's program time, write amplification included
	lap   int64    // the pointer's full turns
	pos   int      // the write pointer
}

func newNANDPlanes(c SSDConfig) nandPlanes {
	n := c.Planes()
	return nandPlanes{base: make([]sim.Time, n), desc: make([]uint64, (n+63)/64), chain: make([]sim.Time, n),
		prog: sim.TimeOf(float64(c.ProgramTime) * c.WriteAmplification)}
}

// at returns when plane q is free.
func (p *nandPlanes) at(q int) sim.Time {
	w := p.lap
	if q < p.pos {
		w++
	}
	return p.base[q] + p.prog*sim.Time(w)
}

// sense senses a page, for a read at now, on a plane whose free time is
// free and whose queued programs begin at *chain, and returns when the
// sensing ends and the plane's new free time; the programs queued after
// the read begin when it ends. Reads go before queued programs (read
// priority, as flash controllers schedule: docs/memory.md): an idle plane
// senses at once; a busy one after the program in progress (the chain's
// programs are back to back from *chain, prog each, so it ends on the
// first program boundary at or after now) or, before the chain, when the
// chain begins; the programs queued after the read move a tR later.
func sense(chain *sim.Time, free, now, tR, prog sim.Time) (sensed, newFree sim.Time) {
	start := *chain
	switch {
	case now >= free:
		*chain = now + tR
		return now + tR, now + tR
	case now > start && prog > 0:
		start += (now - start + prog - 1) / prog * prog
	}
	*chain = start + tR
	return start + tR, free + tR
}

// order recomputes the order bits of the n pairs from position q on
// (q, q+1), (q+1, q+2), ..., mod the planes; q is at least -1.
func (p *nandPlanes) order(q, n int) {
	planes := len(p.base)
	n = min(n, planes)
	if q < 0 {
		q += planes
	}
	next := p.at(q)
	for range n {
		cur := next
		r := q + 1
		if r == planes {
			r = 0
		}
		next = p.at(r)
		p.mark(q, cur > next)
		q = r
	}
}

// mark sets or clears the order bit of the pair (q, q+1).
func (p *nandPlanes) mark(q int, later bool) { mark(p.desc, q, later) }

// mark sets or clears the order bit of the pair (q, q+1) in desc.
func mark(desc []uint64, q int, later bool) {
	var bit uint64
	if later {
		bit = 1
	}
	desc[q>>6] = desc[q>>6]&^(1<<(q&63)) | bit<<(q&63)
}

// sorted reports whether the n positions from q on (mod the planes) are
// in order of free time: no order bit is set on the n-1 pairs among them.
func (p *nandPlanes) sorted(q, n int) bool {
	for left := n - 1; left > 0; {
		word, bit := q>>6, q&63
		k := min(left, 64-bit, len(p.base)-q)
		mask := (uint64(1)<<k - 1) << bit
		if k == 64 {
			mask = ^uint64(0)
		}
		if p.desc[word]&mask != 0 {
			return false
		}
		left -= k
		if q += k; q == len(p.base) {
			q = 0
		}
	}
	return true
}

// busyWrite programs n pages (at most a stripe) from the pointer without
// touching a plane, when each of their planes is free no earlier than
// arrive, when the last of the pages arrives: each page is then programmed
// a program time after its plane's free time, which moving the pointer
// adds. Positions in order of free time need only their first checked and
// their last read; others are scanned (span). It returns when the last is
// programmed, and whether it could.
func (p *nandPlanes) busyWrite(n int, arrive sim.Time) (sim.Time, bool) {
	planes := len(p.base)
	if n > planes || p.at(p.pos) < arrive {
		return 0, false
	}
	lastPos := p.pos + n - 1
	if lastPos >= planes {
		lastPos -= planes
	}
	latest := p.at(lastPos)
	if !p.sorted(p.pos, n) {
		var earliest sim.Time
		if earliest, latest = p.span(n); earliest < arrive {
			return 0, false
		}
	}
	first := p.pos
	p.advance(n)
	p.order(first-1, 1)
	p.order(lastPos, 1)
	return latest + p.prog, true
}

// span returns the earliest and latest free time of the n positions from
// the pointer (n at most the planes): those at or past it have had lap
// writes, those it has wrapped to one more.
func (p *nandPlanes) span(n int) (earliest, latest sim.Time) {
	earliest, latest = sim.MaxTime, 0
	off := p.prog * sim.Time(p.lap)
	for q, left := p.pos, n; left > 0; q, off = 0, off+p.prog {
		for _, b := range p.base[q:min(len(p.base), q+left)] {
			earliest, latest = min(earliest, b+off), max(latest, b+off)
		}
		left -= len(p.base) - q
	}
	return earliest, latest
}

// advance moves the pointer n positions.
func (p *nandPlanes) advance(n int) {
	if p.pos += n; p.pos >= len(p.base) {
		p.lap += int64(p.pos / len(p.base))
		p.pos %= len(p.base)
	}
}
