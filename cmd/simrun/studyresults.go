package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/scenario"
)

// study is the default study's results, read from its runs.
type study struct {
	base    *scenario.Loaded
	plan    studyPlan
	results []pointResult
	// designs are each design's run at the scenario's load on the first
	// seed (the one whose outputs are written), in studyDesigns' order.
	designs   []pointResult
	breakEven breakEvenMap
	// saturatedFrom is the index in studyLoads of the first load at which
	// a run of each design (on any seed) is saturated, -1 if none is.
	saturatedFrom []int
	// warnings name the saturated runs the study's figures stand on (the
	// load curve's runs past 1x are expected to saturate: they are marked
	// on it instead; the break-even map's runs serve one turn at a time,
	// and their TTFT grows with the history by design, so they are not
	// judged).
	warnings []string
}

// newStudy reads the study's runs.
func newStudy(base *scenario.Loaded, plan studyPlan, results []pointResult) (*study, error) {
	st := &study{base: base, plan: plan, results: results}
	for _, seeds := range plan.designs {
		st.designs = append(st.designs, results[seeds[0]])
	}
	unjudged := map[int]bool{}
	for _, row := range plan.breakEven {
		for _, i := range row {
			unjudged[i] = true
		}
	}
	for _, row := range plan.loads {
		from := -1
		for k, seeds := range row {
			for _, i := range seeds {
				unjudged[i] = studyLoads[k] != 1
				if results[i].sum.Saturated && from < 0 {
					from = k
				}
			}
		}
		st.saturatedFrom = append(st.saturatedFrom, from)
	}
	for i, r := range results {
		if r.sum.Saturated && !unjudged[i] {
			st.warnings = append(st.warnings, fmt.Sprintf("%s is saturated: %s", plan.points[i].label, r.sum.Load.Why))
		}
	}
	var err error
	st.breakEven, err = newBreakEvenMap(base, plan, results)
	return st, err
}

// fpga is the patent's design's run at the scenario's load (the one the
// study observes).
func (st *study) fpga() *pointResult { return &st.designs[fpgaDesign] }

// fpgaDesign is the patent's design's place in studyDesigns.
var fpgaDesign = slices.Index(studyDesigns, "fpga")

// sums are the designs' summaries at the scenario's load, one per seed.
func (st *study) sums() [][]reports.Summary {
	var out [][]reports.Summary
	for _, seeds := range st.plan.designs {
		var sums []reports.Summary
		for _, i := range seeds {
			sums = append(sums, st.results[i].sum)
		}
		out = append(out, sums)
	}
	return out
}

// spread is a figure's spread over the runs of one point, one per seed.
func (st *study) spread(runs []int, figure func(*reports.Summary) float64) reports.Spread {
	var values []float64
	for _, i := range runs {
		values = append(values, figure(&st.results[i].sum))
	}
	return reports.SpreadOf(values)
}

// resumedP50 is a run's resumed-turn TTFT p50 (ms).
func resumedP50(s *reports.Summary) float64 { return s.ResumedTTFTms.P50 }

// driveWrites is the drive writes per day of a run's busiest SSD tier at
// the load kept up for good (TierSummary.SustainedDriveWritesPerDay), the
// same over the whole run, idle tail included, and that drive's rating;
// ok is false without an SSD tier.
func driveWrites(s *reports.Summary) (sustained, wholeRun, rated float64, ok bool) {
	t := s.BusiestDrives()
	return t.SustainedDriveWritesPerDay, t.DriveWritesPerDay, t.RatedDWPD, t.Drives > 0
}

// sustainedDriveWrites is a run's busiest drives' sustained drive writes
// per day, as a figure over the seeds.
func sustainedDriveWrites(s *reports.Summary) float64 {
	return s.BusiestDrives().SustainedDriveWritesPerDay
}

// saturationText says where a design saturates on the load curve:
// between the last load at which no seed's run was saturated and the first
// at which one was (the curve measures its loads only), at or below the
// first load, or not up to the last; a design whose run at the scenario's
// load was not judged (too few sessions) is not judged.
func (st *study) saturationText(d int) string {
	k := st.saturatedFrom[d]
	switch {
	case !st.designs[d].sum.Load.Judged:
		return "not judged"
	case k < 0:
		return fmt.Sprintf("not up to %gx", studyLoads[len(studyLoads)-1])
	case k == 0:
		return fmt.Sprintf("at or below %gx", studyLoads[0])
	}
	return fmt.Sprintf("between %gx and %gx", studyLoads[k-1], studyLoads[k])
}

// spreadCell writes a figure as its mean, then its least and greatest over
// the seeds where they differ: "168.5 (160.2-175.3)".
func spreadCell(s reports.Spread, format string) string {
	if s.Min == s.Max {
		return fmt.Sprintf(format, s.Mean)
	}
	return fmt.Sprintf(format+" ("+format+"-"+format+")", s.Mean, s.Min, s.Max)
}

