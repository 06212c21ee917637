package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/scenario"
	"github.com/kvcosim/kvcosim/workloads"
)

func TestFidelityBandHolds(t *testing.T) {
	for _, c := range []struct {
		name           string
		band           fidelityBand
		published, v   float64
		holds          bool
		describe, unit string
	}{
		{"points, inside", pointsBand10, 0.85, 0.76, true, "±10 pts", "share"},
		{"points, outside", pointsBand10, 0.61, 0.777, false, "±10 pts", "share"},
		{"points, on the edge", pointsBand5, 0.40, 0.35, true, "±5 pts", "share"},
		{"relative, inside", relativeBand15, 7.8, 6.7, true, "±15 %", "x"},
		{"relative, outside", relativeBand15, 6.8, 5.34, false, "±15 %", "x"},
		{"relative, below zero", relativeBand30, -2, -2.5, true, "±30 %", "x"},
		{"relative around 0 bounds the value", fidelityBand{Width: 0.15, Relative: true}, 0, 0.14, true, "at most 0.15", "fraction"},
		{"relative around 0, over", fidelityBand{Width: 0.15, Relative: true}, 0, -0.16, false, "at most 0.15", "fraction"},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.holds, c.band.holds(c.published, c.v))
			assert.Equal(t, c.describe, c.band.describe(c.published, c.unit))
		})
	}
}

// TestFidelityOutcome: the spread is over the seeds, a figure passes only
// when every seed lies in its band, a known gap is expected to fail, and
// a figure that could not be computed (NaN) is never as expected.
func TestFidelityOutcome(t *testing.T) {
	f := fidelityFigure{Published: 0.5, Unit: "share", Band: pointsBand10}
	r := fidelityOutcome(f, []float64{0.4, 0.6, 0.5}, true)
	assert.InDelta(t, 0.5, r.Mean, 1e-12)
	assert.Equal(t, 0.4, r.Min)
	assert.Equal(t, 0.6, r.Max)
	assert.InDelta(t, 0.0816497, r.SD, 1e-6)
	assert.True(t, r.AsExpected)

	f.Gap = "a stated reason"
	assert.False(t, fidelityOutcome(f, []float64{0.5}, true).AsExpected, "a known gap back in its band is news")
	assert.True(t, fidelityOutcome(f, []float64{0.9}, false).AsExpected)
	assert.False(t, fidelityOutcome(f, []float64{0.9, math.NaN()}, false).AsExpected, "a figure that could not be computed is never as expected")
	none := fidelityOutcome(f, nil, false)
	assert.Zero(t, none.Seeds)
	assert.True(t, none.AsExpected, "a figure not modelled is a known gap")
}

func TestFidelityRefusesBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fidelity", "--seeds", "0"}, "--seeds 0: want 1 to 100"},
		{[]string{"fidelity", "--paper-seeds", "0"}, "--paper-seeds 0: want 1 to 100"},
		{[]string{"fidelity", "--paper-seeds", "101"}, "--paper-seeds 101: want 1 to 100"},
		{[]string{"fidelity", "-j", "0"}, "-j 0"},
		{[]string{"fidelity", "extra"}, `unexpected argument "extra"`},
	} {
		code, _, stderr := simrun(c.args...)
		assert.Equal(t, 2, code, c.args)
		assert.Contains(t, stderr, c.want, c.args)
	}
}

// TestFidelityQuick runs CI's form of simrun fidelity: every figure where
// its check expects it (within its band, or outside it for a stated
// reason) on both seeds; exit 1 otherwise.
func TestFidelityQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the CachedAttention experiment on two seeds and Mooncake's two traces once: about 55 s of CPU")
	}
	code, stdout, stderr := simrun("fidelity", "--quick", "--json", "--root", "../..")
	require.Equal(t, 0, code, stderr)
	var rows []fidelityRow
	require.NoError(t, json.Unmarshal([]byte(stdout), &rows))
	checks := map[string]int{}
	for _, r := range rows {
		checks[r.Check]++
		assert.True(t, r.AsExpected, "%s %s: %v", r.Check, r.Figure, r.Values)
		if r.Check == "cachedattention" || r.Check == "lmcache" {
			assert.Contains(t, []int{0, quickSeeds}, r.Seeds, r.Figure)
		}
		if r.Check == "mooncake prefill" {
			assert.Equal(t, 1, r.Seeds, r.Figure)
		}
	}
	calibrations, err := calibrationRows()
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"cachedattention": 23, "mooncake": 2, "mooncake prefill": 4, "lmcache": 2, "calibrate": len(calibrations)}, checks)
	assert.Contains(t, stderr, "run 56/56 done")
}

