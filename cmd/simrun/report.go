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

	"gonum.org/v1/plot"

	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/scenario"
)

// sweepMetrics are the sweep plots: a sweep.csv column and its axis label.
var sweepMetrics = []struct{ column, label string }{
	{"ttft_ms_p50", "TTFT p50 (ms)"}, {"ttft_ms_p99", "TTFT p99 (ms)"}, {"tpot_ms_p50", "TPOT p50 (ms)"},
	{"throughput_tokens_per_s", "output tokens/s"}, {"hit_ratio_tokens", "share of prompt tokens reused"},
	{"resumed_ttft_ms_p50", "resumed turns' TTFT p50 (ms)"}, {"resumed_ttft_ms_p99", "resumed turns' TTFT p99 (ms)"},
	{"kv_wait_ms_p50", "resumed turns' wait for KV p50 (ms)"}, {"storage_read_bytes", "bytes read from the store's tiers"},
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
	page := reports.Page{Title: "kvcosim sweep: " + strings.Join(m.Keys, " x "), Subtitle: fmt.Sprintf("%d points; %s", m.Points, m.Scenario),
		Version: version(), Warnings: sweepWarnings(m.Keys, rows), Headline: rows, Files: []string{"sweep.csv", "sweep.json"}}
	var plots []*plot.Plot
	for _, metric := range sweepMetrics { // every plot before any file: a bad cell writes nothing
		p, err := sweepPlot(m.Keys, m.Scenario, rows, metric.column, metric.label)
		if err != nil {
			fmt.Fprintf(stderr, "simrun report: %s: %v\n", *in, err)
			return 2
		}
		plots = append(plots, p)
		page.Figures = append(page.Figures, reports.Figure{File: "sweep_" + metric.column + ".svg", Caption: fmt.Sprintf("%s against %s.", metric.label, m.Keys[0])})
	}
	if err := writeReport(*in, &page, plots); err != nil {
		fmt.Fprintf(stderr, "simrun report: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(*in, "report.html"))
	return 0
}

// writeReport writes the sweep's plots and report.html into dir, whole or
// not at all: a write that fails removes the report's files (until
// 2026-11-27 a sweep.csv with a NaN cell left 8 plots and no report).
func writeReport(dir string, page *reports.Page, plots []*plot.Plot) error {
	err := func() error {
		for i, p := range plots {
			if err := reports.SavePlot(p, dir, "sweep_"+sweepMetrics[i].column); err != nil {
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
		for _, metric := range sweepMetrics {
			for _, ext := range []string{".png", ".svg"} {
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
func sweepPlot(keys []string, scenarioLine string, rows [][]string, column, label string) (*plot.Plot, error) {
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
		series[i].X, series[i].Y = append(series[i].X, xValue[r[1]]), append(series[i].Y, y)
	}
	xLabel := keys[0]
	if sizes {
		xLabel += " (GB)"
	}
	p, err := reports.LinePlot(title(fmt.Sprintf("%s against %s", label, keys[0]), scenarioLine), xLabel, label, series)
	if err != nil {
		return nil, err
	}
	if !numeric {
		return categoricalTicks(p, xs), nil
	}
	if lo, hi := slices.Min(slices.Collect(maps.Values(xValue))), slices.Max(slices.Collect(maps.Values(xValue))); lo > 0 && hi/lo >= 10 {
		reports.LogX(p)
		p.X.Label.Text += ", log scale"
	}
	return p, nil
}

// categoricalTicks labels x positions 0, 1, ... with the key's values.
func categoricalTicks(p *plot.Plot, xs []string) *plot.Plot {
	ticks := make([]plot.Tick, len(xs))
	for i, x := range xs {
		ticks[i] = plot.Tick{Value: float64(i), Label: x}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	return p
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
