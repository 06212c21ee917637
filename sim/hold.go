package sim

// Booking ahead. A component that knows it alone will use a few links for a
// while (the FPGA's chain walks over PCIe and host memory) books its whole
// chain of transfers at once, each from the arrival of the one before
// (TransferFrom at a time later than now), instead of raising an event per
// transfer. It then holds the links: the first transfer anyone else asks of
// one of them, or any look at its state, first makes the holder take back
// everything it booked from then on (Holder.Yield) and go on event by event
// from the transfer it has under way. So the link serves in the order the
// events would have asked, and its state and totals are what they would
// have left.

// Holder is a component holding links it has booked ahead.
type Holder interface {
	// Yield takes back the bookings the holder made for after now, leaves
	// the one under way with its completion event, and lets the links go.
	Yield()
}

// LinkMark is a link's state, to go back to with Rewind.
type LinkMark struct {
	freeAt, busy     Time
	bytes, transfers int64
}

// Mark returns the link's state now.
func (l *Link) Mark() LinkMark {
	return LinkMark{freeAt: l.freeAt, busy: l.busy, bytes: l.bytes, transfers: l.transfers}
}

// Rewind puts the link back to state m, taking back every transfer booked
// since (they must have raised no event yet: a holder's bookings ahead).
func (l *Link) Rewind(m LinkMark) {
	l.freeAt, l.busy, l.bytes, l.transfers = m.freeAt, m.busy, m.bytes, m.transfers
}

// Arrival returns when a transfer of bytes asked for at time at would
// arrive, as the link stands, asking nothing; at most MaxTime (the
// transfer itself then overflows in TransferFrom).
func (l *Link) Arrival(at Time, bytes int64) Time {
	return SumTime(max(at, l.freeAt), l.cfg.WireTime(bytes), l.cfg.Latency)
}

// Hold makes h the link's holder. Before it books ahead, h makes sure no
// other holder's bookings are in its way: it books only links not Held, or
// frees them first (Free).
func (l *Link) Hold(h Holder) { l.holder = h }

// Held reports whether a holder holds the link.
func (l *Link) Held() bool { return l.holder != nil }

// Let lets the link go if h holds it.
func (l *Link) Let(h Holder) {
	if l.holder == h {
		l.holder = nil
	}
}

// Free makes the link's holder, if any, yield: after it the link's state is
// what the events up to now would have left.
func (l *Link) Free() {
	if h := l.holder; h != nil {
		l.holder = nil
		h.Yield()
	}
}
