package main

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func simrun(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestUsageAndUnknownCommand(t *testing.T) {
	code, _, stderr := simrun("frobnicate")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `unknown command "frobnicate"`)
	code, stdout, _ := simrun("help")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "calibrate")
}

// simrun --help says that a bare simrun runs the default study, and lists
// every flag the study takes (as its own flag set prints them).
func TestHelpDescribesTheDefaultStudy(t *testing.T) {
	code, help, _ := simrun("--help")
	require.Equal(t, 0, code)
	assert.Contains(t, help, "With no command, simrun runs the default study")
	var studyFlags bytes.Buffer
	runStudy([]string{"-h"}, io.Discard, &studyFlags)
	flags := regexp.MustCompile(`(?m)^  -(\w+)`).FindAllStringSubmatch(studyFlags.String(), -1)
	require.NotEmpty(t, flags)
	for _, f := range flags {
		assert.Regexp(t, `(?m)^  --?`+f[1]+` `, help, "the study's flag -%s", f[1])
	}
}

// The report's version names the commit also where the build did not
// record it (go run): git is asked.
func TestVersionNamesTheCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	if rev, _ := gitCommit(); rev == "" {
		t.Skip("not in a git checkout")
	}
	assert.Contains(t, version(), " commit ")
}

func TestCalibrateJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every calibration")
	}
	code, stdout, stderr := simrun("calibrate", "--json")
	require.Equal(t, 0, code, stderr)
	var rows []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &rows))
	require.NotEmpty(t, rows)
	for _, r := range rows {
		keys := []string{}
		for k := range r {
			keys = append(keys, k)
		}
		assert.ElementsMatch(t, []string{"name", "target", "model", "unit", "tolerance", "source", "ok"}, keys)
		assert.Equal(t, true, r["ok"], r["name"])
	}
}

func TestCalibrateTable(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every calibration")
	}
	code, stdout, _ := simrun("calibrate")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "name  ")
	assert.Contains(t, stdout, "kioxia-cm6 QD1 4KiB read latency")
	assert.Regexp(t, `\d+ passed, 0 failed\n$`, stdout)
}

func TestCalibrateRejectsArguments(t *testing.T) {
	code, _, stderr := simrun("calibrate", "extra")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `unexpected argument "extra"`)
	code, _, _ = simrun("calibrate", "--bogus")
	assert.Equal(t, 2, code)
}

// TestCalibrateMeasured compares the model with the measured H100: the
// exit code is 1 exactly when a group's MAPE passes the tolerance, the
// JSON rows carry the four fields, and bad input exits 2.
func TestCalibrateMeasured(t *testing.T) {
	const profile = "../../accel/calibdata/h100-llama-3-8b-2026-11-23.json"
	code, stdout, stderr := simrun("calibrate", "--measured", profile, "--json")
	require.Equal(t, 0, code, "every group of the H100 profile within 10 %%: %s", stderr)
	var rows []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &rows))
	require.Len(t, rows, 36)
	sums, counts := map[string]float64{}, map[string]int{}
	for _, r := range rows {
		assert.ElementsMatch(t, []string{"group", "label", "model_s", "measured_s"}, slices.Collect(maps.Keys(r)))
		g, model, measured := r["group"].(string), r["model_s"].(float64), r["measured_s"].(float64)
		sums[g] += math.Abs(model-measured) / measured
		counts[g]++
	}
	within := true
	for g, sum := range sums {
		within = within && sum/float64(counts[g]) <= 0.10
	}
	assert.Equal(t, map[bool]int{true: 0, false: 1}[within], code, "exit 1 exactly when a group's MAPE is above 10 %")
	code, stdout, _ = simrun("calibrate", "--measured", profile, "--tolerance", "1000")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "group     points  MAPE")
	assert.Contains(t, stdout, "7 groups within 1000%, 0 not")
	code, stdout, _ = simrun("calibrate", "--measured", profile, "--engine", "eager")
	assert.Equal(t, 1, code, "graph-captured decode steps priced as eager ones are far off")
	assert.Regexp(t, `decode +11 +[0-9]{3}\.[0-9]%`, stdout)
	code, _, stderr = simrun("calibrate", "--measured", profile, "--engine", "tensorrt")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `--engine tensorrt: "tensorrt" is not allowed (allowed: cuda-graphs, eager, vllm-v0, vllm-v0-a100)`)
	code, _, stderr = simrun("calibrate", "--measured", filepath.Join(t.TempDir(), "none.json"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "none.json: cannot read the profile")
	code, _, stderr = simrun("calibrate", "--measured", profile, "--device", "tpu")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `unknown accelerator "tpu"`)
}