// TestCachedAttentionPaperCostModel works the paper's cost model by hand:
// 128 GB of DRAM and 10 TB of SSD cost 128 x 0.0088 + 10,000 x 0.000082 =
// $1.9464 an hour, beside $10 (2 A100s) or $20 (4); each design pays its
// GPUs and its store over its GPU busy time, not its simulated time.
func TestCachedAttentionPaperCostModel(t *testing.T) {
	store := []reports.TierSummary{{Name: "host-dram", CapacityBytes: 128e9}, {Name: "ssd", CapacityBytes: 10e12, Drives: 1}}
	run := func(simS, busy float64, tiers []reports.TierSummary) reports.Summary {
		return reports.Summary{SimTimeS: simS, Utilization: map[string]float64{"accelerator": busy}, Tiers: tiers}
	}
	two, four := caModel{name: "two", gpus: 2}, caModel{name: "four", gpus: 4}
	for _, c := range []struct {
		name    string
		m       caModel
		re, ca  reports.Summary
		measure caMeasure
		want    float64
	}{
		{"CA 4x shorter, 2 GPUs: 1 - 11.9464 / 40", two, run(4000, 1, nil), run(1000, 1, store), caCostReduction, 1 - 11.9464/40},
		{"RE busy half its run pays half: 1 - 11.9464 / 20", two, run(4000, 0.5, nil), run(1000, 1, store), caCostReduction, 1 - 11.9464/20},
		{"CA as long as RE pays for its store", four, run(1000, 1, nil), run(1000, 1, store), caCostReduction, 1 - 21.9464/20},
		{"storage share, 2 GPUs: 1.9464 / 11.9464", two, run(4000, 1, nil), run(1000, 0.7, store), caStorageShare, 1.9464 / 11.9464},
		{"storage share, 4 GPUs: 1.9464 / 21.9464", four, run(4000, 1, nil), run(1000, 1, store), caStorageShare, 1.9464 / 21.9464},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.InDelta(t, c.want, c.measure(c.m, c.re, c.ca), 1e-9)
		})
	}
}

// TestCachedAttentionModelsRunOnThePapersGPUs: the cost model charges
// each model's GPUs as caModels gives them (the paper's), so the replay
// must run each on that many, on one node.
func TestCachedAttentionModelsRunOnThePapersGPUs(t *testing.T) {
	root := filepath.Join("..", "..")
	sw, err := scenario.LoadSweep(filepath.Join(root, caPaperScenario))
	require.NoError(t, err)
	gpus := map[string]int{}
	for _, m := range caModels {
		gpus[m.name] = m.gpus
	}
	points := sw.Points()
	require.Len(t, points, 2*len(caModels))
	for _, p := range points {
		l, err := scenario.Load(sw.Base, p.Sets)
		require.NoError(t, err)
		assert.Equal(t, 1, l.System.Nodes, p.Values)
		assert.Equal(t, gpus[p.Values[0]], l.Accelerator.TP, p.Values)
	}
}

// TestCachedAttentionMeasuresAfterTheWarmup: with a warm-up
// (workload.warmup_turns) the TTFT reduction, the hit rate and the prefill
// throughput are over the turns after it, as the paper measures its 42K
// turns after the first 10K; without one, over all turns.
func TestCachedAttentionMeasuresAfterTheWarmup(t *testing.T) {
	run := func(ttftMs, hit float64, warm *reports.WarmupSummary) reports.Summary {
		return reports.Summary{TTFTms: reports.Percentiles{Mean: ttftMs}, HitRatioTokens: hit, AfterWarmup: warm}
	}
	after := func(ttftMs, hit float64) *reports.WarmupSummary {
		return &reports.WarmupSummary{WarmupTurns: 10, TTFTms: reports.Percentiles{Mean: ttftMs}, HitRatioTokens: hit}
	}
	for _, c := range []struct {
		name    string
		re, ca  reports.Summary
		measure caMeasure
		want    float64
	}{
		{"TTFT reduction over all turns", run(1000, 0, nil), run(200, 0.8, nil), caTTFTReduction, 0.8},
		{"TTFT reduction after the warm-up", run(1000, 0, after(1200, 0)), run(200, 0.8, after(600, 0.7)), caTTFTReduction, 0.5},
		{"hit rate over all turns", run(1000, 0, nil), run(200, 0.8, nil), caHitRate, 0.8},
		{"hit rate after the warm-up", run(1000, 0, after(1200, 0)), run(200, 0.8, after(600, 0.7)), caHitRate, 0.7},
		{"throughput after the warm-up", run(1000, 0, after(1200, 0)), run(200, 0.8, after(600, 0.7)), caThroughput, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.InDelta(t, c.want, c.measure(caModel{}, c.re, c.ca), 1e-12)
		})
	}
}

