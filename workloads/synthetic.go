package workloads

import (
	"fmt"
	"math"

	"github.com/kvcosim/kvcosim/sim"
)

// LengthFit is a lognormal given by its median and 90th percentile, the
// two figures published trace statistics give.
type LengthFit struct {
	Median, P90 float64
}

// SyntheticConfig is a multi-turn chat workload.
type SyntheticConfig struct {
	Sessions int
	// SessionRatePerS is the Poisson rate at which sessions start.
	SessionRatePerS float64
	// TurnsMean is the mean number of turns (geometric).
	TurnsMean float64
	// FirstPrompt, FollowUpPrompt and Output are token counts; Think and
	// Interruption are seconds.
	FirstPrompt, FollowUpPrompt, Output LengthFit
	Think, Interruption                 LengthFit
	// InterruptProbability is the chance that a gap is an interruption.
	InterruptProbability float64
	// SystemPromptTokens are shared by every session's first prompt.
	SystemPromptTokens int
	// MaxPromptTokens and MaxOutputTokens clamp the draws.
	MaxPromptTokens, MaxOutputTokens int
	Vocab                            int
}

// DefaultSynthetic is fitted to public statistics: 3.51 turns per
// conversation (ShareGPT); first prompts and outputs as Azure's 2023
// conversation trace (context tokens median 1,020, p90 2,734; generated
// median 129, p90 424); a follow-up turn adds the first prompt's fit scaled
// by 1/3.51 (Azure's context includes the history); think times as
// RAGPulse's inter-turn gaps (median 40 s, p90 302 s); one gap in ten an
// interruption of about 10 minutes.
func DefaultSynthetic() SyntheticConfig {
	return SyntheticConfig{Sessions: 400, SessionRatePerS: 0.5, TurnsMean: 3.51,
		FirstPrompt: LengthFit{1020, 2734}, FollowUpPrompt: LengthFit{1020 / 3.51, 2734 / 3.51}, Output: LengthFit{129, 424},
		Think: LengthFit{40, 302}, Interruption: LengthFit{600, 1800}, InterruptProbability: 0.1,
		MaxPromptTokens: 8192, MaxOutputTokens: 2048, Vocab: 32000}
}

// Validate checks the configuration.
func (c SyntheticConfig) Validate() error {
	switch {
	case c.Sessions < 1:
		return fmt.Errorf("workload.sessions = %d: must be at least 1", c.Sessions)
	case !(c.SessionRatePerS > 0) || math.IsInf(c.SessionRatePerS, 0):
		return fmt.Errorf("workload.session_rate_per_s = %v: must be positive", c.SessionRatePerS)
	case !(c.TurnsMean >= 1):
		return fmt.Errorf("workload.turns_mean = %v: must be at least 1", c.TurnsMean)
	case !(c.InterruptProbability >= 0 && c.InterruptProbability <= 1):
		return fmt.Errorf("workload.interrupt_probability = %v: must be in [0, 1]", c.InterruptProbability)
	case c.SystemPromptTokens < 0 || c.MaxPromptTokens < 1 || c.MaxOutputTokens < 1 || c.Vocab < 2:
		return fmt.Errorf("workload: system_prompt_tokens >= 0, max_prompt_tokens >= 1, max_output_tokens >= 1 and vocab >= 2 required")
	}
	for _, f := range []struct {
		median, p90 string
		fit         LengthFit
	}{{"first_prompt_median_tokens", "first_prompt_p90_tokens", c.FirstPrompt},
		{"follow_up_median_tokens", "follow_up_p90_tokens", c.FollowUpPrompt},
		{"output_median_tokens", "output_p90_tokens", c.Output},
		{"think_median_s", "think_p90_s", c.Think}, {"interruption_s", "interruption_s", c.Interruption}} {
		switch {
		case !(f.fit.Median > 0) || math.IsInf(f.fit.Median, 0):
			return fmt.Errorf("workload.%s: median %v: must be positive and finite", f.median, f.fit.Median)
		case !(f.fit.P90 >= f.fit.Median) || math.IsInf(f.fit.P90, 0):
			return fmt.Errorf("workload.%s: p90 %v: must be finite and at least the median %v", f.p90, f.fit.P90, f.fit.Median)
		}
	}
	return c.checkSize()
}

// MaxSyntheticBytes bounds the memory a synthetic workload's tokens may
// take (estimated before drawing them).
const MaxSyntheticBytes = 4 << 30

