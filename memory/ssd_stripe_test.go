package memory

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

// refNAND is the NAND's page-by-page recurrences written plainly from the
// configuration, against which the SSD's unrolled write loop and owed
// channel formula are checked: a written page crosses its channel, then
// its plane programs it; a read page is sensed on its plane, then crosses
// its channel, before the programs queued on its plane: it waits for the
// program in progress, or an earlier read, and the queued programs move
// a tR later. A channel keeps the idle stretch before its last transfer
// (gapFrom, gapTo): a read's page, or a write's pages on the channel all
// together, go there if they fit, and what is left of it is after them.
type refNAND struct {
	cfg            SSDConfig
	plane, channel []sim.Time
	gapFrom, gapTo []sim.Time
	pos            int
	// queued holds each plane's programs not yet begun by their start
	// times; head is the end of what a read cannot pass
	queued [][]sim.Time
	head   []sim.Time
}

func (r *refNAND) write(now sim.Time, n int64) sim.Time {
	waf := r.cfg.WriteAmplification
	xfer := sim.TimeOf(float64(r.cfg.ChannelBandwidth.TransferTime(r.cfg.PageBytes)) * waf)
	prog := sim.TimeOf(float64(r.cfg.ProgramTime) * waf)
	onChannel := make([]int64, r.cfg.Channels)
	for i := range n {
		onChannel[(int64(r.pos)+i)%int64(r.cfg.Channels)]++
	}
	arrive := make([]sim.Time, r.cfg.Channels) // the last page's arrival on each channel
	for ch, k := range onChannel {
		if k > 0 {
			arrive[ch] = r.carry(ch, now, sim.Time(k)*xfer) - sim.Time(k)*xfer
		}
	}
	var last sim.Time
	for range n {
		plane, ch := r.pos, r.pos%r.cfg.Channels
		r.pos = (r.pos + 1) % r.cfg.Planes()
		arrive[ch] += xfer
		start := max(arrive[ch], r.plane[plane])
		r.queued[plane] = append(r.queued[plane], start)
		r.plane[plane] = start + prog
		last = max(last, r.plane[plane])
	}
	return last
}

func (r *refNAND) read(now sim.Time, addr, bytes int64) sim.Time {
	ready, page := now, r.cfg.PageBytes
	for p := addr / page; p <= (addr+bytes-1)/page; p++ {
		plane := int(p % int64(r.cfg.Planes()))
		ch := plane % r.cfg.Channels
		sensed := r.sense(plane, now)
		piece := min(addr+bytes, (p+1)*page) - max(addr, p*page)
		ready = max(ready, r.carry(ch, sensed, r.cfg.ChannelBandwidth.TransferTime(piece)))
	}
	return ready
}

// carry puts a transfer of d on channel ch no earlier than t, in its gap
// if it fits, and returns when it ends.
func (r *refNAND) carry(ch int, t, d sim.Time) sim.Time {
	if start := max(t, r.gapFrom[ch]); start+d <= r.gapTo[ch] {
		r.gapFrom[ch] = start + d
		return start + d
	}
	if t > r.channel[ch] {
		r.gapFrom[ch], r.gapTo[ch] = r.channel[ch], t
	}
	r.channel[ch] = max(t, r.channel[ch]) + d
	return r.channel[ch]
}

// sense senses a page on plane q for a read at now and returns when it
// ends: the programs that have begun by now (or that a read cannot pass)
// go first, the read next, and the programs still queued after it, each a
// tR later.
func (r *refNAND) sense(q int, now sim.Time) sim.Time {
	prog := sim.TimeOf(float64(r.cfg.ProgramTime) * r.cfg.WriteAmplification)
	busy := r.head[q]
	queued := r.queued[q]
	for len(queued) > 0 && (queued[0] < now || queued[0] < busy) {
		busy = max(busy, queued[0]+prog)
		queued = queued[1:]
	}
	if len(queued) == 0 {
		sensed := max(now, busy, r.plane[q]) + r.cfg.ReadTime
		r.queued[q], r.head[q], r.plane[q] = nil, sensed, sensed
		return sensed
	}
	sensed := max(now, busy, queued[0]) + r.cfg.ReadTime
	for i := range queued {
		queued[i] += r.cfg.ReadTime
	}
	r.queued[q], r.head[q], r.plane[q] = queued, sensed, r.plane[q]+r.cfg.ReadTime
	return sensed
}

