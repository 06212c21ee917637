package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/scenario"
)

// writeSweepFile writes a small sweep: 2 x 3 points of 20 sessions.
func writeSweepFile(t *testing.T, body string) string {
	path := filepath.Join(t.TempDir(), "sweep.yaml")
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	return path
}

const smallSweep = `set:
  workload.sessions: 20
grid:
  system.design: [cpu, fpga]
  storage.capacity: [64GB, 256GB, 2TB]
`

func TestShardsMergeToTheWholeSweep(t *testing.T) {
	spec, dir := writeSweepFile(t, smallSweep), t.TempDir()
	out := func(name string) string { return filepath.Join(dir, name) }
	code, stdout, stderr := simrun("sweep", "-c", spec, "-o", out("whole"), "-j", "2")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "point 6/6 done", "plain progress lines when not a terminal")
	for i, shard := range []string{"0/2", "1/2"} {
		code, _, stderr = simrun("sweep", "-c", spec, "-o", out("shard"+string(rune('0'+i))), "--shard", shard)
		require.Equal(t, 0, code, stderr)
	}
	code, _, stderr = simrun("merge", "-o", out("merged"), out("shard1"), out("shard0"))
	require.Equal(t, 0, code, stderr)
	whole, err := os.ReadFile(out("whole/sweep.csv"))
	require.NoError(t, err)
	merged, err := os.ReadFile(out("merged/sweep.csv"))
	require.NoError(t, err)
	assert.Equal(t, string(whole), string(merged), "byte-identical")
	lines := strings.Split(strings.TrimSpace(string(whole)), "\n")
	require.Len(t, lines, 7)
	assert.True(t, strings.HasPrefix(lines[0], "point,system.design,storage.capacity,design,"))
	assert.True(t, strings.HasPrefix(lines[6], "5,fpga,2TB,fpga,"), "rows in point order, the first key slowest")
	assert.DirExists(t, out("whole/points/0005-fpga-2TB"))
	assert.FileExists(t, out("whole/points/0005-fpga-2TB/summary.json"))

	code, _, stderr = simrun("merge", "-o", out("partial"), out("shard0"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "point 1 of 6 is in no shard given")

	code, stdout, stderr = simrun("report", "-i", out("whole"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "report.html")
	assert.FileExists(t, out("whole/sweep_ttft_ms_p99.svg"))
	assert.FileExists(t, out("whole/sweep_hit_ratio_tokens.png"))
	// Every plot's values beside it, linked from the page, and each the
	// sweep's own figure: its column of sweep.csv, point by point.
	table := readCSVFile(t, out("whole/sweep.csv"))
	page, err := os.ReadFile(out("whole/report.html"))
	require.NoError(t, err)
	for _, m := range sweepMetrics {
		name := "sweep_" + m.column + ".csv"
		assert.Contains(t, string(page), `href="`+name+`"`)
		data := readCSVFile(t, out("whole/"+name))
		col := slices.Index(table[0], m.column)
		require.Len(t, data, len(table), "%s: a row a point", name)
		drawn := map[[2]string]string{} // (series: the capacity, x: the design) -> y
		for _, row := range data[1:] {
			drawn[[2]string{row[0], row[1]}] = row[2]
		}
		for _, point := range table[1:] {
			y, ok := drawn[[2]string{point[2], point[1]}]
			require.True(t, ok, "%s: point %s drawn", name, point[0])
			want := mustFloat(t, point[col])
			if bytesColumn(m.column) {
				want /= 1e9 // drawn in GB
			}
			assert.InDelta(t, want, mustFloat(t, y), 1e-9, "%s: point %s", name, point[0])
		}
	}
}

// A sweep plot's title gives the base scenario and says which of its
// values the grid replaces, and where the plot shows them.
func TestSweepPlotTitleNamesTheGrid(t *testing.T) {
	rows := [][]string{{"point", "storage.capacity", "fpga.hashing", "ttft_ms_p50"}, {"0", "32GB", "patent", "1"}, {"1", "2TB", "block", "2"}}
	p, err := sweepPlot([]string{"storage.capacity", "fpga.hashing"}, "400 chat sessions; 2TB storage (kioxia-cm6), patent hashing", rows, "ttft_ms_p50", "TTFT p50 (ms)")
	require.NoError(t, err)
	assert.Equal(t, "TTFT p50 (ms) against storage.capacity\n"+
		"the base scenario: 400 chat sessions; 2TB storage (kioxia-cm6), patent hashing\n"+
		"storage.capacity on the x axis, fpga.hashing in the legend", p.Title.Text)
}

// readCSVFile reads a CSV file whole.
func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err, path)
	return rows
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err)
	return v
}

