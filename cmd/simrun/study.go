package main

import (
	"bytes"
	"fmt"
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/scenario"
)

// studyDesigns are the designs the default study compares: every design of
// the table, recompute (the baseline) first.
var studyDesigns = store.DesignNames()

// studyLoads are the offered loads of the study's latency and throughput
// curves, as multiples of the scenario's arrival rate: up to where every
// design of the default scenario is saturated.
var studyLoads = []float64{0.5, 1, 2, 4, 6}

// studyHostLoads are the host loads of the busy-host axis (cpu.background:
// the share of the host's cores and memory bandwidth other work takes), at
// the scenario's load, for the designs that store KV, each over the
// study's seeds (the verdict compares the designs at the top load, so it
// needs their spread). Two loads: a third, 0.5, on both seeds took the
// study past its 50 s on 2 cores, and on the first seed alone it drew a
// dip that was the seed's, not the load's.
var studyHostLoads = []float64{0, 0.9}

// studyCapacities are the store sizes of the hit-ratio curve.
var studyCapacities = []string{"32GB", "64GB", "128GB", "256GB", "512GB", "2TB"}

// studyPlan places the study's runs among its points.
type studyPlan struct {
	points []point
	// seeds are the seeds (study.seeds of them, from the scenario's) each
	// headline and load point runs over.
	seeds []uint64
	// designs are each design's runs at the scenario's load, one per seed
	// (the first with its outputs); loads each design's at studyLoads, one
	// per seed but at the top load, which runs on the first seed alone (its
	// runs cost a third of the study's time, and it only says whether the
	// last designs saturate below it); capacities the fpga design's at studyCapacities; delta
	// each design's with delta exports (these two on the first seed).
	designs           [][]int
	loads             [][][]int
	capacities, delta []int
	// breakEven are the break-even map's runs, [path][design], over its
	// histories and read paths.
	breakEven [][]int
	histories []int64
	paths     []breakEvenPath
	// hostLoads are the storing designs' runs at studyHostLoads,
	// [design-1][host load][seed]: the designs' own runs at the scenario's
	// host load; none where the scenario's host memory model takes no
	// host load (busyHostAxis).
	hostLoads [][][]int
}

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
	if base.Changed("system.design") {
		fmt.Fprintf(stderr, "simrun: %s: key system.design: %s: the default study runs every design (%s) and sets system.design itself; leave it out, or run one design with simrun run\n",
			base.Where("system.design"), base.System.Design, strings.Join(studyDesigns, ", "))
		return 2
	}
	if len(base.Storage.Tiers) > 0 {
		fmt.Fprintln(stderr, "simrun: storage.tiers: the default study varies the store's size and its drives (storage.capacity, storage.drives) and gives each design its own tiers; give storage.device and storage.capacity (a sweep takes any tiers)")
		return 2
	}
	if base.Mode == "functional" {
		fmt.Fprintln(stderr, "simrun: mode: functional: the default study compares the designs' timing (its break-even map replays sessions without token ids); run functional mode with simrun run or simrun verify")
		return 2
	}
	undo, err := prepareOutput(*out, *force)
	if err != nil {
		fmt.Fprintf(stderr, "simrun: %v\n", err)
		return 2
	}
	start := time.Now()
	plan, err := planStudy(base, sets, *out)
	if err != nil {
		undo()
		fmt.Fprintf(stderr, "simrun: %v\n", err)
		return 2
	}
	for i, pt := range plan.points { // every point loads before the first runs: bad input fails now
		if plan.points[i].loaded, err = scenario.Load(*cfg, pt.sets); err != nil {
			undo()
			fmt.Fprintf(stderr, "simrun: %s: %v\n", pt.label, err)
			return 2
		}
	}
	results := runPoints(*cfg, plan.points, *jobs, progress(stderr, len(plan.points), "run"))
	for i, r := range results {
		if r.err == nil {
			continue
		}
		fmt.Fprintf(stderr, "simrun: %s: %v\n", plan.points[i].label, r.err)
		undo()
		if r.badSpec {
			return 2 // bad input
		}
		return 1 // a run stopped on an invariant
	}
	study, err := newStudy(base, plan, results)
	if err != nil {
		undo()
		fmt.Fprintf(stderr, "simrun: %v\n", err)
		return 1
	}
	for _, w := range study.warnings {
		fmt.Fprintf(stderr, "simrun: warning: %s\n", w)
	}
	if err := writeStudy(*out, study); err != nil {
		undo()
		fmt.Fprintf(stderr, "simrun: %v\n", err)
		return 2
	}
	study.print(stdout)
	fmt.Fprintf(stdout, "%d runs in %.1f s; report: %s\n", len(plan.points), time.Since(start).Seconds(), filepath.Join(*out, "report.html"))
	return 0
}

