package workloads

import (
	"math"
	"runtime"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/kvcosim/kvcosim/internal/golden"
	"github.com/kvcosim/kvcosim/sim"
)

func TestSyntheticMatchesItsFits(t *testing.T) {
	c := DefaultSynthetic()
	c.Sessions = 4000
	w, err := Synthetic(c, sim.NewStreams(1))
	require.NoError(t, err)
	var first, outs, gaps []float64
	turns := 0
	for _, s := range w.Sessions {
		turns += len(s.Turns)
		first = append(first, float64(s.Turns[0].NewTokenCount))
		for i, tr := range s.Turns {
			outs = append(outs, float64(tr.OutputCount))
			assert.Len(t, tr.Output, int(tr.OutputCount))
			if i > 0 && !tr.Interrupted {
				gaps = append(gaps, tr.Gap.Seconds())
			}
		}
	}
	median := func(v []float64) float64 { sort.Float64s(v); return v[len(v)/2] }
	assert.InDelta(t, 3.51, float64(turns)/float64(len(w.Sessions)), 0.1, "turns per session")
	assert.InDelta(t, 1020, median(first), 60)
	assert.InDelta(t, 129, median(outs), 8)
	assert.InDelta(t, 40, median(gaps), 4)
	span := w.Sessions[len(w.Sessions)-1].Start.Seconds()
	assert.InDelta(t, 0.5, float64(len(w.Sessions))/span, 0.03, "sessions per second")
}

func TestSyntheticIsDeterministicPerSession(t *testing.T) {
	c := DefaultSynthetic()
	c.Sessions = 10
	a, err := Synthetic(c, sim.NewStreams(3))
	require.NoError(t, err)
	c.Sessions = 20
	b, err := Synthetic(c, sim.NewStreams(3))
	require.NoError(t, err)
	assert.Equal(t, a.Sessions, b.Sessions[:10], "adding sessions changes none of the first ones")
	b.Limit(5)
	assert.Len(t, b.Sessions, 5)
}

func TestSyntheticSharedSystemPrompt(t *testing.T) {
	c := DefaultSynthetic()
	c.Sessions, c.SystemPromptTokens = 3, 100
	w, err := Synthetic(c, sim.NewStreams(1))
	require.NoError(t, err)
	assert.Equal(t, w.Sessions[0].Turns[0].NewTokens[:100], w.Sessions[2].Turns[0].NewTokens[:100])
}

func TestSyntheticRejects(t *testing.T) {
	c := DefaultSynthetic()
	c.SessionRatePerS = 0
	_, err := Synthetic(c, sim.NewStreams(1))
	assert.ErrorContains(t, err, "session_rate_per_s = 0")
	for _, c := range []struct {
		set  func(*SyntheticConfig)
		want string
	}{
		{func(c *SyntheticConfig) { c.Think = LengthFit{40, 10} }, "workload.think_p90_s,workload.think_median_s: p90 10 (workload.think_p90_s) must be finite and at least the median 40 (workload.think_median_s)"},
		{func(c *SyntheticConfig) { c.Think = LengthFit{0, 10} }, "workload.think_median_s: median 0"},
		{func(c *SyntheticConfig) { c.FirstPrompt = LengthFit{math.Inf(1), math.Inf(1)} }, "workload.first_prompt_median_tokens: median +Inf"},
		{func(c *SyntheticConfig) { c.FollowUpPrompt = LengthFit{100, math.NaN()} }, "workload.follow_up_p90_tokens,workload.follow_up_median_tokens: p90 NaN"},
		{func(c *SyntheticConfig) { c.Output = LengthFit{-1, 10} }, "workload.output_median_tokens: median -1"},
		{func(c *SyntheticConfig) { c.Think = LengthFit{500000, 1900000} },
			"workload.think_median_s = 500000, think_p90_s = 1.9e+06, turns_mean = 3.51: session 3's turn 5 would arrive past the 2000000s limit of a run (its think times add up past it)"},
	} {
		cfg := DefaultSynthetic()
		c.set(&cfg)
		_, err = Synthetic(cfg, sim.NewStreams(1))
		assert.ErrorContains(t, err, c.want)
	}
}