// TestSweepWhoseSetNeedsTheGrid: a set that is a scenario only with the
// grid's values (store.load_wait needs the layer-wise load that the
// cachedattention design brings) runs, and the manifest describes the
// first point's scenario.
func TestSweepWhoseSetNeedsTheGrid(t *testing.T) {
	spec := writeSweepFile(t, "set:\n  workload.sessions: 10\n  store.load_wait: request\ngrid:\n  system.design: [cachedattention]\n")
	out := filepath.Join(t.TempDir(), "sweep")
	code, _, stderr := simrun("sweep", "-c", spec, "-o", out)
	require.Equal(t, 0, code, stderr)
	raw, err := os.ReadFile(filepath.Join(out, "sweep.json"))
	require.NoError(t, err)
	var m sweepManifest
	require.NoError(t, json.Unmarshal(raw, &m))
	assert.Contains(t, m.Scenario, "10 chat sessions")
}

func TestSweepBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign")
	require.NoError(t, os.MkdirAll(foreign, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644))
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "-c", writeSweepFile(t, "grid:\n  system.desgin: [cpu]\n"), "-o", filepath.Join(dir, "a")}, "sweep.yaml:2: key system.desgin: not a scenario key"},
		{[]string{"sweep", "-c", writeSweepFile(t, "set:\n  seed: 2\n"), "-o", filepath.Join(dir, "b")}, "key grid: the grid is empty"},
		{[]string{"sweep", "-c", writeSweepFile(t, "grid:\n  system.design: []\n"), "-o", filepath.Join(dir, "c")}, "key system.design: expected a non-empty list of values"},
		{[]string{"sweep", "-c", writeSweepFile(t, "grid:\n  system.design: [gpu]\n"), "-o", filepath.Join(dir, "d")}, `point 0 (system.design set at `},
		{[]string{"sweep", "-c", writeSweepFile(t, smallSweep), "-o", filepath.Join(dir, "e"), "--shard", "2/2"}, `--shard "2/2": want I/N with N >= 1 and I in 0..N-1`},
		{[]string{"sweep", "-c", writeSweepFile(t, smallSweep), "-o", foreign}, "exists and is not a kvcosim output"},
		{[]string{"sweep", "-c", writeSweepFile(t, smallSweep), "-o", "/proc/kvcosim"}, "cannot create the output folder"},
		{[]string{"sweep", "-c", filepath.Join(dir, "none.yaml"), "-o", filepath.Join(dir, "f")}, "none.yaml: cannot read the sweep"},
		{[]string{"merge", "-o", filepath.Join(dir, "g"), dir}, "is not a sweep folder"},
		{[]string{"report", "-i", dir}, "is not a sweep folder"},
	}
	for _, c := range cases {
		code, _, stderr := simrun(c.args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Contains(t, stderr, c.want, "%v", c.args)
	}
}

