package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chainHolder books n transfers of a link ahead, each asked for when the
// one before arrives, and on Yield takes back those asked for after now
// and raises the one under way, as hold.go describes (it does not go on
// with the rest: the tests look at the link).
type chainHolder struct {
	l       *Link
	t0      Time
	mark    LinkMark
	n       int
	yielded bool
	done    *logger
}

func (h *chainHolder) book() Time {
	h.l.Free()
	h.t0, h.mark = h.l.eng.Now(), h.l.Mark()
	t := h.t0
	for range h.n {
		t = h.l.TransferFrom(t, 100, Event{})
	}
	h.l.Hold(h)
	return t
}

func (h *chainHolder) Yield() {
	h.yielded = true
	h.l.Let(h)
	h.l.Rewind(h.mark)
	t := h.t0
	for range h.n {
		if end := h.l.Arrival(t, 100); end >= h.l.eng.Now() {
			h.l.TransferFrom(t, 100, Event{Handler: h.done})
			return
		}
		t = h.l.TransferFrom(t, 100, Event{})
	}
}

func TestLinkHolderYieldsToTheNextTransfer(t *testing.T) {
	cfg := LinkConfig{Bandwidth: GBps, Latency: 10 * Nanosecond} // 100 B: 100 ns, then 10 ns
	cases := []struct {
		name       string
		otherAt    Time // another transfer of 100 B asked for then
		wantOther  Time // its arrival
		wantStats  LinkStats
		wantYields bool
	}{
		{"before the chain's second transfer: it goes first", 50 * Nanosecond, 210 * Nanosecond,
			LinkStats{Transfers: 2, Bytes: 200, Busy: 200 * Nanosecond}, true},
		{"after the chain's second transfer was asked for: it waits for it; the third is taken back", 200 * Nanosecond, 320 * Nanosecond,
			LinkStats{Transfers: 3, Bytes: 300, Busy: 300 * Nanosecond}, true},
		{"after the whole chain: it finds the link as the chain left it", 400 * Nanosecond, 510 * Nanosecond,
			LinkStats{Transfers: 4, Bytes: 400, Busy: 400 * Nanosecond}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eng := NewEngine(0)
			l, err := NewLink(eng, "wire", cfg)
			require.NoError(t, err)
			h := &chainHolder{l: l, n: 3, done: &logger{eng: eng}}
			assert.Equal(t, 330*Nanosecond, h.book(), "three transfers, each asked for at the last's arrival")
			assert.Equal(t, 330*Nanosecond-10*Nanosecond, l.freeAt, "booked ahead")
			if c.wantYields {
				eng.RunUntil(c.otherAt)
			} else {
				h.l.Let(h) // the chain ended: its holder lets go
				eng.RunUntil(c.otherAt)
			}
			assert.Equal(t, c.wantOther, l.Transfer(100, Event{}))
			assert.Equal(t, c.wantYields, h.yielded)
			eng.Run()
			assert.Equal(t, c.wantStats, l.Stats(), "the chain's transfers asked for by then, and the other")
		})
	}
}

func TestLinkLookYieldsAndRewindRestores(t *testing.T) {
	eng := NewEngine(0)
	l, err := NewLink(eng, "wire", LinkConfig{Bandwidth: GBps})
	require.NoError(t, err)
	before := l.Mark()
	h := &chainHolder{l: l, n: 2, done: &logger{eng: eng}}
	h.book()
	assert.Equal(t, Time(100*Nanosecond), l.FreeAt(), "a look at the link splits the chain at now (0): its first transfer stands")
	assert.True(t, h.yielded)
	l.Rewind(before)
	assert.Equal(t, LinkStats{}, l.Stats())
	assert.Equal(t, Time(200*Nanosecond), l.Arrival(100*Nanosecond, 100), "Arrival books nothing")
	assert.Equal(t, LinkStats{}, l.Stats())
}
