package scenario

import (
	"testing"

	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAfterWarmupLeavesOutTheFirstTurns holds the warm-up's figures to
// the requests after the first warmup in arrival order, completed ones
// only, a warm-up longer than the run leaving none; the TTFT from
// admission is each one's time from admission to its first token.
func TestAfterWarmupLeavesOutTheFirstTurns(t *testing.T) {
	turn := func(done bool, ttftMs, prompt, reused int64) hostcpu.Record {
		return hostcpu.Record{Done: done, TTFT: sim.Time(ttftMs) * sim.Millisecond, Prefill: sim.Time(ttftMs/10) * sim.Millisecond,
			PromptTokens: prompt, ReusedTokens: reused}
	}
	records := []hostcpu.Record{turn(true, 900, 100, 0), turn(true, 700, 300, 200), turn(false, 0, 50, 0),
		turn(true, 100, 400, 300), turn(true, 300, 200, 100)}
	cases := []struct {
		name   string
		warmup int
		want   *reports.WarmupSummary
	}{
		{"none", 0, nil},
		{"the first two", 2, &reports.WarmupSummary{WarmupTurns: 2, Turns: 2, TTFTms: reports.Percentiles{Mean: 200, P50: 100, P90: 300, P99: 300},
			TTFTFromAdmissionMs: reports.Percentiles{Mean: 20, P50: 10, P90: 30, P99: 30}, PromptTokens: 600, ReusedTokens: 400, HitRatioTokens: 400.0 / 600}},
		{"an unfinished one left out", 1, &reports.WarmupSummary{WarmupTurns: 1, Turns: 3, TTFTms: reports.NewPercentiles([]float64{700, 100, 300}),
			TTFTFromAdmissionMs: reports.NewPercentiles([]float64{70, 10, 30}), PromptTokens: 900, ReusedTokens: 600, HitRatioTokens: 600.0 / 900}},
		{"longer than the run", 9, &reports.WarmupSummary{WarmupTurns: 9}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, afterWarmup(records, c.warmup))
		})
	}
}

// TestWarmupTurnsAgreeWithTheRequests holds a run's after_warmup to its
// requests.csv rows after the first warmup_turns (the TTFT from admission
// to their prefill_ms), and leaves every other
// figure as it is without the key.
func TestWarmupTurnsAgreeWithTheRequests(t *testing.T) {
	sets := []string{"system.design=cachedattention", "accelerator.retain=off", "workload.sessions=20"}
	plain := simulate(t, sets...).Summary()
	res := simulate(t, append(sets, "workload.warmup_turns=15")...)
	s := res.Summary()
	require.NotNil(t, s.AfterWarmup)
	assert.Nil(t, plain.AfterWarmup)
	rows := res.Rows()[15:]
	var prompt, reused int64
	var fromAdmission []float64
	for _, r := range rows {
		prompt, reused = prompt+r.PromptTokens, reused+r.ReusedTokens
		fromAdmission = append(fromAdmission, r.PrefillMs)
	}
	assert.Equal(t, len(rows), s.AfterWarmup.Turns)
	assert.Equal(t, prompt, s.AfterWarmup.PromptTokens)
	assert.Equal(t, reused, s.AfterWarmup.ReusedTokens)
	assert.Equal(t, reports.NewPercentiles(fromAdmission), s.AfterWarmup.TTFTFromAdmissionMs)
	assert.Less(t, s.AfterWarmup.TTFTFromAdmissionMs.Mean, s.AfterWarmup.TTFTms.Mean, "a turn waits for its lookup before admission")
	assert.Greater(t, s.AfterWarmup.ReusedTokens, int64(0), "later turns reuse their history")
	s.AfterWarmup = nil
	assert.Equal(t, plain, s, "the warm-up changes no other figure")
}