// FuzzSweepFile feeds the sweep grid reader any file: it must not panic,
// and a sweep it accepts has the grid's product of points, each setting
// every key once.
func FuzzSweepFile(f *testing.F) {
	f.Add([]byte(smallSweep))
	f.Add([]byte("grid:\n  system.nodes: [1, 2]\n  system.nodes: [3]\n"))
	f.Add([]byte("base: x.yaml\nset:\n  seed: 2\ngrid:\n  seed: [3]\n"))
	f.Add([]byte("grid:\n  system.design: []\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		path := filepath.Join(t.TempDir(), "sweep.yaml")
		require.NoError(t, os.WriteFile(path, body, 0o644))
		sw, err := scenario.LoadSweep(path)
		if err != nil {
			require.Contains(t, err.Error(), path)
			return
		}
		want := 1
		for _, v := range sw.Values {
			want *= len(v)
		}
		points := sw.Points()
		require.Len(t, points, want)
		for _, p := range points {
			require.Len(t, p.Sets, len(sw.Set)+len(sw.Keys))
		}
	})
}

// FuzzSweepFolder feeds merge and report any sweep.json and sweep.csv:
// neither may panic, and a folder readSweep accepts merges into itself.
func FuzzSweepFolder(f *testing.F) {
	m := sweepManifest{Points: 2, Keys: []string{"system.design"}, Shard: "all", Scenario: "a", Values: [][]string{{"cpu", "fpga"}}}
	js, err := json.Marshal(m)
	require.NoError(f, err)
	header := strings.Join(sweepHeader(m.Keys, false), ",")
	f.Add(js, []byte(header+"\n"))
	f.Add(js, []byte(header+"\n0,cpu"+strings.Repeat(",1", len(reports.ComparisonColumns))+"\n1,fpga"+strings.Repeat(",2", len(reports.ComparisonColumns))+"\n"))
	f.Add([]byte(`{"points": 1, "keys": []}`), []byte("point\n0\n"))
	f.Fuzz(func(t *testing.T, manifest, table []byte) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "sweep.json"), manifest, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "sweep.csv"), table, 0o644))
		got, rows, err := readSweep(dir)
		if err != nil {
			return
		}
		require.NotEmpty(t, got.Keys)
		require.GreaterOrEqual(t, len(rows), 2)
		if merged, _, err := mergeShards([]string{dir}); err == nil {
			require.Len(t, merged, got.Points+1)
		}
		for _, metric := range sweepMetrics {
			_, _ = sweepPlot(got.Keys, got.Scenario, rows, metric.column, metric.label)
		}
	})
}

// TestSweepProbeFindings holds the CLI probe's reproducers: each used to
// run (exit 0) or hang, and now exits 2 naming the file, line, key or
// argument at fault.
func TestSweepProbeFindings(t *testing.T) {
	dir := t.TempDir()
	onePoint := "set:\n  workload.sessions: 20\ngrid:\n  system.design: [cpu, fpga]\n"
	cases := []struct {
		name string
		args []string
		want string
	}{
		// base: a list was read as no base at all, and the embedded default ran.
		{"base a list", []string{"sweep", "-c", writeSweepFile(t, "base: [a.yaml]\n"+onePoint), "-o", filepath.Join(dir, "a")},
			"sweep.yaml:1: key base: expected the base scenario's path"},
		{"base a mapping", []string{"sweep", "-c", writeSweepFile(t, "base:\n  path: a.yaml\n"+onePoint), "-o", filepath.Join(dir, "b")},
			"sweep.yaml:2: key base: expected the base scenario's path"},
		// more shards than points: shard 2 of 3 wrote a header only, which
		// merge then refused.
		{"shard with no points", []string{"sweep", "-c", writeSweepFile(t, onePoint), "-o", filepath.Join(dir, "c"), "--shard", "2/3"},
			`--shard "2/3": the sweep has 2 points, so 3 shards leave some with none: use N <= 2`},
		// a sweep file that never ends was read until memory ran out.
		{"endless sweep file", []string{"sweep", "-c", "/dev/zero", "-o", filepath.Join(dir, "d")},
			"/dev/zero: cannot read the sweep: larger than the 16384 KiB limit of a sweep file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.args[2] == "/dev/zero" {
				if _, err := os.Stat("/dev/zero"); err != nil {
					t.Skip("no /dev/zero")
				}
			}
			code, _, stderr := simrun(c.args...)
			assert.Equal(t, 2, code, stderr)
			assert.Contains(t, stderr, c.want)
			assert.NoDirExists(t, c.args[4], "a refused sweep leaves no folder")
		})
	}
}

