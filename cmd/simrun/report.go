package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/scenario"
)

// sweepMetric is a sweep plot: a sweep.csv column and its axis label.
type sweepMetric struct{ column, label string }

// sweepMetrics are the sweep plots of every sweep.
var sweepMetrics = []sweepMetric{
	{"ttft_ms_p50", "TTFT p50 (ms)"}, {"ttft_ms_p99", "TTFT p99 (ms)"}, {"tpot_ms_p50", "TPOT p50 (ms)"},
	{"sustained_output_tokens_per_s", "sustained output tokens/s"}, {"hit_ratio_tokens", "share of prompt tokens reused"},
	{"resumed_ttft_ms_p50", "resumed turns' TTFT p50 (ms)"}, {"resumed_ttft_ms_p99", "resumed turns' TTFT p99 (ms)"},
	{"kv_wait_ms_p50", "resumed turns' wait for KV p50 (ms)"}, {"storage_read_bytes", "GB read from the store's tiers"},
	{"sustained_drive_writes_per_day", "sustained drive writes per day (busiest drives)"},
}

// goodputMetrics are the sweep plots of a sweep with objectives.
var goodputMetrics = []sweepMetric{
	{"goodput_requests_per_s", "goodput (good requests/s)"}, {"goodput_share", "share of requests meeting their objectives"},
}

// reportMetrics are the plots of a sweep.csv: sweepMetrics, and each
// goodput column it has with a figure for every point (a point whose
// load was not judged has no rate).
func reportMetrics(rows [][]string) []sweepMetric {
	out := slices.Clone(sweepMetrics)
	for _, m := range goodputMetrics {
		col := slices.Index(rows[0], m.column)
		if col >= 0 && !slices.ContainsFunc(rows[1:], func(r []string) bool { return col >= len(r) || r[col] == "" }) {
			out = append(out, m)
		}
	}
	return out
}

