package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/scenario"
	"github.com/kvcosim/kvcosim/workloads"
)

// runFidelity runs every published-figure check (fidelitychecks.go) over
// several seeds and prints, per figure, the published value and its
// source, kvcosim's mean and spread, the band and whether every seed lies
// in it (docs/fidelity.md). Exit 1 when a figure is not where its check
// expects it: out of its band, or back in it where the check states a
// known gap.
func runFidelity(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("fidelity", stderr)
	seeds := fs.Int("seeds", 5, "seeds each seeded check runs (1 to 100)")
	quick := fs.Bool("quick", false, "CI's form: 2 seeds (unless --seeds is given)")
	paperScale := fs.Bool("paper-scale", true, "replay CachedAttention at the paper's 9,000 sessions too, on --paper-seeds seeds (about 8 CPU-minutes a seed); --quick leaves it out unless given")
	openQueue := fs.Bool("open-queue", false, "replay CachedAttention at the paper's 9,000 sessions with an open job queue too, TTFT from admission, on --paper-seeds seeds (about 9 CPU-minutes a seed; also with --quick or --paper-scale=false)")
	paperSeeds := fs.Int("paper-seeds", 1, "seeds the replays at the paper's 9,000 sessions run (1 to 100)")
	asJSON := fs.Bool("json", false, "print the figures as a JSON array")
	jobs := fs.Int("j", runtime.NumCPU(), "runs at once")
	root := fs.String("root", ".", "the repository's root: where docs/examples and workloads/testdata are")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "simrun fidelity: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() > 0 {
		return fail("unexpected argument %q", fs.Arg(0))
	}
	if err := checkJobs(*jobs); err != nil {
		return fail("%v", err)
	}
	if *quick && !flagGiven(fs, "seeds") {
		*seeds = quickSeeds
	}
	if *quick && !flagGiven(fs, "paper-scale") {
		*paperScale = false
	}
	for _, f := range []struct {
		name string
		n    int
	}{{"seeds", *seeds}, {"paper-seeds", *paperSeeds}} {
		if f.n < 1 || f.n > maxFidelitySeeds {
			return fail("--%s %d: want 1 to %d", f.name, f.n, maxFidelitySeeds)
		}
	}
	tmp, err := os.MkdirTemp("", "kvcosim-fidelity-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(tmp)
	env := fidelityEnv{root: *root, tmp: tmp, paperScale: *paperScale, openQueue: *openQueue, seeds: *seeds, paperSeeds: *paperSeeds}
	rows, err := runFidelityChecks(env, *jobs, stderr)
	if err != nil {
		return fail("%v", err)
	}
	if *asJSON {
		err = printJSON(stdout, rows)
	} else {
		err = printFidelity(stdout, rows)
	}
	if err != nil {
		return fail("%v", err)
	}
	for _, r := range rows {
		if !r.AsExpected {
			return 1
		}
	}
	return 0
}

// quickSeeds is how many seeds --quick runs; maxFidelitySeeds bounds
// --seeds.
const (
	quickSeeds       = 2
	maxFidelitySeeds = 100
)

// fidelityEnv is what the checks' scenarios are built from: the
// repository's root, a folder for the files a check writes (a device
// file, a trace), whether the checks at the paper's scale and the
// open-queue replay run, and the seeds: of the seeded checks, and of
// those at the paper's scale.
type fidelityEnv struct {
	root, tmp             string
	paperScale, openQueue bool
	seeds, paperSeeds     int
}

// fidelityRow is one figure's outcome: its definition, the value on each
// seed, their mean, least, greatest and standard deviation, whether every
// seed lies within the band, and whether that is what the check expects
// (a figure with a known gap is expected outside it).
type fidelityRow struct {
	fidelityFigure
	Values     []float64 `json:"values"`
	Mean       float64   `json:"mean"`
	Min        float64   `json:"min"`
	Max        float64   `json:"max"`
	SD         float64   `json:"sd"`
	Seeds      int       `json:"seeds"`
	Pass       bool      `json:"pass"`
	AsExpected bool      `json:"as_expected"`
}

// fidelityOutcome fills a row from the values of its seeds (a NaN, for a
// figure kvcosim does not model, passes nothing).
func fidelityOutcome(f fidelityFigure, values []float64, pass bool) fidelityRow {
	r := fidelityRow{fidelityFigure: f, Values: values, Seeds: len(values), Pass: pass}
	if len(values) > 0 {
		r.Min, r.Max = values[0], values[0]
	}
	for _, v := range values {
		r.Mean += v / float64(len(values))
		r.Min, r.Max = math.Min(r.Min, v), math.Max(r.Max, v)
	}
	for _, v := range values {
		r.SD += (v - r.Mean) * (v - r.Mean) / float64(len(values))
	}
	r.SD = math.Sqrt(r.SD)
	r.AsExpected = r.Pass == (f.Gap == "") && !slices.ContainsFunc(values, math.IsNaN)
	return r
}

