package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/kvcosim/kvcosim/internal/jsonkeys"
	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/scenario"
)

// sweepManifest is sweep.json: what a sweep folder holds, so that merge
// can check that shards add up to the whole sweep.
type sweepManifest struct {
	Points   int      `json:"points"`
	Keys     []string `json:"keys"`
	Shard    string   `json:"shard"`
	Scenario string   `json:"scenario"` // the base scenario, described
	// Values are the grid's values, key by key: with Keys and Scenario,
	// what tells merge that shards are of one sweep.
	Values [][]string `json:"values,omitempty"`
}

// runSweep runs a grid of scenarios in parallel, or one shard of it.
func runSweep(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("sweep", stderr)
	spec := fs.String("c", "", "the sweep file (base, set, grid)")
	out := fs.String("o", "", "output folder")
	jobs := fs.Int("j", runtime.NumCPU(), "runs at once")
	shardFlag := fs.String("shard", "", "run only slice I of N (I/N, I from 0): one task of a job array")
	force := fs.Bool("force", false, "write into an existing folder that is not a kvcosim output")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int { fmt.Fprintf(stderr, "simrun sweep: "+format+"\n", a...); return 2 }
	switch {
	case fs.NArg() > 0:
		return fail("unexpected argument %q", fs.Arg(0))
	case *spec == "" || *out == "":
		return fail("usage: simrun sweep -c SWEEP.yaml -o DIR [-j N] [--shard I/N] [--force]")
	}
	if err := checkJobs(*jobs); err != nil {
		return fail("%v", err)
	}
	sw, all, mine, err := planSweep(*spec, *shardFlag)
	if err != nil {
		return fail("%v", err)
	}
	undo, err := prepareOutput(*out, *force)
	if err != nil {
		return fail("%v", err)
	}
	points := make([]point, len(mine))
	for i, p := range mine {
		points[i] = point{sets: p.Sets, dir: filepath.Join(*out, "points", p.Name())}
	}
	results := runPoints(sw.Base, points, *jobs, progress(stdout, len(points), "point"))
	for i, r := range results {
		if r.err != nil {
			fmt.Fprintf(stderr, "simrun sweep: point %d: %v\n", mine[i].Index, r.err)
			undo()
			return 1
		}
		who := fmt.Sprintf("simrun sweep: point %d (%s)", mine[i].Index, strings.Join(mine[i].Sets, ", "))
		for _, w := range r.loaded.Warnings() {
			fmt.Fprintf(stderr, "%s: warning: %s\n", who, w)
		}
		warnSaturated(stderr, who, &r.sum)
	}
	label := "all"
	if *shardFlag != "" {
		label = *shardFlag
	}
	base, err := describedBase(sw, all)
	if err != nil {
		undo()
		return fail("%v", err)
	}
	m := sweepManifest{Points: len(all), Keys: sw.Keys, Shard: label, Scenario: base.Describe(), Values: sw.Values}
	if len(sw.Set) > 0 {
		m.Scenario += "; " + strings.Join(sw.Set, ", ")
	}
	if err := writeSweep(*out, sw, mine, results, m); err != nil {
		undo()
		return fail("%v", err)
	}
	stale, err := removeStalePoints(*out, mine)
	if err != nil {
		return fail("%v", err)
	}
	if stale > 0 {
		fmt.Fprintf(stdout, "removed %d point folders of an earlier sweep from %s\n", stale, filepath.Join(*out, "points"))
	}
	fmt.Fprintf(stdout, "%d of %d points; wrote %s\n", len(mine), len(all), filepath.Join(*out, "sweep.csv"))
	return 0
}