// TestSyntheticClampsHugeDraws: a length drawn past what an int holds is
// clamped to the maximum like any other long draw. (Rounded to an int
// first, 1e19 became the most negative int on amd64, and max(1, ...) made
// the prompt or output a single token, silently: a heavy tail such as
// median 8,192 and p90 1e12 tokens lost some 1 % of its draws so.)
func TestSyntheticClampsHugeDraws(t *testing.T) {
	for _, c := range []struct {
		name             string
		set              func(*SyntheticConfig)
		prompt, followUp int64
		output           int64
	}{
		{"first prompt", func(c *SyntheticConfig) { c.FirstPrompt = LengthFit{1e19, 1e19} }, 8192, 0, 0},
		{"follow-up", func(c *SyntheticConfig) { c.FollowUpPrompt = LengthFit{1e19, 1e19} }, 0, 8192, 0},
		{"output", func(c *SyntheticConfig) { c.Output = LengthFit{1e19, 1e19} }, 0, 0, 2048},
		{"within an int", func(c *SyntheticConfig) { c.Output = LengthFit{1e18, 1e18} }, 0, 0, 2048},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultSynthetic()
			cfg.Sessions, cfg.TurnsMean, cfg.Vocab = 8, 3, 2
			c.set(&cfg)
			w, err := Synthetic(cfg, sim.NewStreams(1))
			require.NoError(t, err)
			for _, s := range w.Sessions {
				for i, tr := range s.Turns {
					if want := map[bool]int64{true: c.prompt, false: c.followUp}[i == 0]; want > 0 {
						assert.Equal(t, want, tr.NewTokenCount, "session %d turn %d's new tokens", s.ID, i)
					}
					if c.output > 0 {
						assert.Equal(t, c.output, tr.OutputCount, "session %d turn %d's output", s.ID, i)
					}
				}
			}
		})
	}
}

// TestSyntheticLaysASessionsIDsOutInOneArray: a session's Tokens is every
// turn's new tokens then its output, in order, and each turn's ids are
// its pieces, capped at their ends (so that appending to one copies out).
func TestSyntheticLaysASessionsIDsOutInOneArray(t *testing.T) {
	c := DefaultSynthetic()
	c.Sessions, c.SystemPromptTokens = 200, 30
	w, err := Synthetic(c, sim.NewStreams(5))
	require.NoError(t, err)
	for _, s := range w.Sessions {
		var want []uint32
		for i, tr := range s.Turns {
			at := len(want)
			require.Len(t, tr.NewTokens, int(tr.NewTokenCount))
			assert.Same(t, &s.Tokens[at], &tr.NewTokens[0], "session %d turn %d's new tokens", s.ID, i)
			assert.Equal(t, len(tr.NewTokens), cap(tr.NewTokens))
			want = append(want, tr.NewTokens...)
			if len(tr.Output) > 0 {
				assert.Same(t, &s.Tokens[len(want)], &tr.Output[0], "session %d turn %d's output", s.ID, i)
			}
			assert.Equal(t, len(tr.Output), cap(tr.Output))
			want = append(want, tr.Output...)
		}
		require.Equal(t, want, s.Tokens)
		assert.Equal(t, len(s.Tokens), cap(s.Tokens), "an array of its exact size")
	}
}

// TestSyntheticIsTheSameOnAnyNumberOfCPUs: the sessions drawn on one CPU
// and on several, in batches, are the same, ids included.
func TestSyntheticIsTheSameOnAnyNumberOfCPUs(t *testing.T) {
	c := DefaultSynthetic()
	c.Sessions, c.SystemPromptTokens, c.InterruptProbability = 300, 20, 0.2
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var want *Workload
	for _, cpus := range []int{1, 2, 7} {
		runtime.GOMAXPROCS(cpus)
		w, err := Synthetic(c, sim.NewStreams(11))
		require.NoError(t, err)
		if want == nil {
			want = w
			continue
		}
		require.Equal(t, want.Sessions, w.Sessions, "%d CPUs", cpus)
	}
}