// TestCalibrateFit: --fit alone reprints the presets' coefficients; with
// --measured it writes a device file that a scenario runs with.
func TestCalibrateFit(t *testing.T) {
	if testing.Short() {
		t.Skip("the presets' fit takes seconds")
	}
	code, stdout, stderr := simrun("calibrate", "--fit")
	require.Equal(t, 0, code, stderr)
	fitted, err := os.ReadFile("../../accel/fitted.go")
	require.NoError(t, err)
	assert.Contains(t, stdout, string(fitted), "the fit prints accel/fitted.go as it stands")
	assert.Contains(t, stdout, "h100-80gb: 160 fitting runs, 150 held out")

	const profile = "../../accel/calibdata/h100-llama-3-8b-2026-11-23.json"
	code, _, stderr = simrun("calibrate", "--measured", profile, "--fit")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "give it with --out FILE.yaml")
	out := filepath.Join(t.TempDir(), "my-gpu.yaml")
	code, stdout, stderr = simrun("calibrate", "--measured", profile, "--fit", "--out", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "the fitted device: prefill")
	code, _, stderr = simrun("run", "-o", t.TempDir(), "--set", "accelerator.device_file="+out, "--set", "workload.sessions=5")
	assert.Equal(t, 0, code, stderr)
}

func TestRunWritesTheThreeFiles(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := simrun("run", "-o", dir, "--set", "workload.sessions=20", "--seed", "3")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "TTFT ms")
	for _, f := range []string{"summary.json", "requests.csv", "scenario.yaml"} {
		assert.FileExists(t, dir+"/"+f)
	}
	var sum map[string]any
	data, err := os.ReadFile(dir + "/summary.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &sum))
	for _, k := range []string{"design", "seed", "requests_completed", "sessions", "sim_time_s", "events",
		"ttft_ms", "tpot_ms", "e2e_ms", "throughput_tokens_per_s", "prompt_tokens", "prefill_tokens_computed",
		"prefill_tokens_reused", "hit_ratio_tokens", "decisions", "bytes", "utilization", "evictions", "invariant_checks"} {
		assert.Contains(t, sum, k)
	}
	assert.Equal(t, 3.0, sum["seed"])
	resolved, err := os.ReadFile(dir + "/scenario.yaml")
	require.NoError(t, err)
	assert.Contains(t, string(resolved), "sessions: 20")
}

// A run's line and summary.json say why its rejected requests were
// refused: one past the context window, one too large for the KV memory.
func TestRunSaysWhyRequestsWereRejected(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "rejects.jsonl")
	require.NoError(t, os.WriteFile(trace, []byte(
		`{"session": "past-window", "turn": 0, "arrival_s": 0, "new_tokens": 9000, "output_tokens": 10}
{"session": "too-big", "turn": 0, "arrival_s": 1, "new_tokens": 7000, "output_tokens": 10}
`), 0o644))
	dir := t.TempDir()
	code, stdout, stderr := simrun("run", "-o", dir, "--set", "workload.kind=sessions", "--set", "workload.path="+trace,
		"--set", "workload.context_policy=reject", "--set", "accelerator.kv_capacity=1GiB")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "0 completed, 2 rejected (context_window 1, kv_memory 1), 0 truncated")
	var sum struct {
		ByReason map[string]int64 `json:"requests_rejected_by_reason"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &sum))
	assert.Equal(t, map[string]int64{"context_window": 1, "kv_memory": 1}, sum.ByReason)
}

func TestRunBadInputExitsTwoWithOneMessage(t *testing.T) {
	bad := t.TempDir() + "/bad.yaml"
	require.NoError(t, os.WriteFile(bad, []byte("system:\n  nodes: -1\n"), 0o644))
	cases := [][]string{
		{"run", "-c", bad},
		{"run", "-c", t.TempDir() + "/none.yaml"},
		{"run", "--set", "fpga.hashing=md5"},
		{"run", "--seed", "x"},
		{"run", "extra"},
	}
	for _, args := range cases {
		code, _, stderr := simrun(args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "%v: one line: %s", args, stderr)
		assert.NotContains(t, stderr, "goroutine", "no stack trace")
	}
	_, _, stderr := simrun("run", "-c", bad)
	assert.Contains(t, stderr, "bad.yaml:2: key system.nodes: -1 is out of range")
}

// TestRunWarnsOfDeltaExportsInClaim9: the run goes on, and standard error
// says why it is slow and what to set instead.
func TestRunWarnsOfDeltaExportsInClaim9(t *testing.T) {
	code, _, stderr := simrun("run", "-o", t.TempDir(), "--set", "workload.sessions=2", "--set", "fpga.export_mode=delta")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "simrun run: warning: --set fpga.export_mode=delta: key fpga.export_mode: delta exports in the claim9 layout")
	assert.Contains(t, stderr, "fpga.layout=layer-major")
}