// removeStalePoints removes the point folders under out/points that kvcosim
// wrote (they carry its marker) for another sweep than this run's points:
// left beside them, an earlier sweep's points would pass for this one's.
// It returns how many it removed.
func removeStalePoints(out string, mine []scenario.SweepPoint) (int, error) {
	entries, err := os.ReadDir(filepath.Join(out, "points"))
	if err != nil {
		return 0, fmt.Errorf("%s: %v", filepath.Join(out, "points"), err)
	}
	keep := map[string]bool{}
	for _, p := range mine {
		keep[p.Name()] = true
	}
	removed := 0
	for _, e := range entries {
		dir := filepath.Join(out, "points", e.Name())
		if _, err := os.Stat(filepath.Join(dir, outputMarker)); keep[e.Name()] || !e.IsDir() || err != nil {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			return removed, fmt.Errorf("cannot remove the earlier sweep's point %s: %v", dir, err)
		}
		removed++
	}
	return removed, nil
}

// describedBase is the scenario the sweep's manifest describes: its set
// alone or, where the set is a scenario only with the grid's values (a key
// that needs another the grid gives), the first point's.
func describedBase(sw *scenario.Sweep, all []scenario.SweepPoint) (*scenario.Loaded, error) {
	base, err := scenario.Load(sw.Base, sw.Set)
	if err != nil && len(all) > 0 {
		base, err = scenario.Load(sw.Base, all[0].Sets)
	}
	return base, err
}

// planSweep reads the sweep file and returns its points and this shard's.
// Every point's scenario is loaded first: a bad value fails now, not after
// hours of runs.
func planSweep(spec, shardFlag string) (*scenario.Sweep, []scenario.SweepPoint, []scenario.SweepPoint, error) {
	shard, shards, err := parseShard(shardFlag)
	if err != nil {
		return nil, nil, nil, err
	}
	sw, err := scenario.LoadSweep(spec)
	if err != nil {
		return nil, nil, nil, err
	}
	all := sw.Points()
	if shards > len(all) {
		// A shard past the points would write a table of no points, which
		// merge refuses: the job array is larger than the sweep.
		return nil, nil, nil, fmt.Errorf("--shard %q: the sweep has %d points, so %d shards leave some with none: use N <= %d", shardFlag, len(all), shards, len(all))
	}
	var mine []scenario.SweepPoint
	for _, p := range all {
		if _, err := scenario.Load(sw.Base, p.Sets); err != nil {
			return nil, nil, nil, fmt.Errorf("point %d%s: %w", p.Index, sweepLine(sw, p, err), err)
		}
		if p.Index%shards == shard {
			mine = append(mine, p)
		}
	}
	return sw, all, mine, nil
}

// sweepLine is " (sweep file:line)" when err names a key that the sweep
// file sets, so that the user finds the line to change; else "".
func sweepLine(sw *scenario.Sweep, p scenario.SweepPoint, err error) string {
	var e *scenario.Error
	if !errors.As(err, &e) {
		return ""
	}
	if line := sw.Line(p, e.Key); line != "" {
		return fmt.Sprintf(" (%s set at %s)", e.Key, line)
	}
	return ""
}

// parseShard reads --shard I/N ("" is the whole sweep: 0/1).
func parseShard(s string) (int, int, error) {
	if s == "" {
		return 0, 1, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard %q: want I/N with N >= 1 and I in 0..N-1", s)
	}
	return i, n, nil
}

// sweepHeader is sweep.csv's header: the point, the grid's keys, then the
// comparison columns (the goodput's with it: reports.ComparisonColumnsFor).
func sweepHeader(keys []string, goodput bool) []string {
	return append(append([]string{"point"}, keys...), reports.ComparisonColumnsFor(goodput)...)
}

// writeSweep writes sweep.csv (this run's points, in order) and sweep.json.
func writeSweep(out string, sw *scenario.Sweep, points []scenario.SweepPoint, results []pointResult, m sweepManifest) error {
	goodput := slices.ContainsFunc(results, func(r pointResult) bool { return r.sum.Goodput != nil })
	rows := [][]string{sweepHeader(sw.Keys, goodput)}
	for i, p := range points {
		rows = append(rows, append(append([]string{strconv.Itoa(p.Index)}, p.Values...), reports.ComparisonRowFor(&results[i].sum, goodput)...))
	}
	return writeSweepFiles(out, rows, m)
}

