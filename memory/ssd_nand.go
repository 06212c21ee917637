package memory

import (
	"slices"

	"github.com/kvcosim/kvcosim/sim"
)

// readPages reads bytes from addr no earlier than now and returns when
// the last of its pages has crossed its channel: each page is sensed on its
// plane before the programs queued there (nandPlanes.sense), then its piece
// crosses the page's channel (carry: in the channel's idle time before its
// last transfer, or after it). Consecutive pages stripe over channels, then
// dies, then planes, so page p is on stripe position
// p mod Planes and channel position mod Channels: the loop walks both.
func (s *pageDrive) readPages(addr, bytes int64, now sim.Time) sim.Time {
	p, c := &s.planes, &s.channels
	c.settle()
	page, tR, prog := s.cfg.PageBytes, s.cfg.ReadTime, p.prog
	first, last := addr/page, (addr+bytes-1)/page
	full := s.cfg.ChannelBandwidth.TransferTime(page)
	base, chain, desc, chans, pos := p.base, p.chain, p.desc, c.ch, p.pos // the loop's state in locals
	q0 := int(first % int64(len(base)))
	q, ch := q0, q0%len(chans)
	off := prog * sim.Time(p.lap) // a plane at or past the pointer
	if q < pos {
		off += prog
	}
	// the order bits of the pairs the read changes, as it goes, when it
	// touches each plane once and not the one before its first
	inline := last-first+1 < int64(len(base))
	prevQ := q0 - 1
	if prevQ < 0 {
		prevQ += len(base)
	}
	prev := p.at(prevQ)
	ready := now
	for pg := first; pg <= last; pg++ {
		d := full
		if pg == first || pg == last {
			d = s.cfg.ChannelBandwidth.TransferTime(min(addr+bytes, (pg+1)*page) - max(addr, pg*page))
		}
		sensed, free := sense(&chain[q], base[q]+off, now, tR, prog)
		base[q] = free - off
		if inline {
			mark(desc, prevQ, prev > free)
			prev, prevQ = free, q
		}
		ready = max(ready, chans[ch].carry(sensed, d))
		if q++; q == len(base) {
			q, off = 0, off+prog
		}
		if q == pos {
			off -= prog
		}
		if ch++; ch == len(chans) {
			ch = 0
		}
	}
	c.idleAt = max(c.idleAt, ready) // every page ends after now
	if !inline {
		p.order(q0-1, int(last-first)+2)
	} else {
		p.mark(prevQ, prev > p.at(q))
	}
	return ready
}

// stripePages programs n pages from the write pointer, from now, and returns when
// the last is done: page by page, a channel carries each page in turn
// (free = max(now, free) + xfer) and its plane programs it after it
// arrives (free = max(arrival, free) + prog). Every page of a trace's KV
// export passes here, so the recurrence is unrolled: page i of the call is
// the (i/Channels+1)-th the call puts on its channel, so it arrives that
// many page times after the channel's start, and only the planes carry
// state from page to page. A write whose planes are all still busy when
// its last page arrives (at the latest a round of page times per page a
// channel carries after the latest channel's start) touches no plane
// (busyWrite): on idle channels, and on channels a read keeps busy.
func (s *pageDrive) stripePages(now sim.Time, n int64) sim.Time {
	first := s.planes.pos
	rounds := (n + int64(len(s.channels.ch)) - 1) / int64(len(s.channels.ch))
	var last sim.Time
	if now >= s.channels.idleAt {
		var ok bool
		if last, ok = s.planes.busyWrite(int(n), now+sim.Time(rounds)*s.channels.xfer); !ok {
			last = s.programPages(int(n), now, s.channels.zero)
		}
		s.channels.owe(now, first, int(n))
	} else {
		start := s.channels.starts(now, first, int(n))
		var ok bool
		if last, ok = s.planes.busyWrite(int(n), slices.Max(start)+sim.Time(rounds)*s.channels.xfer); !ok {
			last = s.programPages(int(n), 0, start)
		}
		s.channels.spread(start, first, int(n))
	}
	return last
}

// programPages runs the plane recurrence for n pages from the write
// pointer, page i arriving (i/Channels+1) page times after base +
// start[i mod Channels], and moves the pointer. It goes a round of
// channels at a time. A plane at or past the pointer has had lap writes,
// one behind it lap+1 (nandPlanes), so the loop keeps the turn's offset.
// It sets the order bit of each pair of pages it writes one after the
// other as it goes: the last write of a position comes after the last
// write of the one before it, but for the pairs at the two ends, which
// are set from the planes once the pointer has moved.
func (s *pageDrive) programPages(n int, base sim.Time, start []sim.Time) sim.Time {
	p := &s.planes
	planes, prog, xfer := p.base, p.prog, s.channels.xfer
	var last, prevDone sim.Time
	first, pos, arrive := p.pos, p.pos, base+xfer
	prevPos := -1
	off := prog * sim.Time(p.lap)
	for left := n; left > 0; left -= len(start) {
		for _, st := range start[:min(left, len(start))] {
			free := planes[pos] + off
			if st+arrive > free {
				free, p.chain[pos] = st+arrive, st+arrive // the plane idles until the page arrives
			}
			done := free + prog
			planes[pos] = done - off - prog
			last = max(last, done)
			if prevPos >= 0 {
				p.mark(prevPos, prevDone > done)
			}
			prevPos, prevDone = pos, done
			if pos++; pos == len(planes) {
				pos, off = 0, off+prog
			}
		}
		arrive += xfer
	}
	p.advance(n)
	p.order(first-1, 1)
	p.order(prevPos, 1)
	return last
}

