package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvcosim/kvcosim/reports"
)

// The crossover is the first measured history a design wins by more than
// the tie: a design that recomputes below its chunk ties there and steps.
func TestCrossoverIsTheFirstHistoryThatWins(t *testing.T) {
	recompute := []float64{20, 40, 80, 160}
	m := breakEvenMap{histories: []int64{64, 128, 256, 512}, paths: []string{"p"}, ttft: [][][]float64{{
		recompute,
		{10, 20, 40, 80},          // wins everywhere
		{30, 50, 70, 100},         // crosses between 128 and 256
		{20.0001, 39.999, 50, 90}, // ties (within 1 %) until 256
		{25, 45, 90, 170},         // never
	}}}
	for d, want := range map[int]string{1: "always (from 64 tokens)", 2: "from 256 tokens", 3: "from 256 tokens", 4: "never (up to 512 tokens)"} {
		assert.Equal(t, want, m.crossoverText(m.crossover(0, d)), "design %d", d)
	}
}

// studyOf is a study of one run per seed of each design at the
// scenario's load: p50s[d] are design d's resumed-turn TTFT p50s, one per
// seed, each over 400 resumed turns.
func studyOf(p50s [][]float64, saturated []bool) *study {
	st := &study{}
	for s := range p50s[0] {
		st.plan.seeds = append(st.plan.seeds, uint64(1+s))
	}
	for d, seeds := range p50s {
		var runs []int
		for _, p50 := range seeds {
			s := reports.Summary{Design: studyDesigns[d], ResumedTTFTms: reports.Percentiles{P50: p50}, ResumedTurns: 400, Saturated: saturated[d],
				Load: reports.Load{Judged: true}}
			runs, st.results = append(runs, len(st.results)), append(st.results, pointResult{sum: s})
		}
		st.plan.designs = append(st.plan.designs, runs)
		st.designs = append(st.designs, st.results[runs[0]])
		st.saturatedFrom = append(st.saturatedFrom, -1)
	}
	return st
}

// oneSeed is each design's p50 on a single seed.
func oneSeed(p50s ...float64) [][]float64 {
	var out [][]float64
	for _, p := range p50s {
		out = append(out, []float64{p})
	}
	return out
}

// The lead says who wins and by how much, from the figures, and only where
// the seeds' spreads do not overlap; it neither divides by zero nor names
// a winner when no resumed turn lost its KV; each p50 says how many turns
// it covers.
func TestLeadStatesTheFindingFromTheFigures(t *testing.T) {
	none := make([]bool, 5)
	for _, c := range []struct {
		name    string
		p50     [][]float64
		sat     []bool
		want    []string
		notWant []string
	}{
		{"a store wins", oneSeed(246, 113, 168, 118, 67), none,
			[]string{"At this load, cachedattention serves a resumed turn", "67 ms (p50 of 400 resumed turns)", "3.7x faster",
				"The patent's card (fpga) takes 168 ms (p50 of 400 resumed turns), 1.5x faster", "No design is saturated"}, []string{"NaN", "Inf", "seeds"}},
		{"the card wins", oneSeed(246, 200, 100, 300, 150), none,
			[]string{"fpga serves a resumed turn whose KV left the accelerator fastest", "2.5x faster"}, []string{"The patent's card (fpga) takes"}},
		{"recompute wins", oneSeed(50, 60, 70, 80, 90), none,
			[]string{"no storing design serves a resumed turn faster than recomputing it"}, nil},
		{"no resumed turn", oneSeed(0, 0, 0, 0, 0), none,
			[]string{"no resumed turn lost its KV"}, []string{"NaN", "Inf", "fastest"}},
		{"a saturated design", oneSeed(246, 113, 168, 118, 67), []bool{true, false, false, false, false},
			[]string{"Saturated at this load: recompute"}, nil},
		{"a win within the spread", [][]float64{{240, 250, 260}, {300, 310, 320}, {280, 290, 300}, {300, 300, 300}, {200, 230, 255}}, none,
			[]string{"At this load (means over 3 seeds, with their least and greatest), no storing design", "no storing design serves a resumed turn faster than recomputing it by more than the seeds' spread",
				"the best, cachedattention, 228 ms (200-255, p50 of 400 resumed turns)"}, []string{"fastest", "x faster"}},
		{"winners within each other's spread", [][]float64{{240, 250, 260}, {150, 160, 170}, {180, 190, 200}, {68, 75, 80}, {60, 65, 70}}, none,
			[]string{"lmcache and cachedattention serve (within the seeds' spread of each other) a resumed turn whose KV left the accelerator fastest",
				"TTFT p50 65 ms (60-70, p50 of 400 resumed turns) against 250 ms (240-260, p50 of 400 resumed turns)", "3.8x faster",
				"The patent's card (fpga) takes 190 ms (180-200, p50 of 400 resumed turns), 1.3x faster"}, nil},
		{"the card within recompute's spread", [][]float64{{240, 250, 260}, {150, 160, 170}, {230, 250, 270}, {100, 110, 120}, {60, 65, 70}}, none,
			[]string{"The patent's card (fpga) takes 250 ms (230-270, p50 of 400 resumed turns), within the seeds' spread of recomputing."}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			lead := studyOf(c.p50, c.sat).lead()
			for _, w := range c.want {
				assert.Contains(t, lead, w)
			}
			for _, w := range c.notWant {
				assert.NotContains(t, lead, w)
			}
		})
	}
}

// A saturation point lies between the last load the curve measured
// without one and the first with one.
func TestSaturationIsBracketed(t *testing.T) {
	st := studyOf(oneSeed(1, 1, 1, 1, 1), make([]bool, 5))
	for k, want := range map[int]string{-1: "not up to 6x", 0: "at or below 0.5x", 1: "between 0.5x and 1x", 3: "between 2x and 4x"} {
		st.saturatedFrom[2] = k
		assert.Equal(t, want, st.saturationText(2), "first saturated at load %d", k)
	}
	st.saturatedFrom = []int{3, 4, 4, 3, -1}
	assert.Equal(t, "recompute saturates first, between 2x and 4x the load", st.firstToSaturate())
}