func writeSweepFiles(out string, rows [][]string, m sweepManifest) error {
	if err := reports.WriteCSV(filepath.Join(out, "sweep.csv"), rows); err != nil {
		return err
	}
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := reports.WriteBytes(filepath.Join(out, "sweep.json"), append(js, '\n')); err != nil {
		return err
	}
	return nil
}

// readSweep reads a sweep folder's sweep.json and sweep.csv.
func readSweep(dir string) (sweepManifest, [][]string, error) {
	var m sweepManifest
	js, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		return m, nil, fmt.Errorf("%s is not a sweep folder: %v", dir, err)
	}
	if err := json.Unmarshal(js, &m); err != nil {
		return m, nil, fmt.Errorf("%s: %v", filepath.Join(dir, "sweep.json"), err)
	}
	if err := jsonkeys.Check(js); err != nil {
		return m, nil, fmt.Errorf("%s: %w", filepath.Join(dir, "sweep.json"), err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "sweep.csv"))
	if err != nil {
		return m, nil, fmt.Errorf("%s is not a sweep folder: %v", dir, err)
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return m, nil, fmt.Errorf("%s: not a sweep table: %v", filepath.Join(dir, "sweep.csv"), err)
	}
	if err := checkSweep(m, rows); err != nil {
		return m, nil, fmt.Errorf("%s: %v", dir, err)
	}
	return m, rows, nil
}

// checkSweep checks that a sweep folder's manifest and table agree: a grid
// key at least, the header the sweep writes for its keys, at least one
// point and no more than the manifest's, each once, with the grid values
// the manifest's grid gives it (a manifest without values, written before
// they were recorded, cannot say).
func checkSweep(m sweepManifest, rows [][]string) error {
	switch {
	case len(m.Keys) == 0:
		return fmt.Errorf("sweep.json: \"keys\" is empty: a sweep has at least one grid key")
	case m.Points < 1:
		return fmt.Errorf("sweep.json: \"points\" = %d: at least 1", m.Points)
	case len(rows) == 0 || !slices.Equal(rows[0], sweepHeader(m.Keys, false)) && !slices.Equal(rows[0], sweepHeader(m.Keys, true)):
		return fmt.Errorf("sweep.csv: the header is not the one a sweep over %v writes", m.Keys)
	case len(rows) < 2:
		return fmt.Errorf("sweep.csv: no points, only a header")
	case len(rows)-1 > m.Points:
		return fmt.Errorf("sweep.csv: %d points, more than the %d of sweep.json", len(rows)-1, m.Points)
	case m.Values != nil && (len(m.Values) != len(m.Keys) || scenario.GridPoints(m.Values) != m.Points):
		return fmt.Errorf("sweep.json: \"values\" is not a grid of the %d points over %v", m.Points, m.Keys)
	}
	seen := map[int]bool{}
	for _, r := range rows[1:] {
		p, err := strconv.Atoi(r[0])
		if err != nil || p < 0 || p >= m.Points || seen[p] {
			return fmt.Errorf("sweep.csv: point %q: not one of the sweep's %d, or listed twice", r[0], m.Points)
		}
		seen[p] = true
		if m.Values == nil {
			continue
		}
		if got, want := r[1:1+len(m.Keys)], scenario.GridValues(m.Values, p); !slices.Equal(got, want) {
			return fmt.Errorf("sweep.csv: point %d has the grid values %v; sweep.json's grid gives it %v", p, got, want)
		}
	}
	return nil
}