// TestCachedAttentionGapsByReplay: a figure's known gap in a replay is
// the scenario's (caModels) unless the replay's gaps name it ("" for
// none); the abstract's keep the cost gap unless named.
func TestCachedAttentionGapsByReplay(t *testing.T) {
	m := caModel{name: "llama-65b", gaps: map[string]string{"hit": "why", "ttft": "because"}}
	scenario := caReplay{name: "scenario"}
	paper := caReplay{name: "paper", gaps: map[string]map[string]string{"llama-65b": {"hit": ""}, caUpTo: {"throughput": "slow"}}}
	for _, c := range []struct {
		replay caReplay
		figure string
		want   string
	}{
		{scenario, "hit", "why"},
		{paper, "hit", ""},
		{scenario, "ttft", "because"},
		{paper, "ttft", "because"},
		{paper, "cost", ""},
	} {
		assert.Equal(t, c.want, c.replay.gap(m, c.figure), "%s in %s", c.figure, c.replay.name)
	}
	assert.Equal(t, caCostGap, scenario.gap(caUpToFigures, "cost"))
	assert.Equal(t, "", scenario.gap(caUpToFigures, "throughput"))
	assert.Equal(t, "slow", paper.gap(caUpToFigures, "throughput"))
}

// TestCachedAttentionFromAdmission: the open queue's figures read each
// run's TTFT from admission after the warm-up; a run without a warm-up
// gives NaN, which no band holds.
func TestCachedAttentionFromAdmission(t *testing.T) {
	run := func(ttftMs, fromAdmissionMs float64) reports.Summary {
		return reports.Summary{TTFTms: reports.Percentiles{Mean: ttftMs}, AfterWarmup: &reports.WarmupSummary{WarmupTurns: 10,
			TTFTms: reports.Percentiles{Mean: ttftMs}, TTFTFromAdmissionMs: reports.Percentiles{Mean: fromAdmissionMs}}}
	}
	m := caModel{name: "m"}
	in := fidelityInputs{seeds: []map[string]reports.Summary{{"m recompute": run(9000, 400), "m cachedattention": run(3000, 100)}}}
	assert.InDelta(t, 2.0/3, caFigure(m, caTTFTReduction, false)(in, 0), 1e-12)
	assert.InDelta(t, 0.75, caFigure(m, caTTFTReduction, true)(in, 0), 1e-12)
	assert.InDelta(t, 4, caFigure(m, caThroughput, true)(in, 0), 1e-12)
	cold := fidelityInputs{seeds: []map[string]reports.Summary{{"m recompute": {TTFTms: reports.Percentiles{Mean: 900}}, "m cachedattention": {TTFTms: reports.Percentiles{Mean: 300}}}}}
	assert.True(t, math.IsNaN(caFigure(m, caTTFTReduction, true)(cold, 0)))
	assert.False(t, pointsBand10.holds(0.61, math.NaN()))
}

// ranRows are requests that ran, with these prefill times.
func ranRows(prefillMs ...float64) []reports.RequestRow {
	rows := make([]reports.RequestRow, len(prefillMs))
	for i, ms := range prefillMs {
		rows[i] = reports.RequestRow{PrefillMs: ms}
	}
	return rows
}

// TestMooncakePrefillMeasures: the saving is 1 - the mean prefill time
// with reuse over that without, the ratio the mean without over the mean
// with, each over the requests that ran; none that ran gives no figure.
func TestMooncakePrefillMeasures(t *testing.T) {
	rejected := reports.RequestRow{Rejected: true}
	for _, c := range []struct {
		name          string
		without, with []reports.RequestRow
		saving, ratio float64
	}{
		{"nothing reused saves nothing", ranRows(100, 300), ranRows(100, 300), 0, 1},
		{"the means, not the requests' own: 1 - 250 / 400, 400 / 250", ranRows(100, 700), ranRows(100, 400), 1 - 250.0/400, 400.0 / 250},
		{"a request weighs by its time: 1 - 455 / 500, not the mean of 90 % and 0", ranRows(100, 900), ranRows(10, 900), 1 - 455.0/500, 500.0 / 455},
		{"sets of other sizes: 1 - 150 / 300", ranRows(200, 400), ranRows(150), 0.5, 2},
		{"rejected requests are left out", append(ranRows(200), rejected), append(ranRows(50), rejected, rejected), 0.75, 4},
		{"more time with reuse is a negative saving, a ratio under 1", ranRows(100), ranRows(150), -0.5, 100.0 / 150},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.InDelta(t, c.saving, prefillSaving(c.without, c.with), 1e-12)
			assert.InDelta(t, c.ratio, prefillTimeRatio(c.without, c.with), 1e-12)
		})
	}
	assert.True(t, math.IsNaN(prefillSaving(ranRows(100), []reports.RequestRow{rejected})), "no request ran with reuse")
	assert.True(t, math.IsNaN(prefillTimeRatio([]reports.RequestRow{rejected}, ranRows(100))), "no request ran without")
}

