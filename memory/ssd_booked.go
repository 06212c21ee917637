package memory

// Booked admission: the write path of the event-by-event drive without
// the events that only wait. Nothing but the drive's writes uses its write
// buffer and its host-to-card link, each serves them in the order they
// leave the controller, and the buffer's releases come in time order and
// each is known before its time (program works it out when the write
// arrives), so a write's admission follows from the same rule the events
// would apply,
//
//	admit(i) = the first time >= max(ctrl(i), admit(i-1)) at which the
//	           buffer, after every release up to then, has room
//
// as soon as a release that makes room is known: the write is admitted,
// and its transfer booked (Link.TransferFrom), when it leaves the
// controller (in start, with no controller event) or when the release is
// worked out, not at an event of the release. A write arrives at the NAND
// at an event still: reads sense the planes its pages program. A release
// at the very instant a write leaves the controller admits it at that
// instant in both ways; an arrival, booked earlier than stage by stage,
// goes before a read sensing at its picosecond both ways (the arrivals
// lane is at PriorityEarly). TestSSDFastPathMatchesEventByEvent
// holds the drive against the stage-by-stage one (EventByEvent), which
// books nothing ahead.
//
// aheadReleases are the pending releases, from the front, that booking has
// already counted as freed: all of them are at or before lastAdmit.
type aheadReleases struct {
	n     int
	bytes int64
}

// booking reports whether writes are admitted by booking (off event by
// event, and when every span is traced: the transfers' spans are emitted
// in time order).
func (s *pageDrive) booking() bool { return !s.cfg.EventByEvent && !s.eng.Trace().AllSpans() }

// bookBuffer admits write slot at its admission time, from now on, and
// books its transfer, or reports that no release known yet makes room.
func (s *pageDrive) bookBuffer(slot int) bool {
	s.freeReleased()
	c := s.cmds.At(slot)
	n, t := c.req.Bytes, max(c.ctrl, s.lastAdmit, s.eng.Now())
	used := s.bufferUsed - s.ahead.bytes
	for {
		for ; s.ahead.n < s.pendingReleases.Len() && s.pendingReleases.At(s.ahead.n).at <= t; s.ahead.n++ {
			freed := s.pendingReleases.At(s.ahead.n).bytes
			s.ahead.bytes += freed
			used -= freed
		}
		if used+n <= s.cfg.WriteBufferBytes || used <= 0 {
			break
		}
		if s.ahead.n == s.pendingReleases.Len() {
			s.lastAdmit = t // no admission before the last release known
			return false
		}
		t = s.pendingReleases.At(s.ahead.n).at
	}
	s.lastAdmit = t
	s.bufferUsed += n
	s.transferWrite(t, n, slot)
	return true
}

// bookWaiting admits the waiting writes, in order, that the releases
// known make room for.
func (s *pageDrive) bookWaiting() {
	for s.bufferWait.Len() > 0 && s.bookBuffer(s.bufferWait.Peek()) {
		s.bufferWait.Pop()
	}
}