// TestReportRefusesCellsItCannotPlot: a plotted cell of NaN or Inf was
// refused by the plotting library with the plot's title, naming neither
// the folder, the point nor the column; now they are named, as for a cell
// that is not a number.
func TestReportRefusesCellsItCannotPlot(t *testing.T) {
	m := sweepManifest{Points: 1, Keys: []string{"system.design"}, Shard: "all", Scenario: "a", Values: [][]string{{"cpu"}}}
	for _, cell := range []string{"NaN", "Inf", "-Inf", "x", ""} {
		t.Run(cell, func(t *testing.T) {
			dir := fakeSweep(t, m, []string{"0", "cpu"})
			rows := [][]string{sweepHeader(m.Keys, false), make([]string, len(sweepHeader(m.Keys, false)))}
			for i := range rows[1] {
				rows[1][i] = "1"
			}
			rows[1][0], rows[1][1] = "0", "cpu"
			rows[1][slices.Index(rows[0], "ttft_ms_p50")] = cell
			require.NoError(t, writeSweepFiles(dir, rows, m))
			code, _, stderr := simrun("report", "-i", dir)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr, fmt.Sprintf("simrun report: %s: sweep.csv point 0: ttft_ms_p50 = %q: want a finite number", dir, cell))
		})
	}
}

// TestSweepOverAnEarlierOneRemovesItsPoints: a sweep written into the
// folder of an earlier one with other points removes the earlier point
// folders (they passed for this sweep's), and keeps a folder kvcosim did
// not write.
func TestSweepOverAnEarlierOneRemovesItsPoints(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := simrun("sweep", "-c", writeSweepFile(t, "set:\n  workload.sessions: 10\ngrid:\n  system.design: [cpu, fpga]\n"), "-o", out, "-j", "1")
	require.Equal(t, 0, code, stdout+stderr)
	require.NoError(t, os.MkdirAll(filepath.Join(out, "points", "mine"), 0o755))
	code, stdout, stderr = simrun("sweep", "-c", writeSweepFile(t, "grid:\n  workload.sessions: [10]\n"), "-o", out, "-j", "1")
	require.Equal(t, 0, code, stdout+stderr)
	assert.Contains(t, stdout, "removed 2 point folders of an earlier sweep")
	entries, err := os.ReadDir(filepath.Join(out, "points"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"0000-10", "mine"}, names)
}

// TestSweepTableMustMatchItsGrid: a sweep.csv whose row gives a point
// other grid values than sweep.json's grid, names a point the sweep does
// not have, or lists one twice is refused by report and merge (they were
// read as they stood).
func TestSweepTableMustMatchItsGrid(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := simrun("sweep", "-c", writeSweepFile(t, "set:\n  workload.sessions: 10\ngrid:\n  system.design: [cpu, fpga]\n"), "-o", dir, "-j", "1")
	require.Equal(t, 0, code, stderr)
	data, err := os.ReadFile(filepath.Join(dir, "sweep.csv"))
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	require.GreaterOrEqual(t, len(lines), 3)
	cases := []struct {
		name, table, want string
	}{
		{"an edited grid value", lines[0] + lines[1] + strings.Replace(lines[2], "1,fpga,", "1,cpu,", 1),
			"sweep.csv: point 1 has the grid values [cpu]; sweep.json's grid gives it [fpga]"},
		{"a point past the grid", lines[0] + lines[1] + strings.Replace(lines[2], "1,fpga,", "2,fpga,", 1), `sweep.csv: point "2": not one of the sweep's 2`},
		{"a point twice", lines[0] + lines[1] + lines[1], `sweep.csv: point "0": not one of the sweep's 2, or listed twice`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "sweep.csv"), []byte(c.table), 0o644))
			for _, args := range [][]string{{"report", "-i", dir}, {"merge", "-o", filepath.Join(t.TempDir(), "m"), dir}} {
				code, _, stderr := simrun(args...)
				assert.Equal(t, 2, code, args[0])
				assert.Contains(t, stderr, c.want, args[0])
			}
		})
	}
}

