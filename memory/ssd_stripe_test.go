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
// its channel.
type refNAND struct {
	cfg            SSDConfig
	plane, channel []sim.Time
	pos            int
}

func (r *refNAND) write(now sim.Time, n int64) sim.Time {
	waf := r.cfg.WriteAmplification
	xfer := sim.TimeOf(float64(r.cfg.ChannelBandwidth.TransferTime(r.cfg.PageBytes)) * waf)
	prog := sim.TimeOf(float64(r.cfg.ProgramTime) * waf)
	var last sim.Time
	for range n {
		plane, ch := r.pos, r.pos%r.cfg.Channels
		r.pos = (r.pos + 1) % r.cfg.Planes()
		r.channel[ch] = max(now, r.channel[ch]) + xfer
		r.plane[plane] = max(r.channel[ch], r.plane[plane]) + prog
		last = max(last, r.plane[plane])
	}
	return last
}

func (r *refNAND) read(now sim.Time, p, bytes int64) sim.Time {
	plane := int(p % int64(r.cfg.Planes()))
	ch := plane % r.cfg.Channels
	r.plane[plane] = max(now, r.plane[plane]) + r.cfg.ReadTime
	r.channel[ch] = max(r.plane[plane], r.channel[ch]) + r.cfg.ChannelBandwidth.TransferTime(bytes)
	return r.channel[ch]
}

// settled returns the channels' free times with any owed write written
// out, leaving s as it was.
func settled(s *SSD) []sim.Time {
	c := s.channels
	c.free, c.start = slices.Clone(c.free), slices.Clone(c.start)
	c.settle()
	return c.free
}

// TestNANDMatchesPageByPage runs random sequences of writes (short and
// long, on idle and busy channels) and page reads through the SSD's NAND
// state and through refNAND, comparing every result and the whole state
// after each step.
func TestNANDMatchesPageByPage(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, preset := range []string{"kioxia-cm6", "samsung-pm1743", "smartssd-p2p"} {
		cfg, err := SSDPreset(preset)
		require.NoError(t, err)
		for trial := range 40 {
			eng := sim.NewEngine(8)
			got, err := NewSSD(eng, cfg)
			require.NoError(t, err)
			got.writePos = r.IntN(cfg.Planes())
			want := refNAND{cfg: cfg, plane: make([]sim.Time, cfg.Planes()), channel: make([]sim.Time, cfg.Channels), pos: got.writePos}
			for step := range 200 {
				eng.RunUntil(eng.Now() + sim.Time(r.Int64N(3))*sim.Time(r.Int64N(int64(200*sim.Microsecond))))
				now := eng.Now()
				switch op := r.IntN(8); {
				case op == 0:
					p, bytes := r.Int64N(1<<20), 1+r.Int64N(cfg.PageBytes)
					require.Equal(t, want.read(now, p, bytes), got.readPage(p, bytes, now), "%s trial %d step %d: read", preset, trial, step)
				default:
					n := 1 + r.Int64N(int64(2*cfg.Channels))
					if op > 4 {
						n = 1 + r.Int64N(int64(3*cfg.Planes()))
					}
					require.Equal(t, want.write(now, n), got.stripePages(now, n), "%s trial %d step %d: %d pages", preset, trial, step, n)
				}
				require.Equal(t, want.plane, got.planeFree)
				require.Equal(t, want.channel, settled(got))
				require.Equal(t, want.pos, got.writePos)
			}
		}
	}
}