// headline is the report's table: one row per design at the scenario's
// load, each figure its mean over the seeds with their least and greatest.
func (st *study) headline() [][]string {
	rows := [][]string{{"design", "requests", "resumed turns", "resumed-turn TTFT p50 (ms)", "resumed-turn TTFT p99 (ms)", "TTFT p50 (ms)", "TTFT p99 (ms)",
		"TPOT p50 (ms)", "hit ratio (tokens)", "output tokens/s, sustained", "drive writes per day, sustained (rated)", "saturates"}}
	goodput := reports.HasGoodput(slices.Concat(st.sums()...)...)
	if goodput {
		rows[0] = append(rows[0], "goodput (good requests/s)", "SLO attainment")
	}
	for d, seeds := range st.plan.designs {
		figure := func(format string, f func(*reports.Summary) float64) string {
			return spreadCell(st.spread(seeds, f), format)
		}
		dwpd := "-"
		if _, _, rated, ok := driveWrites(&st.designs[d].sum); ok {
			dwpd = fmt.Sprintf("%s (%g)", figure("%.1f", sustainedDriveWrites), rated)
		}
		rows = append(rows, []string{studyDesigns[d],
			figure("%.0f", func(s *reports.Summary) float64 { return float64(s.RequestsCompleted) }),
			figure("%.0f", func(s *reports.Summary) float64 { return float64(s.ResumedTurns) }),
			figure("%.1f", resumedP50),
			figure("%.1f", func(s *reports.Summary) float64 { return s.ResumedTTFTms.P99 }),
			figure("%.1f", func(s *reports.Summary) float64 { return s.TTFTms.P50 }),
			figure("%.1f", func(s *reports.Summary) float64 { return s.TTFTms.P99 }),
			figure("%.2f", func(s *reports.Summary) float64 { return s.TPOTms.P50 }),
			figure("%.3f", func(s *reports.Summary) float64 { return s.HitRatioTokens }),
			figure("%.0f", func(s *reports.Summary) float64 { return s.SustainedOutputTokensPerS }),
			dwpd, st.saturationText(d)})
		if goodput {
			rows[d+1] = append(rows[d+1], figure("%.3f", goodputRate), figure("%.3f", goodputShare))
		}
	}
	return rows
}

// goodputRate and goodputShare are a run's goodput (reports.Goodput), 0
// for a run without objectives.
func goodputRate(s *reports.Summary) float64 {
	if s.Goodput == nil {
		return 0
	}
	return s.Goodput.RequestsPerS
}

func goodputShare(s *reports.Summary) float64 {
	if s.Goodput == nil {
		return 0
	}
	return s.Goodput.Share
}

// seedsWords says what a spread is over: "over 3 seeds" (nothing for one).
func (st *study) seedsWords() string {
	if len(st.plan.seeds) == 1 {
		return ""
	}
	return fmt.Sprintf(" over %d seeds", len(st.plan.seeds))
}

// p50Words is a design's resumed-turn TTFT p50 in words: its mean, its
// least and greatest over the seeds, and how many resumed turns it is the
// median of: "69 ms (66-72, p50 of 405-415 resumed turns)".
func (st *study) p50Words(d int) string {
	seeds := st.plan.designs[d]
	p50 := st.spread(seeds, resumedP50)
	count := st.spread(seeds, func(s *reports.Summary) float64 { return float64(s.ResumedTurns) })
	turns := fmt.Sprintf("%.0f-%.0f", count.Min, count.Max)
	if count.Min == count.Max {
		turns = fmt.Sprintf("%.0f", count.Min)
	}
	if p50.Min == p50.Max {
		return fmt.Sprintf("%.0f ms (p50 of %s resumed turns)", p50.Mean, turns)
	}
	return fmt.Sprintf("%.0f ms (%.0f-%.0f, p50 of %s resumed turns)", p50.Mean, p50.Min, p50.Max, turns)
}

