package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/kvstore"
)

// traceEvent is a Chrome trace event as the tests read it.
type traceEvent struct {
	Name, Ph string
	Ts, Dur  float64
	Pid, Tid int
	Args     map[string]any
}

// readTrace reads a Chrome trace file's events.
func readTrace(t *testing.T, path string) []traceEvent {
	var doc struct {
		TraceEvents []traceEvent `json:"traceEvents"`
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &doc))
	return doc.TraceEvents
}

func TestRunWritesPerfettoAndVCDTraces(t *testing.T) {
	dir := t.TempDir()
	trace, vcd := filepath.Join(dir, "t.json"), filepath.Join(dir, "t.vcd")
	code, _, stderr := simrun("run", "-o", filepath.Join(dir, "out"), "--set", "workload.sessions=20",
		"--trace", trace, "--vcd", vcd, "--trace-window", "0s:60s", "--trace-filter", "node0,kioxia")
	require.Equal(t, 0, code, stderr)

	threads := map[string]bool{}
	complete := 0
	for _, e := range readTrace(t, trace) {
		switch e.Ph {
		case "M":
			if e.Name == "thread_name" {
				threads[e.Args["name"].(string)] = true
			}
		case "X":
			complete++
			assert.Less(t, e.Ts, 60e6, "inside the window (us)")
		}
	}
	assert.Positive(t, complete)
	assert.True(t, threads["node0.fpga"] && threads["node0.accelerator"] && threads["kioxia-cm6"], "one thread per component: %v", threads)
	for name := range threads {
		assert.True(t, strings.Contains(name, "node0") || strings.Contains(name, "kioxia"), "filtered: %s", name)
	}

	dump, err := os.ReadFile(vcd)
	require.NoError(t, err)
	text := string(dump)
	for _, v := range []string{"$var wire 1 ", " node0_fpga_busy $end", " fifo1_regions $end", " storage_commands $end", "$enddefinitions $end"} {
		assert.Contains(t, text, v)
	}
	assert.Greater(t, strings.Count(text, "\n#"), 10, "signal changes over time")
}

func TestTraceOptionsBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--trace", "x.json", "--trace-window", "5s"}, `--trace-window "5s": want FROM:TO`},
		{[]string{"run", "--trace", "x.json", "--trace-window", "9s:2s"}, "FROM before TO"},
		{[]string{"run", "--trace-filter", "fpga"}, "shape --trace or --vcd"},
		{[]string{"run", "--set", "workload.sessions=2", "-o", t.TempDir(), "--trace", "/proc/none/x.json"}, "--trace: cannot write /proc/none/x.json"},
		{[]string{"run", "--trace", "t.json", "--vcd", "./t.json"}, "--vcd ./t.json: --trace is that file too"},
		{[]string{"run", "-o", "res", "--trace", "res/summary.json"}, "--trace res/summary.json: the run's summary.json is that file too"},
		{[]string{"run", "-o", "res", "--vcd", "res/requests.csv"}, "--vcd res/requests.csv: the run's requests.csv is that file too"},
	} {
		code, _, stderr := simrun(c.args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Contains(t, stderr, c.want)
	}
}

// The README's trace command: its Perfetto trace names every thread once
// (each drive's link its own) and never overlaps two spans on one thread,
// and its VCD starts from the store's true levels at the window's start.
func TestReadmeTracesReadAsData(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the default scenario")
	}
	dir := t.TempDir()
	trace, vcd := filepath.Join(dir, "trace.json"), filepath.Join(dir, "fpga.vcd")
	code, _, stderr := simrun("run", "-o", filepath.Join(dir, "run"), "--trace", trace, "--vcd", vcd, "--trace-window", "9s:12s")
	require.Equal(t, 0, code, stderr)

	type track struct{ pid, tid int }
	names, spans := map[string]int{}, map[track][][2]float64{}
	for _, e := range readTrace(t, trace) {
		switch {
		case e.Name == "thread_name":
			names[fmt.Sprint(e.Pid, "/", e.Args["name"])]++
		case e.Ph == "X":
			spans[track{e.Pid, e.Tid}] = append(spans[track{e.Pid, e.Tid}], [2]float64{e.Ts, e.Ts + e.Dur})
		}
	}
	for name, n := range names {
		assert.Equal(t, 1, n, "thread %s named %d times", name, n)
	}
	assert.Contains(t, names, "0/nvme-gen4x4.1.h2c", "the second drive's link is a thread of its own")
	for tr, ss := range spans {
		slices.SortFunc(ss, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
		for i := 1; i < len(ss); i++ {
			// Complete events on one thread must nest; a lane's spans follow one another
			// (a microsecond's float rounding aside).
			assert.LessOrEqual(t, ss[i-1][1], ss[i][0]+1e-6, "thread %v: %v overlaps %v", tr, ss[i-1], ss[i])
		}
	}

	dump, err := os.ReadFile(vcd)
	require.NoError(t, err)
	_, start, ok := strings.Cut(string(dump), "$enddefinitions $end\n#9000000000000\n$dumpvars\n")
	require.True(t, ok, "the dump starts at the window's start")
	initial, _, _ := strings.Cut(start, "$end")
	var fifo1 string
	for _, line := range strings.Split(string(dump), "\n") {
		if f := strings.Fields(line); len(f) == 6 && f[4] == kvstore.LevelFIFO1 {
			fifo1 = f[3]
		}
	}
	require.NotEmpty(t, fifo1, "the dump follows FIFO 1")
	assert.Regexp(t, "(?m)^b1[01]* "+regexp.QuoteMeta(fifo1)+"$", initial, "FIFO 1 holds the free regions from the start, not 0")
}