// TestMooncakePrefillFiguresReadTheirTracesRuns: each figure is its own
// trace's, from the one seed's runs: the saving from vLLM's and
// Mooncake's, prefix caching's ratio from all its instances' requests
// together over Mooncake's.
func TestMooncakePrefillFiguresReadTheirTracesRuns(t *testing.T) {
	c := mooncakePrefillCheck()
	runs := map[string][]reports.RequestRow{
		"conversation vllm": {{PrefillMs: 100}}, "conversation mooncake": {{PrefillMs: 64}},
		"synthetic vllm": {{PrefillMs: 100}}, "synthetic mooncake": {{PrefillMs: 36}},
	}
	for i := range vllmInstances {
		// conversation: instance 1 has a request of 64 x 1.5 ms, every other one
		// of 64 x 1.4: mean 64 x (1.5 + 15 x 1.4) / 16; synthetic: 36 x 2.59.
		ms := 64 * 1.4
		if i == 0 {
			ms = 64 * 1.5
		}
		runs[prefixCachingLabel("conversation", i)] = []reports.RequestRow{{PrefillMs: ms}}
		runs[prefixCachingLabel("synthetic", i)] = []reports.RequestRow{{PrefillMs: 36 * 2.59}, {Rejected: true}}
	}
	rows := c.outcomes(fidelityInputs{requests: []map[string][]reports.RequestRow{runs}})
	require.Len(t, rows, 4)
	for i, want := range []float64{0.36, 0.64, (1.5 + 15*1.4) / 16, 2.59} {
		assert.Equal(t, "mooncake prefill", rows[i].Check)
		assert.InDelta(t, want, rows[i].Mean, 1e-12, rows[i].Figure)
		assert.True(t, rows[i].Pass, rows[i].Figure)
	}
	assert.Equal(t, "conversation vLLM prefix caching / Mooncake prefill time", rows[2].Figure)
	assert.Equal(t, 1, c.seedsOf(fidelityEnv{seeds: 5}), "the traces draw nothing at random: one seed")
}

// TestDealTrace: a trace's requests go to the files in turn, in trace
// order, each line whole; blank lines are no requests; a gzip-compressed
// trace is read decompressed.
func TestDealTrace(t *testing.T) {
	lines := func(ids ...int) string {
		var b strings.Builder
		for _, id := range ids {
			fmt.Fprintf(&b, "{\"timestamp\": %d}\n", id)
		}
		return b.String()
	}
	for _, c := range []struct {
		name, trace string
		gz          bool
		n           int
		want        []string
	}{
		{"one instance takes all", lines(1, 2, 3), false, 1, []string{lines(1, 2, 3)}},
		{"seven to three: 3, 2 and 2, in turn", lines(1, 2, 3, 4, 5, 6, 7), false, 3, []string{lines(1, 4, 7), lines(2, 5), lines(3, 6)}},
		{"blank lines and CRLF", "{\"timestamp\": 1}\r\n\n  \n{\"timestamp\": 2}", false, 2, []string{lines(1), lines(2)}},
		{"gzip", lines(1, 2, 3, 4), true, 2, []string{lines(1, 3), lines(2, 4)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "trace.jsonl")
			data := []byte(c.trace)
			if c.gz {
				path += ".gz"
				var b bytes.Buffer
				w := gzip.NewWriter(&b)
				_, err := w.Write(data)
				require.NoError(t, err)
				require.NoError(t, w.Close())
				data = b.Bytes()
			}
			require.NoError(t, os.WriteFile(path, data, 0o644))
			parts, err := dealTrace(path, filepath.Join(dir, "part"), c.n)
			require.NoError(t, err)
			require.Len(t, parts, c.n)
			for i, p := range parts {
				assert.Equal(t, filepath.Join(dir, fmt.Sprintf("part-%d.jsonl", i+1)), p)
				got, err := os.ReadFile(p)
				require.NoError(t, err)
				assert.Equal(t, c.want[i], string(got), p)
			}
		})
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "short.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(lines(1, 2)), 0o644))
	_, err := dealTrace(path, filepath.Join(dir, "part"), 3)
	assert.ErrorContains(t, err, "2 requests, fewer than the 3 instances")
	_, err = dealTrace(filepath.Join(dir, "absent.jsonl"), filepath.Join(dir, "part"), 3)
	assert.Error(t, err)
}

