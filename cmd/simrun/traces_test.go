package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunWritesPerfettoAndVCDTraces(t *testing.T) {
	dir := t.TempDir()
	trace, vcd := filepath.Join(dir, "t.json"), filepath.Join(dir, "t.vcd")
	code, _, stderr := simrun("run", "-o", filepath.Join(dir, "out"), "--set", "workload.sessions=20",
		"--trace", trace, "--vcd", vcd, "--trace-window", "0s:60s", "--trace-filter", "node0,kioxia")
	require.Equal(t, 0, code, stderr)

	var doc struct {
		TraceEvents []struct {
			Name, Ph string
			Ts, Dur  float64
			Pid, Tid int
			Args     map[string]string
		} `json:"traceEvents"`
	}
	data, err := os.ReadFile(trace)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &doc))
	threads := map[string]bool{}
	complete := 0
	for _, e := range doc.TraceEvents {
		switch e.Ph {
		case "M":
			if e.Name == "thread_name" {
				threads[e.Args["name"]] = true
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