// planStudy lays out the study's runs: every design at the scenario's load
// and at each other load, each over the study's seeds (the first seed's
// outputs written at the scenario's load, the fpga design's observed),
// every storing design with delta exports, the fpga design at each store
// size, and the break-even map's short runs (breakeven.go), whose sessions
// it writes into out. The delta exports use the layer-major layout: the claim-9
// layout keeps V column by column, so that appending to an object writes
// one run of a few bytes per column (81,920 for Llama-3-70B), a cost the
// study does not need to simulate to count the bytes, which are the same.
func planStudy(base *scenario.Loaded, sets []string, out string) (p studyPlan, err error) {
	add := func(label string, pt point) int {
		pt.label = label
		p.points = append(p.points, pt)
		return len(p.points) - 1
	}
	with := func(extra ...string) []string { return append(slices.Clone(sets), extra...) }
	for s := range base.Study.Seeds {
		p.seeds = append(p.seeds, base.Seed+uint64(s))
	}
	// overSeeds adds a point once per seed: the first on the scenario's
	// seed as it stands, the others with seed set.
	overSeeds := func(label string, pt point) []int {
		runs := []int{add(label, pt)}
		for _, seed := range p.seeds[1:] {
			runs = append(runs, add(fmt.Sprintf("%s (seed %d)", label, seed), point{sets: append(slices.Clone(pt.sets), fmt.Sprintf("seed=%d", seed)), weight: pt.weight}))
		}
		return runs
	}
	for _, d := range studyDesigns {
		p.designs = append(p.designs, overSeeds(d, point{sets: with("system.design=" + d), dir: filepath.Join(out, d), observe: d == "fpga", weight: 1}))
	}
	for i, d := range studyDesigns {
		var row [][]int
		for _, x := range studyLoads {
			if x == 1 {
				row = append(row, p.designs[i])
				continue
			}
			label, pt := fmt.Sprintf("%s at %gx the load", d, x), point{sets: with(append([]string{"system.design=" + d}, loadSets(base, x)...)...), weight: x}
			if x == studyLoads[len(studyLoads)-1] {
				row = append(row, []int{add(label, pt)}) // the top load on the first seed: it only brackets where the last designs saturate
				continue
			}
			row = append(row, overSeeds(label, pt))
		}
		p.loads = append(p.loads, row)
	}
	own, ownErr := scenario.ParseSize(base.Storage.Capacity)
	for _, c := range studyCapacities {
		if n, err := scenario.ParseSize(c); err == nil && ownErr == nil && n == own {
			p.capacities = append(p.capacities, p.designs[fpgaDesign][0]) // the scenario's own store: the fpga design's run
			continue
		}
		p.capacities = append(p.capacities, add("fpga with a "+c+" store", point{sets: with("system.design=fpga", "storage.capacity="+c), weight: 1}))
	}
	for _, d := range studyDesigns[1:] {
		p.delta = append(p.delta, add(d+" with delta exports", point{sets: with("system.design="+d, "fpga.export_mode=delta", "fpga.layout=layer-major"), weight: 1}))
	}
	if p.histories, err = breakEvenHistories(base); err != nil {
		return p, err
	}
	trace, err := writeBreakEvenTrace(out, p.histories)
	if err != nil {
		return p, err
	}
	p.paths = breakEvenPaths(base)
	for _, path := range p.paths {
		var row []int
		for _, d := range studyDesigns {
			sets := append(breakEvenSets(base, trace, d, p.histories), path.setsFor(d)...)
			row = append(row, add(fmt.Sprintf("break-even: %s on %s", d, path.name), point{sets: with(sets...)}))
		}
		p.breakEven = append(p.breakEven, row)
	}
	if !busyHostAxis(base) {
		return p, nil
	}
	for i, d := range studyDesigns[1:] {
		var row [][]int
		for _, load := range studyHostLoads {
			if load == base.CPU.Background {
				row = append(row, p.designs[i+1])
				continue
			}
			row = append(row, overSeeds(fmt.Sprintf("%s at host load %g", d, load),
				point{sets: with("system.design="+d, "cpu.background="+strconv.FormatFloat(load, 'g', -1, 64)), weight: 1}))
		}
		p.hostLoads = append(p.hostLoads, row)
	}
	return p, nil
}

// busyHostAxis reports whether the study runs its busy-host axis: a host
// load needs the flat host-memory model (cpu.background).
func busyHostAxis(base *scenario.Loaded) bool { return base.CPU.HostMemoryModel == "flat" }

// loadSets scale the offered load by x over the same stretch of time: x
// times the sessions at x times the rate (synthetic), or a trace's arrivals
// x times as dense.
func loadSets(l *scenario.Loaded, x float64) []string {
	if l.Workload.Synthetic() {
		return []string{"workload.session_rate_per_s=" + strconv.FormatFloat(l.Workload.SessionRatePerS*x, 'g', -1, 64),
			"workload.sessions=" + strconv.Itoa(max(1, int(math.Round(float64(l.Workload.Sessions)*x))))}
	}
	return []string{"workload.time_scale=" + strconv.FormatFloat(l.Workload.TimeScale/x, 'g', -1, 64)}
}

// writeStudy writes comparison.csv, the plots and report.html.
func writeStudy(out string, st *study) error {
	var csv bytes.Buffer
	if err := reports.WriteSpreadCSV(&csv, st.sums()); err != nil {
		return err
	}
	if err := reports.WriteBytes(filepath.Join(out, "comparison.csv"), csv.Bytes()); err != nil {
		return err
	}
	figures, err := st.plots(out)
	if err != nil {
		return err
	}
	files := []string{"comparison.csv"}
	for _, d := range studyDesigns {
		files = append(files, d+"/summary.json", d+"/requests.csv")
	}
	page := reports.Page{Title: "kvcosim: when storing the KV cache beats recomputing it, design by design", Subtitle: st.base.Describe(),
		Version: version(), Warnings: st.warnings, Lead: st.lead(), Headline: st.headline(), Figures: figures,
		Scenario: string(st.fpga().loaded.YAML()), Files: append(files, "fpga/scenario.yaml", breakEvenFile)}
	var html bytes.Buffer
	if err := page.WriteHTML(&html); err != nil {
		return err
	}
	return reports.WriteBytes(filepath.Join(out, "report.html"), html.Bytes())
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