// lead states the headline in words, from its figures, and of their
// differences only those larger than the seeds' spread: which storing
// designs serve resumed turns fastest against recomputing them, how the
// patent's card does, whether anything is saturated, what the
// write-through export costs the drives, and where the card wins and
// loses (cardVerdict).
func (st *study) lead() string {
	p50 := make([]reports.Spread, len(studyDesigns))
	for d, seeds := range st.plan.designs {
		p50[d] = st.spread(seeds, resumedP50)
	}
	recompute, best := p50[0], 1
	for d := 2; d < len(p50); d++ {
		if p50[d].Mean < p50[best].Mean {
			best = d
		}
	}
	var fastest []string // the storing designs the best cannot be told apart from
	for d := 1; d < len(p50); d++ {
		if d == best || p50[d].Overlaps(p50[best]) {
			fastest = append(fastest, studyDesigns[d])
		}
	}
	var b strings.Builder
	b.WriteString("At this load")
	if len(st.plan.seeds) > 1 {
		fmt.Fprintf(&b, " (means%s, with their least and greatest)", st.seedsWords())
	}
	b.WriteString(",")
	switch {
	case recompute.Mean == 0 || p50[best].Mean == 0:
		b.Reset()
		b.WriteString("At this load no resumed turn lost its KV from the accelerator, so their TTFT does not tell the designs apart; the table's TTFT and hit ratio do.")
	case p50[best].Max < recompute.Min:
		who := studyDesigns[best] + " serves"
		if len(fastest) > 1 {
			who = joinWords(fastest) + " serve (within the seeds' spread of each other)"
		}
		fmt.Fprintf(&b, " %s a resumed turn whose KV left the accelerator fastest: TTFT p50 %s against %s for recomputing it, %.1fx faster.",
			who, st.p50Words(best), st.p50Words(0), recompute.Mean/p50[best].Mean)
	case p50[best].Overlaps(recompute):
		fmt.Fprintf(&b, " no storing design serves a resumed turn faster than recomputing it by more than the seeds' spread (TTFT p50 %s; the best, %s, %s).",
			st.p50Words(0), studyDesigns[best], st.p50Words(best))
	default:
		fmt.Fprintf(&b, " no storing design serves a resumed turn faster than recomputing it (TTFT p50 %s; the best, %s, %s).",
			st.p50Words(0), studyDesigns[best], st.p50Words(best))
	}
	if fpga := p50[fpgaDesign]; !slices.Contains(fastest, "fpga") && recompute.Mean > 0 && fpga.Mean > 0 {
		if fpga.Overlaps(recompute) {
			fmt.Fprintf(&b, " The patent's card (fpga) takes %s, within the seeds' spread of recomputing.", st.p50Words(fpgaDesign))
		} else {
			fmt.Fprintf(&b, " The patent's card (fpga) takes %s, %.1fx %s than recomputing.", st.p50Words(fpgaDesign), ratio(recompute.Mean, fpga.Mean), fasterOrSlower(fpga.Mean, recompute.Mean))
		}
	}
	var saturated []string
	for d, seeds := range st.plan.designs {
		if slices.ContainsFunc(seeds, func(i int) bool { return st.results[i].sum.Saturated }) {
			saturated = append(saturated, studyDesigns[d])
		}
	}
	if len(saturated) == 0 {
		fmt.Fprintf(&b, " No design is saturated at this load; %s.", st.firstToSaturate())
	} else {
		fmt.Fprintf(&b, " Saturated at this load: %s (see the warning above).", strings.Join(saturated, ", "))
	}
	if _, wholeRun, rated, ok := driveWrites(&st.fpga().sum); ok {
		fmt.Fprintf(&b, " At this load kept up around the clock, the fpga design's write-through exports write %s drive writes per day to each drive, against a rating of %g (%.1f over the first seed's run, whose sessions stop arriving after %.0f s).",
			spreadCell(st.spread(st.plan.designs[fpgaDesign], sustainedDriveWrites), "%.1f"), rated, wholeRun, st.fpga().sum.Load.ArrivalWindowS)
	}
	b.WriteString(" " + cardVerdict("fpga", len(st.plan.seeds), st.verdictFigures()))
	return b.String()
}

// firstToSaturate says which design saturates at the lowest load.
func (st *study) firstToSaturate() string {
	first := -1
	for d, k := range st.saturatedFrom {
		if k >= 0 && (first < 0 || k < st.saturatedFrom[first]) {
			first = d
		}
	}
	if first < 0 {
		return fmt.Sprintf("none is up to %gx the load", studyLoads[len(studyLoads)-1])
	}
	return fmt.Sprintf("%s saturates first, %s the load", studyDesigns[first], st.saturationText(first))
}

// ratio is how many times faster (or slower) a is than b, at least 1.
func ratio(a, b float64) float64 { return math.Max(a/b, b/a) }

func fasterOrSlower(mine, other float64) string {
	if mine < other {
		return "faster"
	}
	return "slower"
}

// print writes the study's findings: the lead, the designs, where each
// saturates, the break-even crossovers and the card against the others.
func (st *study) print(w io.Writer) {
	fmt.Fprintln(w, st.lead())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for d, seeds := range st.plan.designs {
		fmt.Fprintf(tw, "%s\tresumed-turn TTFT p50 %s\tp99 %s ms\thit ratio %s\tsaturates %s\n", studyDesigns[d], st.p50Words(d),
			spreadCell(st.spread(seeds, func(s *reports.Summary) float64 { return s.ResumedTTFTms.P99 }), "%.1f"),
			spreadCell(st.spread(seeds, func(s *reports.Summary) float64 { return s.HitRatioTokens }), "%.3f"), st.saturationText(d))
	}
	tw.Flush()
	fmt.Fprintln(w, "break-even: the history from which each design's resumed turn beats recomputing it")
	printTable(w, st.breakEven.crossoverTable())
	fmt.Fprintln(w, "break-even, the patent's card (fpga) against each design: the histories (tokens) at which its resumed turn is faster, slower or within 1 %")
	printTable(w, st.breakEven.cardTable())
}

// printTable writes rows as aligned columns.
func printTable(w io.Writer, rows [][]string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}
