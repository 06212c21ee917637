package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvcosim/kvcosim/reports"
)

// spreadOf is a made-up figure over the seeds: its mean, least and
// greatest.
func spreadOf(mean, least, greatest float64) reports.Spread {
	return reports.Spread{Mean: mean, Min: least, Max: greatest}
}

// The verdict claims a win or a loss only where the card's range over the
// seeds and its rival's do not overlap; the rest are ties.
func TestCardVerdictClaimsOnlyDifferencesLargerThanTheSpread(t *testing.T) {
	busyHost := verdictFigure{what: "resumed-turn TTFT p50 at host load 0.9", unit: "ms", format: fixed("%.0f"), card: spreadOf(120, 115, 125),
		rivals: []rivalFigure{{"cpu", spreadOf(300, 280, 320)}, {"lmcache", spreadOf(400, 390, 410)}}}
	idleHost := verdictFigure{what: "resumed-turn TTFT p50 at host load 0", unit: "ms", format: fixed("%.0f"), card: spreadOf(170, 160, 180),
		rivals: []rivalFigure{{"cpu", spreadOf(110, 100, 120)}}}
	cost := verdictFigure{what: "cost per million output tokens", unit: "USD", format: fixed("%.2f"), card: spreadOf(57.5, 56, 59),
		rivals: []rivalFigure{{"cpu", spreadOf(56.1, 55, 57)}}}
	mixed := verdictFigure{what: "energy per output token", unit: "J", format: fixed("%.1f"), card: spreadOf(36, 35.5, 36.5),
		rivals: []rivalFigure{{"recompute", spreadOf(38, 37.5, 38.5)}, {"cpu", spreadOf(34, 33.5, 34.5)}, {"lmcache", spreadOf(36.4, 36, 37)}}}
	for _, tc := range []struct {
		name    string
		seeds   int
		figures []verdictFigure
		want    string
	}{
		{"wins on a busy host", 2, []verdictFigure{busyHost},
			"Where the patent's card (fpga) wins by more than the seeds' spread: resumed-turn TTFT p50 at host load 0.9 against cpu and lmcache (120 against 300 and 400 ms). It loses nowhere by more than the seeds' spread."},
		{"loses on an idle host", 2, []verdictFigure{idleHost},
			"The patent's card (fpga) wins nowhere by more than the seeds' spread. Where it loses by more than the seeds' spread: resumed-turn TTFT p50 at host load 0 against cpu (170 against 110 ms)."},
		{"ties within the spread", 2, []verdictFigure{cost},
			"The patent's card (fpga) wins nowhere by more than the seeds' spread. It loses nowhere by more than the seeds' spread. Within the seeds' spread: cost per million output tokens against cpu (57.50 against 56.10 USD)."},
		{"one figure, every outcome", 2, []verdictFigure{mixed},
			"Where the patent's card (fpga) wins by more than the seeds' spread: energy per output token against recompute (36.0 against 38.0 J). Where it loses by more than the seeds' spread: energy per output token against cpu (36.0 against 34.0 J). Within the seeds' spread: energy per output token against lmcache (36.0 against 36.4 J)."},
		{"figures in order within each outcome", 2, []verdictFigure{idleHost, busyHost, cost},
			"Where the patent's card (fpga) wins by more than the seeds' spread: resumed-turn TTFT p50 at host load 0.9 against cpu and lmcache (120 against 300 and 400 ms). Where it loses by more than the seeds' spread: resumed-turn TTFT p50 at host load 0 against cpu (170 against 110 ms). Within the seeds' spread: cost per million output tokens against cpu (57.50 against 56.10 USD)."},
		{"one seed has no spread", 1, []verdictFigure{{what: "host core-seconds per resumed turn", unit: "core-s", format: twoDigits, card: spreadOf(1e-5, 1e-5, 1e-5),
			rivals: []rivalFigure{{"cpu", spreadOf(0.39, 0.39, 0.39)}, {"lmcache", spreadOf(1e-5, 1e-5, 1e-5)}}}},
			"Where the patent's card (fpga) wins by more than zero (one seed): host core-seconds per resumed turn against cpu (0.00001 against 0.39 core-s). It loses nowhere by more than zero (one seed). Within zero (one seed): host core-seconds per resumed turn against lmcache (0.00001 against 0.00001 core-s)."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, cardVerdict("fpga", tc.seeds, tc.figures))
		})
	}
}

// A figure's outcome against a rival: ranges that touch tie.
func TestOutcomeNeedsRangesApart(t *testing.T) {
	for _, tc := range []struct {
		name        string
		card, rival reports.Spread
		want        verdictOutcome
	}{
		{"lower and apart", spreadOf(1, 0.9, 1.1), spreadOf(2, 1.9, 2.1), cardWins},
		{"higher and apart", spreadOf(2, 1.9, 2.1), spreadOf(1, 0.9, 1.1), cardLoses},
		{"touching", spreadOf(1, 0.9, 1.5), spreadOf(2, 1.5, 2.1), cardTies},
		{"lower mean inside the rival's range", spreadOf(1.5, 1.4, 1.6), spreadOf(1.6, 1, 2), cardTies},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, outcome(tc.card, tc.rival)) })
	}
}

func TestScaledPicksTheUnitOfEachValue(t *testing.T) {
	for v, want := range map[float64]string{5.3e-6: "5.3 core-us", 0.3957: "400 core-ms", 1.2: "1.2 core-s", 2e-9: "0.002 core-us", 0: "0 core-us"} {
		assert.Equal(t, want, coreSeconds(v), "%g", v)
	}
	for v, want := range map[float64]string{6.4e-5: "64 kB", 7.2: "7.2 GB", 0.5: "500 MB", 3e-9: "3 B"} {
		assert.Equal(t, want, gigabytes(v), "%g", v)
	}
}

func TestTwoDigitsHasNoExponent(t *testing.T) {
	for v, want := range map[float64]string{1.234e-05: "0.000012", 0.3957: "0.4", 17.3: "17", 403.2: "400", 0: "0"} {
		assert.Equal(t, want, twoDigits(v), "%g", v)
	}
}