// checkSize refuses, before anything is drawn, a workload whose sessions
// would arrive past sim.Horizon or whose tokens would not fit
// MaxSyntheticBytes.
func (c SyntheticConfig) checkSize() error {
	turnBytes := 4*(c.FollowUpPrompt.mean(c.MaxPromptTokens)+c.Output.mean(c.MaxOutputTokens)) + turnOverheadBytes
	sessionBytes := 4*(float64(c.SystemPromptTokens)+c.FirstPrompt.mean(c.MaxPromptTokens)) + c.TurnsMean*turnBytes
	if est := float64(c.Sessions) * sessionBytes; est > MaxSyntheticBytes {
		key := "workload.sessions"
		switch {
		case 4*float64(c.SystemPromptTokens) > c.TurnsMean*turnBytes:
			key = "workload.system_prompt_tokens"
		case c.TurnsMean > float64(c.Sessions):
			key = "workload.turns_mean"
		}
		return fmt.Errorf("%s: %d sessions of %v turns (system prompt %d tokens) would take about %.3g GB, more than the %d GB limit",
			key, c.Sessions, c.TurnsMean, c.SystemPromptTokens, est/1e9, MaxSyntheticBytes>>30)
	}
	if span := float64(c.Sessions) / c.SessionRatePerS; span > sim.Horizon.Seconds()/2 {
		return fmt.Errorf("workload.session_rate_per_s = %v: %d sessions arrive over about %.3g s, past half the %v limit of a run",
			c.SessionRatePerS, c.Sessions, span, sim.Horizon)
	}
	return nil
}

// turnOverheadBytes is a turn's memory beside its tokens.
const turnOverheadBytes = 128

// mean is the lognormal's mean, clamped to maxTokens: sigma from the p90's
// z-score of 1.2816.
func (f LengthFit) mean(maxTokens int) float64 {
	sigma := math.Log(f.P90/f.Median) / 1.2815515655446004
	return min(f.Median*math.Exp(sigma*sigma/2), float64(maxTokens))
}

// Synthetic draws a workload; each session draws from its own stream, so a
// session does not change when others are added.
func Synthetic(c SyntheticConfig, streams sim.Streams) (*Workload, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	dists := map[string]*sim.LogNormal{}
	for name, f := range map[string]LengthFit{"first": c.FirstPrompt, "follow": c.FollowUpPrompt, "output": c.Output,
		"think": c.Think, "interrupt": c.Interruption} {
		d, err := sim.LogNormalFromMedianP90(f.Median, f.P90)
		if err != nil {
			return nil, err
		}
		dists[name] = d
	}
	turns, err := sim.NewGeometric(1 / c.TurnsMean)
	if err != nil {
		return nil, err
	}
	arrivals := streams.Stream("workload/arrivals")
	system := make([]uint32, c.SystemPromptTokens)
	sysRNG := streams.Stream("workload/system-prompt")
	for i := range system {
		system[i] = uint32(sysRNG.IntN(c.Vocab))
	}
	w := &Workload{}
	start := sim.Time(0)
	for id := range c.Sessions {
		start += sim.TimeOf(arrivals.ExpFloat64() / c.SessionRatePerS * 1e12)
		if start > sim.Horizon {
			return nil, fmt.Errorf("workload.session_rate_per_s = %v: session %d would start past the %v limit of a run", c.SessionRatePerS, id, sim.Horizon)
		}
		r := streams.Stream(fmt.Sprintf("workload/session/%d", id))
		s, end := Session{ID: int64(id), Start: start}, start
		for t := range int(turns.Sample(r)) {
			fit, prefix := dists["follow"], []uint32(nil)
			if t == 0 {
				fit, prefix = dists["first"], system
			}
			turn := Turn{Node: -1}
			turn.NewTokens = append(prefix, tokens(r, draw(r, fit, c.MaxPromptTokens), c.Vocab)...)
			turn.NewTokenCount = int64(len(turn.NewTokens))
			turn.Output = tokens(r, draw(r, dists["output"], c.MaxOutputTokens), c.Vocab)
			turn.OutputCount = int64(len(turn.Output))
			if t > 0 {
				gap := dists["think"].Sample(r)
				if r.Float64() < c.InterruptProbability {
					gap, turn.Interrupted = gap+dists["interrupt"].Sample(r), true
				}
				turn.Gap = sim.TimeOf(gap * 1e12)
				var ok bool
				if end, ok = sim.AddTime(end, turn.Gap); !ok || end > sim.Horizon {
					return nil, fmt.Errorf("workload.think_median_s = %v, think_p90_s = %v, turns_mean = %v: session %d's turn %d would arrive past the %v limit of a run (its think times add up past it)",
						c.Think.Median, c.Think.P90, c.TurnsMean, id, t, sim.Horizon)
				}
			}
			s.Turns = append(s.Turns, turn)
		}
		w.Sessions = append(w.Sessions, s)
	}
	return w, nil
}

func draw(r *sim.Stream, d *sim.LogNormal, maxTokens int) int {
	return min(max(1, int(math.Round(d.Sample(r)))), maxTokens)
}

func tokens(r *sim.Stream, n, vocab int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(r.IntN(vocab))
	}
	return out
}
