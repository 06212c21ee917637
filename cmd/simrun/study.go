package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/plot"

	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/scenario"
)

// studyDesigns are the designs the default study compares: the patent's
// and its two baselines, fpga last (its run is the one observed). The
// software designs of the state of the art have their own study
// (docs/examples/state-of-the-art.yaml).
var studyDesigns = []string{"recompute", "cpu", "fpga"}

// studyLoads are the offered loads of the study's latency and throughput
// curves, as multiples of the scenario's arrival rate.
var studyLoads = []float64{0.5, 1, 2, 4}

// studyCapacities are the store sizes of the hit-ratio curve.
var studyCapacities = []string{"32GB", "64GB", "128GB", "256GB", "512GB", "2TB"}

// runStudy is plain simrun: the scenario (the embedded default unless -c)
// for each design, its load and capacity curves, the plots and the report.
func runStudy(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("simrun", stderr)
	cfg := fs.String("c", "", "scenario file (default: the embedded default scenario)")
	out := fs.String("o", "out", "output folder")
	jobs := fs.Int("j", runtime.NumCPU(), "runs at once")
	force := fs.Bool("force", false, "write into an existing folder that is not a kvcosim output")
	var sets setFlags
	fs.Var(&sets, "set", "override a key: --set dotted.key=value (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "simrun: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if err := checkJobs(*jobs); err != nil {
		fmt.Fprintf(stderr, "simrun: %v\n", err)
		return 2
	}
	base, err := scenario.Load(*cfg, sets)
	if err != nil {
		fmt.Fprintf(stderr, "simrun: %v\n", err)
		return 2
	}
	undo, err := prepareOutput(*out, *force)
	if err != nil {
		fmt.Fprintf(stderr, "simrun: %v\n", err)
		return 2
	}
	start := time.Now()
	points := studyPoints(base, sets, *out)
	results := runPoints(*cfg, points, *jobs, nil)
	for i, r := range results {
		if r.err == nil {
			continue
		}
		fmt.Fprintf(stderr, "simrun: point %v: %v\n", points[i].sets, r.err)
		undo()
		if r.badSpec {
			return 2 // bad input
		}
		return 1 // a run stopped on an invariant
	}
	if err := writeStudy(*out, base, results); err != nil {
		undo()
		fmt.Fprintf(stderr, "simrun: %v\n", err)
		return 2
	}
	for _, r := range results[:len(studyDesigns)] {
		fmt.Fprintf(stdout, "%-9s TTFT mean %7.1f ms  p99 %7.1f ms  hit ratio %.3f\n", r.sum.Design, r.sum.TTFTms.Mean, r.sum.TTFTms.P99, r.sum.HitRatioTokens)
	}
	fmt.Fprintf(stdout, "%d runs in %.1f s; report: %s\n", len(points), time.Since(start).Seconds(), filepath.Join(*out, "report.html"))
	return 0
}

// studyPoints are the three designs (with their outputs), each at every
// offered load, and the fpga design at every store size.
func studyPoints(base *scenario.Loaded, sets []string, out string) []point {
	var points []point
	for _, d := range studyDesigns {
		points = append(points, point{sets: append(slices.Clone(sets), "system.design="+d), dir: filepath.Join(out, d), observe: d == "fpga"})
	}
	for _, d := range studyDesigns {
		for _, x := range studyLoads {
			if x != 1 {
				points = append(points, point{sets: append(append(slices.Clone(sets), "system.design="+d), loadSets(base, x)...)})
			}
		}
	}
	for _, c := range studyCapacities {
		points = append(points, point{sets: append(slices.Clone(sets), "system.design=fpga", "storage.capacity="+c)})
	}
	return points
}

// loadSets scale the offered load by x over the same stretch of time: x
// times the sessions at x times the rate (synthetic), or a trace's arrivals
// x times as dense.
func loadSets(l *scenario.Loaded, x float64) []string {
	if l.Workload.Kind == "synthetic" {
		return []string{"workload.session_rate_per_s=" + strconv.FormatFloat(l.Workload.SessionRatePerS*x, 'g', -1, 64),
			"workload.sessions=" + strconv.Itoa(max(1, int(math.Round(float64(l.Workload.Sessions)*x))))}
	}
	return []string{"workload.time_scale=" + strconv.FormatFloat(l.Workload.TimeScale/x, 'g', -1, 64)}
}

// writeStudy writes comparison.csv, the plots and report.html.
func writeStudy(out string, base *scenario.Loaded, results []pointResult) error {
	designs := results[:len(studyDesigns)]
	var sums []reports.Summary
	for _, r := range designs {
		sums = append(sums, r.sum)
	}
	var csv bytes.Buffer
	if err := reports.WriteComparisonCSV(&csv, sums); err != nil {
		return err
	}
	if err := reports.WriteBytes(filepath.Join(out, "comparison.csv"), csv.Bytes()); err != nil {
		return err
	}
	figures, err := studyPlots(out, base.Describe(), results)
	if err != nil {
		return err
	}
	page := reports.Page{Title: "kvcosim: what the KV-cache store buys, design by design", Subtitle: base.Describe(),
		Version: version(), Headline: headline(sums), Figures: figures, Scenario: string(designs[len(designs)-1].loaded.YAML()),
		Files: []string{"comparison.csv", "recompute/summary.json", "recompute/requests.csv", "cpu/summary.json", "cpu/requests.csv",
			"fpga/summary.json", "fpga/requests.csv", "fpga/scenario.yaml"}}
	var html bytes.Buffer
	if err := page.WriteHTML(&html); err != nil {
		return err
	}
	if err := reports.WriteBytes(filepath.Join(out, "report.html"), html.Bytes()); err != nil {
		return err
	}
	return nil
}

// headline is the report's table: one row per design.
func headline(sums []reports.Summary) [][]string {
	rows := [][]string{{"design", "requests", "TTFT mean (ms)", "TTFT p50 (ms)", "TTFT p99 (ms)", "TPOT p50 (ms)",
		"hit ratio (tokens)", "prefill tokens computed", "output tokens/s"}}
	for _, s := range sums {
		rows = append(rows, []string{s.Design, strconv.Itoa(s.RequestsCompleted), fmt.Sprintf("%.1f", s.TTFTms.Mean),
			fmt.Sprintf("%.1f", s.TTFTms.P50), fmt.Sprintf("%.1f", s.TTFTms.P99), fmt.Sprintf("%.2f", s.TPOTms.P50),
			fmt.Sprintf("%.3f", s.HitRatioTokens), strconv.FormatInt(s.PrefillTokensComputed, 10), fmt.Sprintf("%.0f", s.ThroughputTokensPerS)})
	}
	return rows
}

// studyPlots draws the study's figures and returns them in page order.
func studyPlots(out, scenarioLine string, results []pointResult) ([]reports.Figure, error) {
	var figures []reports.Figure
	add := func(name, caption string, p *plot.Plot, err error) error {
		if err != nil {
			return err
		}
		figures = append(figures, reports.Figure{File: name + ".svg", Caption: caption})
		return reports.SavePlot(p, out, name)
	}
	designs := results[:len(studyDesigns)]
	if err := add(ttftCDF(scenarioLine, designs)); err != nil {
		return nil, err
	}
	if err := add(ttftBreakdown(scenarioLine, designs)); err != nil {
		return nil, err
	}
	if err := add(loadCurve(scenarioLine, results, "throughput_vs_load", "Output throughput against offered load",
		"output tokens/s", func(s *reports.Summary) float64 { return s.ThroughputTokensPerS })); err != nil {
		return nil, err
	}
	if err := add(capacityCurve(scenarioLine, results)); err != nil {
		return nil, err
	}
	panels := []struct {
		name, caption string
		draw          func(string, []pointResult) ([]*plot.Plot, error)
		inches        float64
	}{
		{"latency_vs_load", "TTFT p50 and p99 and TPOT p50 against the offered load (x the scenario's arrival rate), per design.", latencyPanels, 2.6},
		{"storage_levels", "The fpga design's store over time: the bytes it holds and the levels of the free-address FIFOs (claim 10): FIFO 1 holds regions idle longer than the preset time T, FIFO 2 regions freed within T.", levelPanels, 2.6},
		{"session_timeline", "One session through the CPU, the FPGA, the storage and the accelerator (fpga design): three turns, each from its arrival and cut 30 % after its prefill (the decode runs on past the edge; the legend gives every stage's length and the FPGA stages' cycles), then the session's first export. In the turn with a query the FPGA hashes the tokens, reads the bucket, walks the chain and imports the KV from the SSD (claims 3-6); the export hashes, allocates from the FIFOs, writes the SSD and inserts a chain link (claims 7-10). Bars shorter than 0.5 % of the axis are drawn at that width.", timelinePanels, 3.6},
	}
	for _, p := range panels {
		plots, err := p.draw(scenarioLine, results)
		if err != nil {
			return nil, err
		}
		if err := reports.SavePanels(plots, out, p.name, p.inches); err != nil {
			return nil, err
		}
		figures = append(figures, reports.Figure{File: p.name + ".svg", Caption: p.caption})
	}
	return figures, nil
}

// version is the simulator's version: the module's, and the commit it
// was built from when the build knows it.
func version() string {
	info, ok := debugBuildInfo()
	if !ok {
		return "(unknown build)"
	}
	return info
}