// TestMooncakePrefillRunsOnThePapersTestbed: every run loads, on the
// paper's node (8 A800s, LLaMA3-70B's architecture), one request at a
// time, the designs differing only in the store: Mooncake's unlimited,
// each vLLM instance's prefix cache the KV room its HBM leaves, the
// instances' traces together the whole trace.
func TestMooncakePrefillRunsOnThePapersTestbed(t *testing.T) {
	runs, err := mooncakePrefillCheck().runs(fidelityEnv{root: filepath.Join("..", ".."), tmp: t.TempDir()})
	require.NoError(t, err)
	require.Len(t, runs, (2+vllmInstances)*len(mooncakePrefillTraces))
	requests := map[string]int{}
	for _, r := range runs {
		l, err := scenario.Load(r.base, r.sets)
		require.NoError(t, err, r.label)
		assert.Equal(t, "llama-3-70b", l.Model, r.label)
		assert.Equal(t, "a800", l.Accelerator.Device, r.label)
		assert.Equal(t, 8, l.Accelerator.TP, r.label)
		assert.Equal(t, 1, l.Workload.MaxConcurrency, r.label)
		trace, _, _ := strings.Cut(r.label, " ")
		switch {
		case strings.Contains(r.label, "prefix caching"):
			perToken, tokens := l.KVRoom()
			require.Len(t, l.Storage.Tiers, 1, r.label)
			capacity, err := scenario.ParseSize(l.Storage.Tiers[0].Capacity)
			require.NoError(t, err, r.label)
			assert.Equal(t, perToken*tokens, capacity, r.label)
			assert.Equal(t, "cpu", l.System.Design, r.label)
			tr, err := workloads.ReadTrace("mooncake", l.Workload.Path, false)
			require.NoError(t, err, r.label)
			requests[trace] += len(tr.Requests)
		case strings.HasSuffix(r.label, "mooncake"):
			assert.Equal(t, "unlimited", l.Storage.Tiers[0].Capacity, r.label)
		}
	}
	assert.Equal(t, map[string]int{"conversation": 12031, "synthetic": 3993}, requests, "the instances take every request once")
}

// TestFidelityChecksRunByFlags: the open-queue replay runs with
// --open-queue only, whatever --paper-scale says; the paper-scale replay
// with --paper-scale only; the others always. The replays at the paper's
// scale run --paper-seeds seeds, the others --seeds.
func TestFidelityChecksRunByFlags(t *testing.T) {
	scenario := fidelityCheck{name: "scenario"}
	paper := fidelityCheck{name: "paper", paperScale: true}
	open := fidelityCheck{name: "open", paperScale: true, openQueue: true}
	for _, c := range []struct {
		paperScale, openQueue bool
		want                  []string
	}{
		{false, false, []string{"scenario"}},
		{true, false, []string{"scenario", "paper"}},
		{false, true, []string{"scenario", "open"}},
		{true, true, []string{"scenario", "paper", "open"}},
	} {
		var ran []string
		for _, check := range []fidelityCheck{scenario, paper, open} {
			if check.runsIn(fidelityEnv{paperScale: c.paperScale, openQueue: c.openQueue}) {
				ran = append(ran, check.name)
			}
		}
		assert.Equal(t, c.want, ran, "--paper-scale=%v --open-queue=%v", c.paperScale, c.openQueue)
	}
	withRuns := func(c fidelityCheck) fidelityCheck {
		c.runs = func(fidelityEnv) ([]fidelityRun, error) { return nil, nil }
		return c
	}
	env := fidelityEnv{seeds: 5, paperSeeds: 3}
	assert.Equal(t, 5, withRuns(scenario).seedsOf(env), "a check at its scenario's scale runs --seeds")
	assert.Equal(t, 3, withRuns(paper).seedsOf(env), "at the paper's scale, --paper-seeds")
	assert.Equal(t, 3, withRuns(open).seedsOf(env))
}