// runMerge joins shards' sweep.csv into the one the whole sweep writes.
func runMerge(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("merge", stderr)
	out := fs.String("o", "", "output folder for the merged sweep.csv")
	force := fs.Bool("force", false, "write into an existing folder that is not a kvcosim output")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int { fmt.Fprintf(stderr, "simrun merge: "+format+"\n", a...); return 2 }
	if *out == "" || fs.NArg() == 0 {
		return fail("usage: simrun merge -o OUT DIR...")
	}
	if err := notAnInput(*out, fs.Args()); err != nil {
		return fail("%v", err)
	}
	rows, m, err := mergeShards(fs.Args())
	if err != nil {
		return fail("%v", err)
	}
	undo, err := prepareOutput(*out, *force)
	if err != nil {
		return fail("%v", err)
	}
	if err := writeSweepFiles(*out, rows, m); err != nil {
		undo()
		return fail("%v", err)
	}
	fmt.Fprintf(stdout, "merged %d points from %d folders into %s\n", m.Points, fs.NArg(), filepath.Join(*out, "sweep.csv"))
	return 0
}

// sameSweep says how shard b's manifest differs from shard a's, if it does.
func sameSweep(a, b sweepManifest) error {
	switch {
	case a.Points != b.Points:
		return fmt.Errorf("%d points, not %d", b.Points, a.Points)
	case !slices.Equal(a.Keys, b.Keys):
		return fmt.Errorf("grid keys %v, not %v", b.Keys, a.Keys)
	case !slices.EqualFunc(a.Values, b.Values, slices.Equal):
		return fmt.Errorf("grid values %v, not %v", b.Values, a.Values)
	case a.Scenario != b.Scenario:
		return fmt.Errorf("scenario %q, not %q", b.Scenario, a.Scenario)
	}
	return nil
}

// notAnInput refuses an output folder that is one of the inputs: merging
// into a shard would overwrite it with the merge.
func notAnInput(out string, dirs []string) error {
	o, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("-o %s: %v", out, err)
	}
	for _, d := range dirs {
		if a, err := filepath.Abs(d); err == nil && a == o {
			return fmt.Errorf("-o %s is one of the folders to merge: choose another", out)
		}
	}
	return nil
}

// mergeShards reads the shards' tables and returns the whole sweep's, in
// point order, and its manifest. The shards must be of one sweep and hold
// every point exactly once.
func mergeShards(dirs []string) ([][]string, sweepManifest, error) {
	var whole sweepManifest
	var header []string
	byPoint, from := map[int][]string{}, map[int]string{}
	for i, dir := range dirs {
		if j := slices.IndexFunc(dirs[:i], func(d string) bool { return absPath(d) == absPath(dir) }); j >= 0 {
			return nil, whole, fmt.Errorf("%s is given twice (folders %d and %d to merge): give each shard once", dir, j+1, i+1)
		}
		m, rows, err := readSweep(dir)
		if err != nil {
			return nil, whole, err
		}
		if i == 0 {
			whole, header = m, rows[0]
		} else if err := sameSweep(whole, m); err != nil {
			return nil, whole, fmt.Errorf("%s belongs to another sweep than %s: %v", dir, dirs[0], err)
		} else if !slices.Equal(rows[0], header) {
			return nil, whole, fmt.Errorf("%s belongs to another sweep than %s: its sweep.csv has other columns (goodput's with objectives, none without)", dir, dirs[0])
		}
		for _, r := range rows[1:] {
			p, err := strconv.Atoi(r[0])
			if err != nil || p < 0 || p >= whole.Points {
				return nil, whole, fmt.Errorf("%s: bad point %q", dir, r[0])
			}
			if first, dup := from[p]; dup {
				return nil, whole, fmt.Errorf("point %d is in two shards, %s and %s", p, first, dir)
			}
			byPoint[p], from[p] = r, dir
		}
	}
	rows := [][]string{header}
	for p := range whole.Points {
		r, ok := byPoint[p]
		if !ok {
			return nil, whole, fmt.Errorf("point %d of %d is in no shard given", p, whole.Points)
		}
		rows = append(rows, r)
	}
	whole.Shard = "all"
	return rows, whole, nil
}
