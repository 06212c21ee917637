package memory

import "github.com/kvcosim/kvcosim/sim"

// planeOf returns the plane, as a position in the stripe, and the channel
// of page p. Consecutive pages stripe over channels, then dies, then
// planes, so position k of a round is on channel k mod Channels; a plane's
// state is kept at its position, which makes the write loop a linear scan.
func (s *SSD) planeOf(p int64) (plane, channel int) {
	plane = int(p % int64(len(s.planeFree)))
	return plane, plane % s.cfg.Channels
}

// readPage senses page p on its plane no earlier than now, then carries
// bytes of it over the page's channel, and returns when they are across.
func (s *SSD) readPage(p, bytes int64, now sim.Time) sim.Time {
	plane, ch := s.planeOf(p)
	sensed := max(now, s.planeFree[plane]) + s.cfg.ReadTime
	s.planeFree[plane] = sensed
	return s.channels.carry(ch, sensed, s.cfg.ChannelBandwidth.TransferTime(bytes))
}

// stripePages programs n pages from the write pointer, from now, and returns when
// the last is done: page by page, a channel carries each page in turn
// (free = max(now, free) + xfer) and its plane programs it after it
// arrives (free = max(arrival, free) + prog). Every page of a trace's KV
// export passes here, so the recurrence is unrolled: page i of the call is
// the (i/Channels+1)-th the call puts on its channel, so it arrives that
// many page times after the channel's start, and only the planes carry
// state from page to page.
func (s *SSD) stripePages(now sim.Time, n int64) sim.Time {
	first := s.writePos
	var last sim.Time
	if now >= s.channels.idleAt {
		last = s.programPages(int(n), now, s.channels.zero)
		s.channels.owe(now, first, int(n))
	} else {
		start := s.channels.starts(now, first)
		last = s.programPages(int(n), 0, start)
		s.channels.spread(start, first, int(n))
	}
	return last
}

// programPages runs the plane recurrence for n pages from the write
// pointer, page i arriving (i/Channels+1) page times after base +
// start[i mod Channels], and moves the pointer. It goes a round of
// channels at a time, the inner loop free of index checks unless the
// round wraps the stripe.
func (s *SSD) programPages(n int, base sim.Time, start []sim.Time) sim.Time {
	planeFree, prog, xfer := s.planeFree, s.pageProgram, s.channels.xfer
	var last sim.Time
	pos, arrive := s.writePos, base+xfer
	for left := n; left > 0; left -= len(start) {
		round := start[:min(left, len(start))]
		if pos+len(round) <= len(planeFree) {
			planes := planeFree[pos : pos+len(round)]
			for k, st := range round {
				done := max(st+arrive, planes[k]) + prog
				planes[k] = done
				last = max(last, done)
			}
			if pos += len(round); pos == len(planeFree) {
				pos = 0
			}
		} else {
			for _, st := range round {
				done := max(st+arrive, planeFree[pos]) + prog
				planeFree[pos] = done
				last = max(last, done)
				if pos++; pos == len(planeFree) {
					pos = 0
				}
			}
		}
		arrive += xfer
	}
	s.writePos = pos
	return last
}

// nandChannels keeps when each NAND channel is next free. A write that
// finds every channel idle starts each at once, so what it leaves behind
// is a formula of (start, first channel, pages): it is kept owed as that
// formula and written out only when single channels are needed (a read, or
// a write that finds some channel busy), which in a long export is rare.
type nandChannels struct {
	free   []sim.Time
	start  []sim.Time // scratch for starts
	zero   []sim.Time // all zeros: every channel starts at the base
	idleAt sim.Time   // every channel is free from here on
	xfer   sim.Time   // a page's transfer, write amplification included
	owed   owedWrite
}

// owedWrite is a write that started every channel it used at time at.
type owedWrite struct {
	at           sim.Time
	first, pages int // pages 0: nothing owed
}

func newNANDChannels(c SSDConfig) nandChannels {
	return nandChannels{free: make([]sim.Time, c.Channels), start: make([]sim.Time, c.Channels), zero: make([]sim.Time, c.Channels),
		xfer: sim.TimeOf(float64(c.ChannelBandwidth.TransferTime(c.PageBytes)) * c.WriteAmplification)}
}

// carry puts a transfer of d on channel ch no earlier than t and returns
// when it ends.
func (c *nandChannels) carry(ch int, t, d sim.Time) sim.Time {
	c.settle()
	c.free[ch] = max(t, c.free[ch]) + d
	c.idleAt = max(c.idleAt, c.free[ch])
	return c.free[ch]
}

// owe records a write of pages from stripe position first that found
// every channel idle at time at.
func (c *nandChannels) owe(at sim.Time, first, pages int) {
	if pages < len(c.free) {
		c.settle() // the new write leaves some channels as the owed one did
	}
	c.owed = owedWrite{at: at, first: first, pages: pages}
	c.idleAt = at + sim.Time((pages+len(c.free)-1)/len(c.free))*c.xfer
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

// starts returns when each channel can start a write from stripe position
// first: start[j] is for the write's j-th page's channel.
func (c *nandChannels) starts(now sim.Time, first int) []sim.Time {
	c.settle()
	ch := first % len(c.free)
	for j := range c.start {
		c.start[j] = max(now, c.free[ch])
		if ch++; ch == len(c.free) {
			ch = 0
		}
	}
	return c.start
}

// spread marks the channels busy with a write of pages from stripe
// position first whose j-th page's channel started at start[j].
func (c *nandChannels) spread(start []sim.Time, first, pages int) {
	channels := len(c.free)
	q, r := pages/channels, pages%channels
	ch := first % channels
	for j := range min(channels, pages) {
		n := q
		if j < r {
			n++
		}
		c.free[ch] = start[j] + sim.Time(n)*c.xfer
		c.idleAt = max(c.idleAt, c.free[ch])
		if ch++; ch == channels {
			ch = 0
		}
	}
}