// nandChannels keeps when each NAND channel is next free. A write that
// finds every channel idle starts each at once, so what it leaves behind
// is a formula of (start, first channel, pages): it is kept owed as that
// formula and written out only when single channels are needed (a read, or
// a write that finds some channel busy), which in a long export is rare.
type nandChannels struct {
	ch     []nandChannel
	start  []sim.Time // scratch for starts
	zero   []sim.Time // all zeros: every channel starts at the base
	idleAt sim.Time   // every channel is free from here on
	xfer   sim.Time   // a page's transfer, write amplification included
	owed   owedWrite
}

// nandChannel is one channel: when it is next free, and an idle stretch
// before its last transfer, from gapFrom to gapTo, which later transfers
// may use (carry, starts). Its times lie together, as readPages reads and
// writes them page by page.
type nandChannel struct {
	free, gapFrom, gapTo sim.Time
}

// owedWrite is a write that started every channel it used at time at.
type owedWrite struct {
	at           sim.Time
	first, pages int // pages 0: nothing owed
}

func newNANDChannels(c SSDConfig) nandChannels {
	n := c.Channels
	return nandChannels{ch: make([]nandChannel, n), start: make([]sim.Time, n), zero: make([]sim.Time, n),
		xfer: sim.TimeOf(float64(c.ChannelBandwidth.TransferTime(c.PageBytes)) * c.WriteAmplification)}
}

// carry puts a read's transfer of d on the channel (settled) no earlier
// than t and returns when it ends: in the channel's gap if it fits there (what is
// left of the gap is the part after it), else after the channel's last
// transfer, leaving the idle time before it as the channel's gap. A read
// that waits for its plane books its channel ahead, so the gap lets the
// reads behind it use the channel meanwhile (backfill). It leaves idleAt
// to its caller, readPages, which moves it past the read's last transfer.
func (c *nandChannel) carry(t, d sim.Time) sim.Time {
	if start := max(t, c.gapFrom); start+d <= c.gapTo {
		c.gapFrom = start + d
		return start + d
	}
	if t > c.free {
		c.gapFrom, c.gapTo = c.free, t
	}
	c.free = max(t, c.free) + d
	return c.free
}

// owe records a write of pages from stripe position first that found
// every channel idle at time at.
func (c *nandChannels) owe(at sim.Time, first, pages int) {
	if pages < len(c.ch) {
		c.settle() // the new write leaves some channels as the owed one did
	}
	c.owed = owedWrite{at: at, first: first, pages: pages}
	c.idleAt = at + sim.Time((pages+len(c.ch)-1)/len(c.ch))*c.xfer
}

// settle writes out the owed write.
func (c *nandChannels) settle() {
	if c.owed.pages == 0 {
		return
	}
	o := c.owed
	c.owed.pages = 0
	for j := range c.start {
		c.start[j] = o.at
	}
	c.spread(c.start, o.first, o.pages)
}

// starts returns when each channel can start its pages of a write of
// pages from stripe position first: start[j] is for the write's j-th
// page's channel, in the channel's gap if they fit there, else after its
// last transfer.
func (c *nandChannels) starts(now sim.Time, first, pages int) []sim.Time {
	c.settle()
	ch := first % len(c.ch)
	for j := range c.start {
		x := &c.ch[ch]
		c.start[j] = max(now, x.free)
		if at := max(now, x.gapFrom); at+c.run(pages, j) <= x.gapTo {
			c.start[j] = at
		}
		if ch++; ch == len(c.ch) {
			ch = 0
		}
	}
	return c.start
}

// run returns how long the j-th channel of a write of pages carries it.
func (c *nandChannels) run(pages, j int) sim.Time {
	n := pages / len(c.ch)
	if j < pages%len(c.ch) {
		n++
	}
	return sim.Time(n) * c.xfer
}

// spread marks the channels busy with a write of pages from stripe
// position first whose j-th page's channel started at start[j] (in its
// gap, or after its last transfer).
func (c *nandChannels) spread(start []sim.Time, first, pages int) {
	channels := len(c.ch)
	ch := first % channels
	for j := range min(channels, pages) {
		end := start[j] + c.run(pages, j)
		if x := &c.ch[ch]; start[j] < x.free {
			x.gapFrom = end
		} else {
			x.free = end
			c.idleAt = max(c.idleAt, end)
		}
		if ch++; ch == channels {
			ch = 0
		}
	}
}