// runReport draws a sweep's plots from its sweep.csv: each metric against
// the grid's first key, one line per combination of the other keys.
func runReport(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("report", stderr)
	in := fs.String("i", "", "a sweep's output folder")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *in == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: simrun report -i DIR")
		return 2
	}
	m, rows, err := readSweep(*in)
	if err != nil {
		fmt.Fprintf(stderr, "simrun report: %v\n", err)
		return 2
	}
	page := reports.Page{Title: "kvcosim sweep: " + strings.Join(m.Keys, " x "),
		Subtitle: fmt.Sprintf("%d points; the base scenario: %s (%s take the values in the table)", m.Points, m.Scenario, strings.Join(m.Keys, ", ")),
		Version:  version(), Warnings: sweepWarnings(m.Keys, rows), Headline: readableTable(rows, len(m.Keys)), Files: []string{"sweep.csv", "sweep.json"}}
	var plots []*reports.Chart
	metrics := reportMetrics(rows)
	for _, metric := range metrics { // every plot before any file: a bad cell writes nothing
		p, err := sweepPlot(m.Keys, m.Scenario, rows, metric.column, metric.label)
		if err != nil {
			fmt.Fprintf(stderr, "simrun report: %s: %v\n", *in, err)
			return 2
		}
		name := "sweep_" + metric.column
		plots = append(plots, p)
		page.Figures = append(page.Figures, reports.Figure{File: name + ".svg", Caption: fmt.Sprintf("%s against %s.", metric.label, m.Keys[0]),
			Data: name + ".csv"})
	}
	if err := writeReport(*in, &page, plots, metrics); err != nil {
		fmt.Fprintf(stderr, "simrun report: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(*in, "report.html"))
	return 0
}

// tableColumns are the sweep.csv figures the report's table shows, in
// this order, where the file has them: enough to read a point at a glance
// and narrow enough to fit the page; sweep.csv, linked below the table,
// has every column.
var tableColumns = []string{"design", "requests_completed", "ttft_ms_p50", "ttft_ms_p99", "tpot_ms_p50",
	"resumed_ttft_ms_p50", "hit_ratio_tokens", "sustained_output_tokens_per_s", "sustained_drive_writes_per_day",
	"storage_read_bytes", "goodput_requests_per_s", "goodput_share", "saturated"}

// readableTable is sweep.csv as the page shows it: the point and the grid's
// values as they are, then tableColumns' figures with the digits they need
// (bytes in GB).
func readableTable(rows [][]string, keys int) [][]string {
	shown := []int{}
	for c := range 1 + keys {
		shown = append(shown, c)
	}
	for _, name := range tableColumns {
		if c := slices.Index(rows[0], name); c > keys {
			shown = append(shown, c)
		}
	}
	var out [][]string
	for i, r := range rows {
		row := make([]string, 0, len(shown))
		for _, c := range shown {
			row = append(row, readableCell(rows[0][c], r[c], i == 0, c > keys))
		}
		out = append(out, row)
	}
	return out
}

// readableCell is one cell of the report's table: a figure's header
// spaced, with its unit, its value with the digits it needs (bytes in GB); the grid's
// values as they are.
func readableCell(column, cell string, header, figure bool) string {
	switch {
	case !figure:
		return cell
	case header && bytesColumn(column):
		return strings.ReplaceAll(strings.TrimSuffix(column, "_bytes"), "_", " ") + " (GB)"
	case header: // spaced, so that a narrow column wraps its name
		return strings.ReplaceAll(cell, "_", " ")
	}
	v, err := strconv.ParseFloat(cell, 64)
	if err != nil {
		return cell
	}
	if bytesColumn(column) {
		v /= 1e9
	}
	return readableNumber(v)
}

// bytesColumn reports whether a sweep.csv column counts bytes: the page's
// table and plots show it in GB.
func bytesColumn(name string) bool { return strings.HasSuffix(name, "_bytes") }

// readableNumber writes v with about four significant digits, whole
// numbers whole.
func readableNumber(v float64) string {
	switch a := math.Abs(v); {
	case v == math.Trunc(v) && a < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// writeReport writes the sweep's plots and report.html into dir, whole or
// not at all: a write that fails removes the report's files (until
// 2026-11-27 a sweep.csv with a NaN cell left 8 plots and no report).
func writeReport(dir string, page *reports.Page, plots []*reports.Chart, metrics []sweepMetric) error {
	err := func() error {
		for i, p := range plots {
			if err := reports.SavePlot(p, dir, "sweep_"+metrics[i].column); err != nil {
				return err
			}
		}
		var html bytes.Buffer
		if err := page.WriteHTML(&html); err != nil {
			return err
		}
		return reports.WriteBytes(filepath.Join(dir, "report.html"), html.Bytes())
	}()
	if err != nil {
		for _, metric := range metrics {
			for _, ext := range []string{".png", ".svg", ".csv"} {
				_ = os.Remove(filepath.Join(dir, "sweep_"+metric.column+ext))
			}
		}
		_ = os.Remove(filepath.Join(dir, "report.html"))
	}
	return err
}

// sweepWarnings names the points whose runs were saturated (none in a
// sweep written before the column existed).
func sweepWarnings(keys []string, rows [][]string) []string {
	col := slices.Index(rows[0], "saturated")
	var out []string
	for _, r := range rows[1:] {
		if col >= 0 && col < len(r) && r[col] == "true" {
			var kv []string
			for i, k := range keys {
				kv = append(kv, k+"="+r[1+i])
			}
			out = append(out, fmt.Sprintf("point %s (%s)", r[0], strings.Join(kv, ", ")))
		}
	}
	return out
}

// sweepPlot is one metric against the first key: numeric when every value
// of the key reads as a number or a size, else one tick per value.
func sweepPlot(keys []string, scenarioLine string, rows [][]string, column, label string) (*reports.Chart, error) {
	col := slices.Index(rows[0], column)
	if col < 0 {
		return nil, fmt.Errorf("sweep.csv has no column %s", column)
	}
	var xs []string
	for _, r := range rows[1:] {
		if !slices.Contains(xs, r[1]) {
			xs = append(xs, r[1])
		}
	}
	xValue, numeric, sizes := axisValues(xs)
	var series []reports.Series
	for _, r := range rows[1:] {
		name := strings.Join(r[2:1+len(keys)], ", ")
		if name == "" {
			name = column
		}
		i := slices.IndexFunc(series, func(s reports.Series) bool { return s.Name == name })
		if i < 0 {
			series, i = append(series, reports.Series{Name: name}), len(series)
		}
		y, err := strconv.ParseFloat(r[col], 64)
		if err != nil || math.IsNaN(y) || math.IsInf(y, 0) {
			return nil, fmt.Errorf("sweep.csv point %s: %s = %q: want a finite number", r[0], column, r[col])
		}
		if bytesColumn(column) {
			y /= 1e9
		}
		series[i].X, series[i].Y = append(series[i].X, xValue[r[1]]), append(series[i].Y, y)
	}
	xLabel := keys[0]
	if sizes {
		xLabel += " (GB)"
	}
	p, err := reports.LinePlot(title(fmt.Sprintf("%s against %s", label, keys[0]), sweepScenarioLine(keys, scenarioLine)), xLabel, label, series)
	if err != nil {
		return nil, err
	}
	if ys := p.Data()[1:]; flatFromZero(ys) {
		p.Y.Min = 0 // a spread of a few hundredths of the values is no change: do not zoom into it
	}
	if !numeric {
		p.NominalX(xs...)
		return p, nil
	}
	if lo, hi := slices.Min(slices.Collect(maps.Values(xValue))), slices.Max(slices.Collect(maps.Values(xValue))); lo > 0 && hi/lo >= 10 {
		reports.LogX(p.Plot)
		p.X.Label.Text += ", log scale"
	}
	return p, nil
}

// sweepScenarioLine is a sweep plot's scenario line: the base scenario,
// whose values of the grid's keys (a size, a scheme it names) the plot
// replaces with the first key's on the x axis and the others' in the
// legend.
func sweepScenarioLine(keys []string, base string) string {
	varied := keys[0] + " on the x axis"
	if len(keys) > 1 {
		varied += ", " + strings.Join(keys[1:], ", ") + " in the legend"
	}
	return "the base scenario: " + base + "; " + varied
}

// flatFromZero reports whether the rows' values (their last column) are
// positive and within 5 % of one another.
func flatFromZero(rows [][]string) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		v, err := strconv.ParseFloat(r[len(r)-1], 64)
		if err != nil || !(v > 0) {
			return false
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	return hi-lo <= 0.05*hi
}

// axisValues maps a key's values to x: their numbers (sizes in GB), or
// their positions when one is not a number.
func axisValues(xs []string) (out map[string]float64, numeric, sizes bool) {
	out = map[string]float64{}
	for _, x := range xs {
		v, err := strconv.ParseFloat(x, 64)
		if err != nil {
			n, serr := scenario.ParseSize(x)
			if serr != nil {
				break
			}
			v, sizes = float64(n)/1e9, true
		}
		out[x] = v
	}
	if len(out) == len(xs) {
		return out, true, sizes
	}
	for i, x := range xs {
		out[x] = float64(i)
	}
	return out, false, false
}
