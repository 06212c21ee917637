package reports

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ComparisonColumns are the header of a sweep.csv's figures (after the
// point and its grid values), and the figures of the study's
// comparison.csv (SpreadColumns).
var ComparisonColumns = []string{"design", "requests_completed", "ttft_ms_mean", "ttft_ms_p50", "ttft_ms_p90", "ttft_ms_p99",
	"tpot_ms_p50", "tpot_ms_p99", "e2e_ms_p50", "throughput_tokens_per_s", "hit_ratio_tokens",
	"prefill_tokens_computed", "prefill_tokens_reused", "storage_write_bytes", "storage_read_bytes", "sim_time_s",
	"resumed_ttft_ms_p50", "resumed_ttft_ms_p99", "kv_wait_ms_p50", "delivered_share", "saturated",
	"sustained_output_tokens_per_s", "sustained_drive_writes_per_day"}

// ComparisonRow is a summary's figures, in ComparisonColumns' order.
func ComparisonRow(s *Summary) []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	return []string{s.Design, i(int64(s.RequestsCompleted)), f(s.TTFTms.Mean), f(s.TTFTms.P50), f(s.TTFTms.P90), f(s.TTFTms.P99),
		f(s.TPOTms.P50), f(s.TPOTms.P99), f(s.E2Ems.P50), f(s.ThroughputTokensPerS), f(s.HitRatioTokens),
		i(s.PrefillTokensComputed), i(s.PrefillTokensReused), i(s.Bytes["storage_write"]), i(s.Bytes["storage_read"]), f(s.SimTimeS),
		f(s.ResumedTTFTms.P50), f(s.ResumedTTFTms.P99), f(s.KVWaitMs.P50), deliveredShare(&s.Load), strconv.FormatBool(s.Saturated),
		f(s.SustainedOutputTokensPerS), f(s.BusiestDrives().SustainedDriveWritesPerDay)}
}

// GoodputColumns follow ComparisonColumns in a table of runs with
// objectives (Summary.Goodput): a table of runs without keeps the columns
// it always had.
var GoodputColumns = []string{"goodput_requests_per_s", "goodput_share"}

// HasGoodput reports whether any of the summaries has goodput.
func HasGoodput(sums ...Summary) bool {
	return slices.ContainsFunc(sums, func(s Summary) bool { return s.Goodput != nil })
}

// ComparisonColumnsFor is ComparisonColumns, and GoodputColumns after them
// when goodput.
func ComparisonColumnsFor(goodput bool) []string {
	if !goodput {
		return ComparisonColumns
	}
	return append(slices.Clip(ComparisonColumns), GoodputColumns...)
}

// ComparisonRowFor is ComparisonRow, and the goodput's figures after it
// when goodput: empty for a run without, and the rate for a run whose load
// is not judged.
func ComparisonRowFor(s *Summary, goodput bool) []string {
	row := ComparisonRow(s)
	if !goodput {
		return row
	}
	rate, share := "", ""
	if g := s.Goodput; g != nil {
		share = strconv.FormatFloat(g.Share, 'f', 6, 64)
		if s.Load.Judged {
			rate = strconv.FormatFloat(g.RequestsPerS, 'f', 6, 64)
		}
	}
	return append(row, rate, share)
}

// BusiestDrives is the run's tier of SSDs with the most sustained drive
// writes per day (the first of equals), or the zero TierSummary (no
// Drives) for a run without one.
func (s *Summary) BusiestDrives() TierSummary {
	var busiest TierSummary
	for _, t := range s.Tiers {
		if t.Drives > 0 && (busiest.Drives == 0 || t.SustainedDriveWritesPerDay > busiest.SustainedDriveWritesPerDay) {
			busiest = t
		}
	}
	return busiest
}

// deliveredShare is the share as a number, or empty for a run not judged.
func deliveredShare(l *Load) string {
	if !l.Judged {
		return ""
	}
	return strconv.FormatFloat(l.DeliveredShare, 'f', 6, 64)
}

// Spread is a figure over several seeds' runs: their mean, least and
// greatest.
type Spread struct{ Mean, Min, Max float64 }

// SpreadOf is the spread of values (the zero Spread for none).
func SpreadOf(values []float64) Spread {
	if len(values) == 0 {
		return Spread{}
	}
	s := Spread{Min: values[0], Max: values[0]}
	sum := 0.0
	for _, v := range values {
		sum += v
		s.Min, s.Max = min(s.Min, v), max(s.Max, v)
	}
	s.Mean = min(max(sum/float64(len(values)), s.Min), s.Max) // a float sum's rounding stays inside
	return s
}

// Overlaps reports whether two spreads share a value: a difference between
// their means is then within what the seeds move them.
func (s Spread) Overlaps(o Spread) bool { return s.Min <= o.Max && o.Min <= s.Max }

// spreadFree are comparison.csv's columns that are not figures: a name and
// a yes or no, which take no least and greatest.
var spreadFree = []string{"design", "saturated"}

// SpreadColumns are the study's comparison.csv header: ComparisonColumns
// (ComparisonColumnsFor goodput), each figure followed by its least and
// greatest over the seeds (FIGURE_min, FIGURE_max).
func SpreadColumns(goodput bool) []string {
	var out []string
	for _, c := range ComparisonColumnsFor(goodput) {
		out = append(out, c)
		if !slices.Contains(spreadFree, c) {
			out = append(out, c+"_min", c+"_max")
		}
	}
	return out
}

// SpreadRow is one design's row of the study's comparison.csv from its
// seeds' summaries: each figure's mean, least and greatest, written with
// as many decimals as the seeds' own cells (a count stays whole: its mean
// is rounded); the design's name; saturated when any seed's run was; a
// figure no seed has (an unjudged run's delivered share) empty.
func SpreadRow(seeds []Summary, goodput bool) []string {
	rows := make([][]string, len(seeds))
	for i := range seeds {
		rows[i] = ComparisonRowFor(&seeds[i], goodput)
	}
	var out []string
	for c, name := range ComparisonColumnsFor(goodput) {
		switch name {
		case "design":
			out = append(out, rows[0][c])
			continue
		case "saturated":
			out = append(out, strconv.FormatBool(slices.ContainsFunc(seeds, func(s Summary) bool { return s.Saturated })))
			continue
		}
		var values []float64
		decimals := 0
		for _, r := range rows {
			v, err := strconv.ParseFloat(r[c], 64)
			if err != nil {
				continue // empty: not measured in this seed
			}
			values = append(values, v)
			if dot := strings.IndexByte(r[c], '.'); dot >= 0 {
				decimals = len(r[c]) - dot - 1
			}
		}
		if len(values) == 0 {
			out = append(out, "", "", "")
			continue
		}
		s := SpreadOf(values)
		for _, v := range []float64{s.Mean, s.Min, s.Max} {
			out = append(out, strconv.FormatFloat(v, 'f', decimals, 64))
		}
	}
	return out
}

// WriteSpreadCSV writes the study's comparison.csv: one row per design,
// over its seeds' summaries (SpreadRow), with the header; the goodput's
// columns when a run has goodput.
func WriteSpreadCSV(w io.Writer, designs [][]Summary) error {
	cw := csv.NewWriter(w)
	goodput := HasGoodput(slices.Concat(designs...)...)
	if err := cw.Write(SpreadColumns(goodput)); err != nil {
		return err
	}
	for _, seeds := range designs {
		if err := cw.Write(SpreadRow(seeds, goodput)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