// orderBits returns the order bits of planes free at free: bit q is set
// when plane q is free later than plane q+1 (mod the planes).
func orderBits(free []sim.Time) []uint64 {
	out := make([]uint64, (len(free)+63)/64)
	for q, t := range free {
		if t > free[(q+1)%len(free)] {
			out[q/64] |= 1 << (q % 64)
		}
	}
	return out
}

// free returns every plane's free time, by stripe position.
func (p *nandPlanes) free() []sim.Time {
	out := make([]sim.Time, len(p.base))
	for q := range out {
		out[q] = p.at(q)
	}
	return out
}

// settled returns the channels' free times with any owed write written
// out, leaving s as it was.
func settled(s *pageDrive) []sim.Time {
	c := s.channels
	c.ch, c.start = slices.Clone(c.ch), slices.Clone(c.start)
	c.settle()
	free := make([]sim.Time, len(c.ch))
	for i, x := range c.ch {
		free[i] = x.free
	}
	return free
}

// TestNANDMatchesPageByPage runs random sequences of writes (short and
// long, on idle and busy channels, and streams that keep every plane busy,
// which take the path that touches no plane) and reads (a piece of a page
// to a few stripes) through the SSD's NAND state and through refNAND,
// comparing every result and the whole state (order bits included) after
// each step.
func TestNANDMatchesPageByPage(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, preset := range []string{"kioxia-cm6", "samsung-pm1743", "smartssd-p2p"} {
		cfg, err := SSDPreset(preset)
		require.NoError(t, err)
		for trial := range 40 {
			eng := sim.NewEngine(8)
			drive, err := NewSSD(eng, cfg)
			require.NoError(t, err)
			got := drive.page()
			got.planes.advance(r.IntN(cfg.Planes()))
			for q := range got.planes.pos {
				got.planes.base[q] = -got.planes.prog // no write yet
			}
			want := refNAND{cfg: cfg, plane: make([]sim.Time, cfg.Planes()), channel: make([]sim.Time, cfg.Channels), pos: got.planes.pos,
				queued: make([][]sim.Time, cfg.Planes()), head: make([]sim.Time, cfg.Planes()),
				gapFrom: make([]sim.Time, cfg.Channels), gapTo: make([]sim.Time, cfg.Channels)}
			for step := range 200 {
				// odd trials are an export's stream: channel rounds of about
				// 25 us back to back keep every plane programming
				export := trial%2 == 1
				rounds := max(1, int64(25*sim.Microsecond/got.channels.xfer))
				gap := sim.Time(r.Int64N(3)) * sim.Time(r.Int64N(int64(200*sim.Microsecond)))
				if export {
					gap = sim.Time(rounds)*got.channels.xfer + sim.Time(r.Int64N(int64(15*sim.Microsecond)))
				}
				eng.RunUntil(eng.Now() + gap)
				now := eng.Now()
				switch op := r.IntN(8); {
				case op == 0 && (!export || r.IntN(8) == 0): // a read on a busy plane holds its channel
					addr, bytes := r.Int64N(1<<34), 1+r.Int64N(cfg.PageBytes)
					if r.IntN(2) == 0 {
						bytes = 1 + r.Int64N(int64(3*cfg.Planes())*cfg.PageBytes/(1+int64(r.IntN(20))))
					}
					require.Equal(t, want.read(now, addr, bytes), got.readPages(addr, bytes, now), "%s trial %d step %d: read", preset, trial, step)
				default:
					n := 1 + r.Int64N(int64(2*cfg.Channels))
					if export {
						n = rounds*int64(cfg.Channels) - r.Int64N(rounds*int64(cfg.Channels)/2)
					} else if op > 4 {
						n = 1 + r.Int64N(int64(3*cfg.Planes()))
					}
					require.Equal(t, want.write(now, n), got.stripePages(now, n), "%s trial %d step %d: %d pages", preset, trial, step, n)
				}
				require.Equal(t, want.plane, got.planes.free())
				require.Equal(t, orderBits(want.plane), got.planes.desc)
				require.Equal(t, want.channel, settled(got))
				require.Equal(t, want.pos, got.planes.pos)
			}
		}
	}
}
