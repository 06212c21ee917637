package memory

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

// refStripe is the page-by-page recurrence written plainly from the
// configuration (planeOf, times computed here), against which stripePages'
// precomputed stripe and page times are checked: each page's channel
// carries it, then its plane programs it.
func refStripe(s *SSD, n int64) sim.Time {
	waf := s.cfg.WriteAmplification
	xfer := sim.TimeOf(float64(s.cfg.ChannelBandwidth.TransferTime(s.cfg.PageBytes)) * waf)
	prog := sim.TimeOf(float64(s.cfg.ProgramTime) * waf)
	var last sim.Time
	for range n {
		plane, ch := s.planeOf(s.writePage)
		s.writePage++
		s.channelFree[ch] = max(s.eng.Now(), s.channelFree[ch]) + xfer
		s.planeFree[plane] = max(s.channelFree[ch], s.planeFree[plane]) + prog
		last = max(last, s.planeFree[plane])
	}
	return last
}

func TestStripePagesMatchesPageByPage(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, preset := range []string{"kioxia-cm6", "samsung-pm1743", "smartssd-p2p"} {
		cfg, err := SSDPreset(preset)
		require.NoError(t, err)
		for trial := range 300 {
			eng := sim.NewEngine(8)
			eng.RunUntil(sim.Time(r.Int64N(1e9)))
			got, err := NewSSD(eng, cfg)
			require.NoError(t, err)
			for i := range got.planeFree {
				got.planeFree[i] = sim.Time(r.Int64N(2e9))
			}
			for i := range got.channelFree {
				got.channelFree[i] = sim.Time(r.Int64N(2e9))
			}
			got.writePage = r.Int64N(1000)
			want := *got
			want.planeFree, want.channelFree = slices.Clone(got.planeFree), slices.Clone(got.channelFree)
			n := 1 + r.Int64N(int64(3*len(got.stripe)))
			require.Equal(t, refStripe(&want, n), got.stripePages(n), "%s trial %d, %d pages", preset, trial, n)
			require.Equal(t, want.planeFree, got.planeFree)
			require.Equal(t, want.channelFree, got.channelFree)
			require.Equal(t, want.writePage, got.writePage)
		}
	}
}
