package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
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
	// designs are each design's run at the scenario's load, in
	// studyDesigns' order.
	designs   []pointResult
	breakEven breakEvenMap
	// saturatedAt is the first load (a multiple of the scenario's) at which
	// each design is saturated, 0 if none of studyLoads is.
	saturatedAt []float64
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
	for _, i := range plan.designs {
		st.designs = append(st.designs, results[i])
	}
	unjudged := map[int]bool{}
	for _, row := range plan.breakEven {
		for _, i := range row {
			unjudged[i] = true
		}
	}
	for d, row := range plan.loads {
		st.saturatedAt = append(st.saturatedAt, 0)
		for k, i := range row {
			unjudged[i] = studyLoads[k] != 1
			if results[i].sum.Saturated && st.saturatedAt[d] == 0 {
				st.saturatedAt[d] = studyLoads[k]
			}
		}
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

// sums are the designs' summaries at the scenario's load.
func (st *study) sums() []reports.Summary {
	var out []reports.Summary
	for _, r := range st.designs {
		out = append(out, r.sum)
	}
	return out
}

// driveWrites is the drive writes per day of a run's busiest SSD tier at
// the load kept up for good (TierSummary.SustainedDriveWritesPerDay), the
// same over the whole run, idle tail included, and that drive's rating;
// ok is false without an SSD tier.
func driveWrites(s *reports.Summary) (sustained, wholeRun, rated float64, ok bool) {
	for _, t := range s.Tiers {
		if t.Drives > 0 && (!ok || t.SustainedDriveWritesPerDay > sustained) {
			sustained, wholeRun, rated, ok = t.SustainedDriveWritesPerDay, t.DriveWritesPerDay, t.RatedDWPD, true
		}
	}
	return sustained, wholeRun, rated, ok
}

// saturationText says where a design saturates on the load curve: at the
// first load its run was saturated, or not up to the last; a design whose
// run at the scenario's load was not judged (too few sessions) is not
// judged.
func (st *study) saturationText(d int) string {
	at := st.saturatedAt[d]
	if !st.designs[d].sum.Load.Judged {
		return "not judged"
	}
	if at == 0 {
		return fmt.Sprintf("not up to %gx", studyLoads[len(studyLoads)-1])
	}
	return fmt.Sprintf("%gx", at)
}

// headline is the report's table: one row per design at the scenario's
// load.
func (st *study) headline() [][]string {
	rows := [][]string{{"design", "requests", "resumed-turn TTFT p50 (ms)", "resumed-turn TTFT p99 (ms)", "TTFT p50 (ms)", "TTFT p99 (ms)",
		"TPOT p50 (ms)", "hit ratio (tokens)", "output tokens/s, sustained", "drive writes per day, sustained (rated)", "saturates at"}}
	for d, r := range st.designs {
		s := r.sum
		dwpd := "-"
		if perDay, _, rated, ok := driveWrites(&s); ok {
			dwpd = fmt.Sprintf("%.1f (%g)", perDay, rated)
		}
		rows = append(rows, []string{s.Design, strconv.Itoa(s.RequestsCompleted), fmt.Sprintf("%.1f", s.ResumedTTFTms.P50),
			fmt.Sprintf("%.1f", s.ResumedTTFTms.P99), fmt.Sprintf("%.1f", s.TTFTms.P50), fmt.Sprintf("%.1f", s.TTFTms.P99),
			fmt.Sprintf("%.2f", s.TPOTms.P50), fmt.Sprintf("%.3f", s.HitRatioTokens), fmt.Sprintf("%.0f", s.SustainedOutputTokensPerS),
			dwpd, st.saturationText(d)})
	}
	return rows
}

// lead states the headline in words, from its figures: which storing
// design serves resumed turns fastest against recomputing them, how the
// patent's card does, whether anything is saturated, and what the
// write-through export costs the drives.
func (st *study) lead() string {
	recompute := st.designs[0].sum.ResumedTTFTms.P50
	best := 1
	for d := 2; d < len(st.designs); d++ {
		if st.designs[d].sum.ResumedTTFTms.P50 < st.designs[best].sum.ResumedTTFTms.P50 {
			best = d
		}
	}
	var b strings.Builder
	bestP50 := st.designs[best].sum.ResumedTTFTms.P50
	switch {
	case recompute == 0 || bestP50 == 0:
		b.WriteString("At this load no resumed turn lost its KV from the accelerator, so their TTFT does not tell the designs apart; the table's TTFT and hit ratio do.")
	case bestP50 < recompute:
		fmt.Fprintf(&b, "At this load, %s serves a resumed turn whose KV left the accelerator fastest: TTFT p50 %.0f ms against %.0f ms for recomputing it, %.1fx faster.",
			studyDesigns[best], bestP50, recompute, recompute/bestP50)
	default:
		fmt.Fprintf(&b, "At this load no storing design serves a resumed turn faster than recomputing it (TTFT p50 %.0f ms; the best, %s, %.0f ms).",
			recompute, studyDesigns[best], bestP50)
	}
	if p50 := st.fpga().sum.ResumedTTFTms.P50; fpgaDesign != best && recompute > 0 && p50 > 0 {
		fmt.Fprintf(&b, " The patent's card (fpga) takes %.0f ms, %.1fx %s than recomputing.", p50, ratio(recompute, p50), fasterOrSlower(p50, recompute))
	}
	var saturated []string
	for d, r := range st.designs {
		if r.sum.Saturated {
			saturated = append(saturated, studyDesigns[d])
		}
	}
	if len(saturated) == 0 {
		fmt.Fprintf(&b, " No design is saturated at this load; %s.", st.firstToSaturate())
	} else {
		fmt.Fprintf(&b, " Saturated at this load: %s (see the warning above).", strings.Join(saturated, ", "))
	}
	if perDay, wholeRun, rated, ok := driveWrites(&st.fpga().sum); ok {
		fmt.Fprintf(&b, " At this load kept up around the clock, the fpga design's write-through exports write %.1f drive writes per day to each drive, against a rating of %g (%.1f over the run, whose sessions stop arriving after %.0f s).",
			perDay, rated, wholeRun, st.fpga().sum.Load.ArrivalWindowS)
	}
	return b.String()
}

// firstToSaturate says which design saturates at the lowest load.
func (st *study) firstToSaturate() string {
	first := -1
	for d, at := range st.saturatedAt {
		if at > 0 && (first < 0 || at < st.saturatedAt[first]) {
			first = d
		}
	}
	if first < 0 {
		return fmt.Sprintf("none is up to %gx the load", studyLoads[len(studyLoads)-1])
	}
	return fmt.Sprintf("%s saturates first, at %gx the load", studyDesigns[first], st.saturatedAt[first])
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
// saturates and the break-even crossovers.
func (st *study) print(w io.Writer) {
	fmt.Fprintln(w, st.lead())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for d, r := range st.designs {
		s := r.sum
		fmt.Fprintf(tw, "%s\tresumed-turn TTFT p50 %.1f ms\tp99 %.1f ms\thit ratio %.3f\tsaturates at %s\n", s.Design,
			s.ResumedTTFTms.P50, s.ResumedTTFTms.P99, s.HitRatioTokens, st.saturationText(d))
	}
	tw.Flush()
	fmt.Fprintln(w, "break-even: the history from which each design's resumed turn beats recomputing it")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, row := range st.breakEven.crossoverTable() {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}