// The sweep report's table: the grid's values as they are, then the
// chosen figures in tableColumns' order with the digits they need, bytes
// in GB; sweep.csv keeps every column and digit.
func TestSweepTableIsReadable(t *testing.T) {
	rows := [][]string{
		{"point", "storage.capacity", "ttft_ms_p50", "ttft_ms_mean", "storage_read_bytes", "hit_ratio_tokens", "requests_completed"},
		{"0", "800000000000", "172.075536", "180.1", "800000000000", "0.236412", "1450"},
		{"1", "2TB", "3.141593", "4", "1234567890", "0.000012", "7"},
	}
	assert.Equal(t, [][]string{
		{"point", "storage.capacity", "requests completed", "ttft ms p50", "hit ratio tokens", "storage read (GB)"},
		{"0", "800000000000", "1450", "172.1", "0.236", "800"},
		{"1", "2TB", "7", "3.14", "1.2e-05", "1.23"},
	}, readableTable(rows, 1))
	for _, c := range []struct {
		ys   []string
		flat bool
	}{
		{[]string{"100.000008", "100.000000"}, true},
		{[]string{"100", "106"}, false},
		{[]string{"0", "0"}, false},
	} {
		var rows [][]string
		for _, y := range c.ys {
			rows = append(rows, []string{"s", "x", y})
		}
		assert.Equal(t, c.flat, flatFromZero(rows), "%v", c.ys)
	}
}

// TestReportIsWholeOrAbsent: a cell that cannot be plotted in a later
// column, or a disk that fills after some plots, leaves no plot and no
// report.html in the sweep's folder (the NaN left the 8 plots before it),
// and the same folder then takes a whole report.
func TestReportIsWholeOrAbsent(t *testing.T) {
	m := sweepManifest{Points: 1, Keys: []string{"system.design"}, Shard: "all", Scenario: "a", Values: [][]string{{"cpu"}}}
	dir := fakeSweep(t, m, []string{"0", "cpu"})
	rows := [][]string{sweepHeader(m.Keys, false), make([]string, len(sweepHeader(m.Keys, false)))}
	for i := range rows[1] {
		rows[1][i] = "1"
	}
	rows[1][0], rows[1][1] = "0", "cpu"
	last := sweepMetrics[len(sweepMetrics)-1].column
	rows[1][slices.Index(rows[0], last)] = "NaN"
	require.NoError(t, writeSweepFiles(dir, rows, m))
	report := func() []string {
		names, err := filepath.Glob(filepath.Join(dir, "sweep_*"))
		require.NoError(t, err)
		if _, err := os.Stat(filepath.Join(dir, "report.html")); err == nil {
			names = append(names, "report.html")
		}
		return names
	}
	code, _, stderr := simrun("report", "-i", dir)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, last+` = "NaN": want a finite number`)
	assert.Empty(t, report(), "no plot before the bad column")

	rows[1][slices.Index(rows[0], last)] = "1"
	require.NoError(t, writeSweepFiles(dir, rows, m))
	withFullDisk(t, 20_000, func() { code, _, stderr = simrun("report", "-i", dir) })
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "no space left on device (simulated)")
	assert.Empty(t, report(), "no plot written before the disk filled")
	assert.Empty(t, leftovers(t, dir))

	code, _, stderr = simrun("report", "-i", dir)
	require.Equal(t, 0, code, stderr)
	assert.Len(t, report(), 3*len(sweepMetrics)+1, "each plot as PNG, SVG and its data, and the page")
}
