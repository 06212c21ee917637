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

func studyOf(p50s []float64, saturated []bool) *study {
	st := &study{}
	for d, p50 := range p50s {
		s := reports.Summary{Design: studyDesigns[d], ResumedTTFTms: reports.Percentiles{P50: p50}, Saturated: saturated[d],
			Load: reports.Load{Judged: true}}
		st.designs = append(st.designs, pointResult{sum: s})
		st.saturatedAt = append(st.saturatedAt, 0)
	}
	return st
}

// The lead says who wins and by how much, from the figures; it neither
// divides by zero nor names a winner when no resumed turn lost its KV.
func TestLeadStatesTheFindingFromTheFigures(t *testing.T) {
	none := make([]bool, 5)
	for _, c := range []struct {
		name    string
		p50     []float64
		sat     []bool
		want    []string
		notWant []string
	}{
		{"a store wins", []float64{246, 113, 168, 118, 67}, none,
			[]string{"cachedattention serves a resumed turn", "3.7x faster", "The patent's card (fpga) takes 168 ms, 1.5x faster", "No design is saturated"}, []string{"NaN", "Inf"}},
		{"the card wins", []float64{246, 200, 100, 300, 150}, none,
			[]string{"fpga serves a resumed turn whose KV left the accelerator fastest", "2.5x faster"}, []string{"The patent's card (fpga) takes"}},
		{"recompute wins", []float64{50, 60, 70, 80, 90}, none,
			[]string{"no storing design serves a resumed turn faster than recomputing it"}, nil},
		{"no resumed turn", []float64{0, 0, 0, 0, 0}, none,
			[]string{"no resumed turn lost its KV"}, []string{"NaN", "Inf", "fastest"}},
		{"a saturated design", []float64{246, 113, 168, 118, 67}, []bool{true, false, false, false, false},
			[]string{"Saturated at this load: recompute"}, nil},
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
