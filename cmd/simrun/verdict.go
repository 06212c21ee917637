package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kvcosim/kvcosim/reports"
)

// The study's verdict on the patent's card: for each figure where lower
// is better, which designs the card beats, which beat it and which it
// ties, where a difference counts only when it is larger than the seeds'
// spread (the two figures' ranges over the seeds do not overlap).

// verdictFigure is one figure of the verdict: what it is, its unit and
// how its values are written, the card's value and its rivals', each over
// the seeds. Lower is better.
type verdictFigure struct {
	what, unit string
	format     func(float64) string
	card       reports.Spread
	rivals     []rivalFigure
}

// fixed writes a value with a fmt verb: fixed("%.0f").
func fixed(verb string) func(float64) string {
	return func(v float64) string { return fmt.Sprintf(verb, v) }
}

// twoDigits writes a value to two significant digits without an exponent:
// 0.000012, 0.4, 17, 400.
func twoDigits(v float64) string {
	rounded, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 2, 64), 64)
	return strconv.FormatFloat(rounded, 'f', -1, 64)
}

// scaled writes a value given in base units to two significant digits
// in the largest of the units (each with its factor to the base, largest
// first) in which it is at least 1, or the smallest: 5.3e-6 core-s is
// "5.3 core-us", 0.4 core-s "400 core-ms". Values of a figure that span
// orders of magnitude stay readable without an exponent.
func scaled(units ...unitFactor) func(float64) string {
	return func(v float64) string {
		u := units[len(units)-1]
		for _, c := range units {
			if v >= c.factor {
				u = c
				break
			}
		}
		return twoDigits(v/u.factor) + " " + u.name
	}
}

// unitFactor is a unit and how many base units it holds.
type unitFactor struct {
	name   string
	factor float64
}

var (
	coreSeconds = scaled(unitFactor{"core-s", 1}, unitFactor{"core-ms", 1e-3}, unitFactor{"core-us", 1e-6})
	gigabytes   = scaled(unitFactor{"GB", 1}, unitFactor{"MB", 1e-3}, unitFactor{"kB", 1e-6}, unitFactor{"B", 1e-9})
)

// rivalFigure is a rival design's value of a verdict figure.
type rivalFigure struct {
	design string
	value  reports.Spread
}

// verdictOutcome is how the card does against a rival on one figure.
type verdictOutcome int

const (
	cardWins verdictOutcome = iota
	cardLoses
	cardTies
)

// outcome compares the card with a rival: a win or a loss only where
// their ranges over the seeds do not overlap.
func outcome(card, rival reports.Spread) verdictOutcome {
	switch {
	case card.Overlaps(rival):
		return cardTies
	case card.Max < rival.Min:
		return cardWins
	}
	return cardLoses
}

// clause says the card's figure against the rivals with one outcome:
// "host core-seconds per resumed turn against cpu and lmcache (10 core-us
// against 390 and 310 core-ms)", the unit after the values unless the
// format writes each value's own; "" where no rival has that outcome.
func (f verdictFigure) clause(want verdictOutcome) string {
	var names, values []string
	for _, r := range f.rivals {
		if outcome(f.card, r.value) == want {
			names, values = append(names, r.design), append(values, f.format(r.value.Mean))
		}
	}
	if len(names) == 0 {
		return ""
	}
	unit := ""
	if f.unit != "" {
		unit = " " + f.unit
	}
	return fmt.Sprintf("%s against %s (%s against %s%s)", f.what, joinWords(names), f.format(f.card.Mean), joinWords(values), unit)
}

// cardVerdict states, from the figures, where the card (named card) wins,
// where it loses and where it ties, in three sentences, each figure's
// rivals grouped by outcome; seeds is how many seeds the spreads are over.
func cardVerdict(card string, seeds int, figures []verdictFigure) string {
	var b strings.Builder
	spread := "the seeds' spread"
	if seeds == 1 {
		spread = "zero (one seed)"
	}
	for _, o := range []struct {
		outcome      verdictOutcome
		lead, absent string
	}{
		{cardWins, "Where the patent's card (%s) wins by more than %s: ", "The patent's card (%s) wins nowhere by more than %s."},
		{cardLoses, "Where it loses by more than %[2]s: ", "It loses nowhere by more than %[2]s."},
		{cardTies, "Within %[2]s: ", ""},
	} {
		var clauses []string
		for _, f := range figures {
			if c := f.clause(o.outcome); c != "" {
				clauses = append(clauses, c)
			}
		}
		if b.Len() > 0 && (len(clauses) > 0 || o.absent != "") {
			b.WriteString(" ")
		}
		switch {
		case len(clauses) > 0:
			fmt.Fprintf(&b, o.lead, card, spread)
			b.WriteString(strings.Join(clauses, "; ") + ".")
		case o.absent != "":
			fmt.Fprintf(&b, o.absent, card, spread)
		}
	}
	return b.String()
}

// verdictFigures are the figures the study judges the card on, each over
// the seeds: the resumed-turn TTFT p50 at the scenario's host load and at
// the busy-host axis's top load, the host core-seconds and host-memory
// traffic per resumed turn against the other storing designs, and the
// energy and cost per output token against every other design.
func (st *study) verdictFigures() []verdictFigure {
	all := func(d int) []int { return st.plan.designs[d] }
	figure := func(what, unit string, format func(float64) string, runs func(d int) []int, from int, f func(*reports.Summary) float64) verdictFigure {
		v := verdictFigure{what: what, unit: unit, format: format, card: st.spread(runs(fpgaDesign), f)}
		for d := from; d < len(studyDesigns); d++ {
			if d != fpgaDesign {
				v.rivals = append(v.rivals, rivalFigure{studyDesigns[d], st.spread(runs(d), f)})
			}
		}
		return v
	}
	var figures []verdictFigure
	if top := len(studyHostLoads) - 1; len(st.plan.hostLoads) > 0 && studyHostLoads[top] != st.base.CPU.Background {
		figures = append(figures,
			figure(fmt.Sprintf("resumed-turn TTFT p50 at host load %g", st.base.CPU.Background), "ms", fixed("%.0f"), all, 1, resumedP50),
			figure(fmt.Sprintf("resumed-turn TTFT p50 at host load %g", studyHostLoads[top]), "ms", fixed("%.0f"), func(d int) []int { return st.plan.hostLoads[d-1][top] }, 1, resumedP50))
	} else {
		figures = append(figures, figure("resumed-turn TTFT p50", "ms", fixed("%.0f"), all, 1, resumedP50))
	}
	return append(figures,
		figure("host core-seconds per resumed turn", "", coreSeconds, all, 1, hostCoreSPerResumedTurn),
		figure("host memory traffic per resumed turn", "", gigabytes, all, 1, hostDRAMGBPerResumedTurn),
		figure("energy per output token", "J", fixed("%.2f"), all, 0, func(s *reports.Summary) float64 { return s.Energy.JoulesPerOutputToken }),
		figure("cost per million output tokens", "USD", fixed("%.2f"), all, 0, func(s *reports.Summary) float64 { return s.Cost.USDPerMillionOutputTokens }))
}