// runFidelityChecks runs every check's scenarios on every seed, jobs at
// once, with progress on stderr, and returns the figures in check order.
func runFidelityChecks(env fidelityEnv, jobs int, stderr io.Writer) ([]fidelityRow, error) {
	type owner struct {
		check, seed int
		label       string
	}
	checks := fidelityChecks()
	var points []point
	var owners []owner
	for _, ci := range runOrder(checks) {
		c := checks[ci]
		if c.runs == nil || !c.runsIn(env) {
			continue
		}
		runs, err := c.runs(env)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		for seed := 1; seed <= c.seedsOf(env); seed++ {
			for _, r := range runs {
				sets := append(r.sets[:len(r.sets):len(r.sets)], fmt.Sprintf("seed=%d", seed))
				l, err := scenario.Load(r.base, sets)
				if err != nil {
					return nil, fmt.Errorf("%s, %s: %w", c.name, r.label, err)
				}
				points = append(points, point{sets: sets, label: c.name + ", " + r.label, loaded: l})
				owners = append(owners, owner{ci, seed, r.label})
			}
		}
	}
	results := runPoints("", points, jobs, progress(stderr, len(points), "run"))
	sums := map[int][]map[string]reports.Summary{}
	requests := map[int][]map[string][]reports.RequestRow{}
	for i, r := range results {
		if r.err != nil {
			return nil, fmt.Errorf("%s, seed %d: %w", points[i].label, owners[i].seed, r.err)
		}
		o := owners[i]
		for len(sums[o.check]) < o.seed {
			sums[o.check] = append(sums[o.check], map[string]reports.Summary{})
			requests[o.check] = append(requests[o.check], map[string][]reports.RequestRow{})
		}
		sums[o.check][o.seed-1][o.label] = r.sum
		requests[o.check][o.seed-1][o.label] = r.rows
	}
	var rows []fidelityRow
	for ci, c := range checks {
		if !c.runsIn(env) {
			continue
		}
		in, err := c.inputs(env, sums[ci], requests[ci])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		rows = append(rows, c.outcomes(in)...)
	}
	calibrations, err := calibrationRows()
	return append(rows, calibrations...), err
}

// runOrder is the checks' indices, those at a paper's scale first: their
// runs are the longest, and started first they do not hold up the end.
func runOrder(checks []fidelityCheck) []int {
	var first, rest []int
	for i, c := range checks {
		if c.paperScale {
			first = append(first, i)
		} else {
			rest = append(rest, i)
		}
	}
	return append(first, rest...)
}

// calibrationStatus is how firmly each source of simrun calibrate's rows
// that fidelity repeats was confirmed (docs/fidelity.md), by a word of
// the row's source; rows of other sources (device datasheets, model
// shapes) stay calibrate's own.
var calibrationStatus = []struct{ sourceWord, status string }{
	{"Splitwise", "confirmed, primary: byte-identical to splitwise-sim data/perf_model.csv"},
	{"calibdata/h100", "measured by the project (tools/gpuprofile)"},
	{"Mooncake", "not confirmed as printed: FAST'25 §2.2 p.4 gives 19 and 6 GB/s"},
}

// calibrationRows are simrun calibrate's rows of published or measured
// runs (Splitwise's profile, the project's GPU profile, Mooncake's
// break-even) as figures: one value each, judged by calibrate's tolerance.
func calibrationRows() ([]fidelityRow, error) {
	checks, err := accel.Calibrations()
	if err != nil {
		return nil, err
	}
	var rows []fidelityRow
	for _, c := range checks {
		for _, s := range calibrationStatus {
			if strings.Contains(c.Source, s.sourceWord) {
				f := fidelityFigure{Check: "calibrate", Figure: c.Name, Published: c.Target, Unit: c.Unit, Source: c.Source,
					Status: s.status, Band: fidelityBand{Width: c.Tolerance, Relative: true}}
				rows = append(rows, fidelityOutcome(f, []float64{c.Model}, c.OK))
				break
			}
		}
	}
	return rows, nil
}

// fidelityInputs is what a check's figures are computed from: each seed's
// summaries and requests by run label, and the statistics of the traces
// it reads.
type fidelityInputs struct {
	seeds    []map[string]reports.Summary
	requests []map[string][]reports.RequestRow
	traces   map[string]workloads.TraceStats
}

// printFidelity writes the figures as a table, then the count of those
// within their bands and of those not where their checks expect them.
func printFidelity(w io.Writer, rows []fidelityRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "check\tfigure\tpublished\tmodel mean\tmin-max\tsd\tseeds\tband\tpass\tsource (status)")
	pass, unexpected := 0, 0
	for _, r := range rows {
		if r.Pass {
			pass++
		}
		verdict := fmt.Sprint(r.Pass)
		mean, spread, sd := r.format(r.Mean), r.format(r.Min)+"-"+r.format(r.Max), r.format(r.SD)
		if r.Seeds == 0 {
			mean, spread, sd = "not modelled", "-", "-"
		}
		if !r.AsExpected {
			unexpected++
			verdict += " UNEXPECTED"
		} else if r.Gap != "" {
			verdict += " (known gap)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s (%s)\n", r.Check, r.Figure, r.format(r.Published),
			mean, spread, sd, r.Seeds, r.Band.describe(r.Published, r.Unit), verdict, r.Source, r.Status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d of %d figures within their bands; %d not where their checks expect them\n", pass, len(rows), unexpected)
	for _, r := range rows {
		if r.Gap != "" {
			fmt.Fprintf(w, "known gap: %s, %s: %s\n", r.Check, r.Figure, r.Gap)
		}
	}
	return nil
}
