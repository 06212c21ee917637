package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSweep writes a sweep folder by hand: its manifest and a table with
// one row per row given.
func fakeSweep(t *testing.T, m sweepManifest, points ...[]string) string {
	t.Helper()
	dir := t.TempDir()
	rows := [][]string{sweepHeader(m.Keys, false)}
	for _, p := range points {
		row := append([]string{}, p...)
		for len(row) < len(rows[0]) {
			row = append(row, "1")
		}
		rows = append(rows, row)
	}
	require.NoError(t, writeSweepFiles(dir, rows, m))
	return dir
}

// writeFile writes body to name in a fresh folder and returns its path.
func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	return path
}

// TestBadInputExitsTwoNamingTheCulprit holds issue 20's reproducers for the
// commands: each exits 2, names the argument, key, file or line at fault,
// and leaves no output folder behind.
func TestBadInputExitsTwoNamingTheCulprit(t *testing.T) {
	dir := t.TempDir()
	out := func(name string) string { return filepath.Join(dir, name) }
	one := sweepManifest{Points: 2, Keys: []string{"system.design"}, Shard: "0/2", Scenario: "a", Values: [][]string{{"cpu", "fpga"}}}
	shard0 := fakeSweep(t, one, []string{"0", "cpu"})
	other := one
	other.Scenario, other.Shard = "b", "1/2"
	shard1Other := fakeSweep(t, other, []string{"1", "fpga"})
	otherValues := one
	otherValues.Values, otherValues.Shard = [][]string{{"cpu", "recompute"}}, "1/2"
	shard1Values := fakeSweep(t, otherValues, []string{"1", "recompute"})
	shard0Again := fakeSweep(t, one, []string{"0", "cpu"})
	noKeys := fakeSweep(t, sweepManifest{Points: 1, Scenario: "a"}, []string{"0"})
	headerOnly := fakeSweep(t, one)
	beam := `{"schema": "hf-beam-golden/v1", "cases": [{"name": "tiny", "params": {"vocab_size": %s, "num_beams": 1, "early_stopping": true, "max_length": 4, "eos_token_id": 0}, "prompts": [[0]], "model_check": [{"tokens": [0], "prefix_hash": "0", "logits_head": [0, 0]}], "expected": {"num_steps": 1}}]}`
	var many []string
	for i := range 400 {
		many = append(many, strconv.Itoa(i+1))
	}
	seeds := strings.Join(many, ", ")
	topKP := `{"schema": "ascend-topktoppsample-v2-golden/v1", "cases": [{"name": "x", "inputs": {"batch": 1, "vocab": 2, "logits": [[1, 2]], "top_k": [0], "top_p": [1.0], "eps": 1e-8, "is_need_logits": true, "top_k_guess": 32, "ks_max": 1024}, "expected": {"logits_top_kp_select": {"fill": "-inf", "entries": [[[%s, 2]]]}}}]}`
	mooncakeEpoch := writeFile(t, "epoch.jsonl", `{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}`+"\n"+
		`{"timestamp": 1700000000000, "input_length": 10, "output_length": 2, "hash_ids": [2]}`+"\n")
	mooncakeNaN := writeFile(t, "nan.jsonl", `{"timestamp": "NaN", "input_length": 10, "output_length": 2, "hash_ids": [1]}`+"\n")
	dupKeys := writeFile(t, "scenario.yaml", "system:\n  nodes: 1\n  nodes: 2\n")
	bigSeed := writeFile(t, "scenario.yaml", "seed: 18446744073709551616\n")
	tp3 := writeFile(t, "scenario.yaml", "accelerator:\n  tp: 3\n")
	cases := []struct {
		name string
		args []string
		want []string
		left string // a folder that must not exist afterwards
	}{
		{"sweep duplicate grid key", []string{"sweep", "-c", writeSweepFile(t, "grid:\n  system.nodes: [1, 2]\n  system.nodes: [3]\n"), "-o", out("s1")},
			[]string{"sweep.yaml:3: key system.nodes: written twice (first at ", "sweep.yaml:2)"}, out("s1")},
		{"sweep key in set and grid", []string{"sweep", "-c", writeSweepFile(t, "set:\n  seed: 2\ngrid:\n  seed: [3]\n"), "-o", out("s2")},
			[]string{"sweep.yaml:4: key seed: written twice (first at ", "sweep.yaml:2)"}, out("s2")},
		{"sweep section twice", []string{"sweep", "-c", writeSweepFile(t, "grid:\n  seed: [3]\ngrid:\n  seed: [4]\n"), "-o", out("s3")},
			[]string{"sweep.yaml:3: key grid: written twice"}, out("s3")},
		{"sweep bad point names its line", []string{"sweep", "-c", writeSweepFile(t, "grid:\n  system.nodes: [1, -1]\n"), "-o", out("s4")},
			[]string{"point 1 (system.nodes set at ", "sweep.yaml:2)", "key system.nodes"}, out("s4")},
		{"sweep too many points", []string{"sweep", "-c", writeSweepFile(t, "grid:\n  seed: ["+seeds+"]\n  workload.sessions: ["+seeds+"]\n"), "-o", out("s7")},
			[]string{"sweep.yaml:1: key grid: more than 100000 points"}, out("s7")},
		{"sweep value twice", []string{"sweep", "-c", writeSweepFile(t, "grid:\n  seed: [1, 2, 1]\n"), "-o", out("s8")},
			[]string{"sweep.yaml:2: key seed: value \"1\" listed twice"}, out("s8")},
		{"sweep when not a grid value", []string{"sweep", "-c", writeSweepFile(t, "grid:\n  seed: [1, 2]\nwhen:\n  seed=3:\n    system.nodes: 2\n"), "-o", out("s9")},
			[]string{"sweep.yaml:4: key when: \"seed=3\" is not a grid key=value (the grid: seed)"}, out("s9")},
		{"sweep when overrides a grid key", []string{"sweep", "-c", writeSweepFile(t, "grid:\n  seed: [1, 2]\n  system.nodes: [1, 2]\nwhen:\n  seed=1:\n    system.nodes: 4\n"), "-o", out("s10")},
			[]string{"sweep.yaml:6: key system.nodes: written twice (first at ", "sweep.yaml:3)"}, out("s10")},
		{"sweep when value twice", []string{"sweep", "-c", writeSweepFile(t, "grid:\n  seed: [1, 2]\nwhen:\n  seed=1:\n    system.nodes: 2\n  seed=1:\n    system.nodes: 3\n"), "-o", out("s11")},
			[]string{"sweep.yaml:6: key when: \"seed=1\" written twice (first at ", "sweep.yaml:4)"}, out("s11")},
		{"sweep when bad point names its line", []string{"sweep", "-c", writeSweepFile(t, "grid:\n  seed: [1, 2]\nwhen:\n  seed=2:\n    system.nodes: -1\n"), "-o", out("s12")},
			[]string{"point 1 (system.nodes set at ", "sweep.yaml:5)", "key system.nodes"}, out("s12")},
		{"sweep when override names its line", []string{"sweep", "-c", writeSweepFile(t, "set:\n  system.nodes: 1\ngrid:\n  seed: [1, 2]\nwhen:\n  seed=2:\n    system.nodes: -1\n"), "-o", out("s13")},
			[]string{"point 1 (system.nodes set at ", "sweep.yaml:7)", "key system.nodes"}, out("s13")},
		{"sweep -j 0", []string{"sweep", "-c", writeSweepFile(t, smallSweep), "-o", out("s5"), "-j", "0"}, []string{"-j 0: want 1 to 1024"}, out("s5")},
		{"study -j 0", []string{"-o", out("s6"), "-j", "0"}, []string{"simrun: -j 0: want 1 to 1024"}, out("s6")},
		{"report header only", []string{"report", "-i", headerOnly}, []string{headerOnly, "sweep.csv: no points, only a header"}, ""},
		{"report no keys", []string{"report", "-i", noKeys}, []string{noKeys, `sweep.json: "keys" is empty`}, ""},
		{"merge header only", []string{"merge", "-o", out("m0"), headerOnly}, []string{"no points, only a header"}, out("m0")},
		{"merge other scenario", []string{"merge", "-o", out("m1"), shard0, shard1Other}, []string{shard1Other, "belongs to another sweep", `scenario "b", not "a"`}, out("m1")},
		{"merge other grid values", []string{"merge", "-o", out("m2"), shard0, shard1Values}, []string{"belongs to another sweep", "grid values"}, out("m2")},
		{"merge into an input", []string{"merge", "-o", shard0, shard0, shard1Values}, []string{"-o " + shard0 + " is one of the folders to merge"}, ""},
		{"kernels beam vocab 1", []string{"kernels", "--vectors", writeFile(t, "v.json", fmt.Sprintf(beam, "1"))}, []string{"vocab = 1: must be at least 2 x num_beams"}, ""},
		{"kernels huge vocab", []string{"kernels", "--vectors", writeFile(t, "v.json", fmt.Sprintf(beam, "1099511627776"))}, []string{"params.vocab_size = 1099511627776: want 1 to 16777216"}, ""},
		{"kernels no expected", []string{"kernels", "--vectors", writeFile(t, "v.json", `{"schema": "hf-beam-golden/v1", "cases": [{"name": "bare"}]}`)}, []string{"v.json: case bare: no expected block"}, ""},
		{"kernels no cases", []string{"kernels", "--vectors", writeFile(t, "v.json", `{"schema": "hf-beam-golden/v1", "cases": []}`)}, []string{"v.json: no cases"}, ""},
		{"run with a missing trace", []string{"run", "-o", out("r1"), "--set", "workload.kind=mooncake", "--set", "workload.path=" + out("none.jsonl")}, []string{"none.jsonl"}, out("r1")},
		{"verify too many sessions", []string{"verify", "--sessions", "1000000000"}, []string{"--sessions 1000000000: want 1 to 10000"}, ""},
		{"explain negative session", []string{"explain", "--session", "-1"}, []string{"--session -1: want a session id, 0 or more"}, ""},
		// the core half's reproducers, end to end through the commands
		{"run overhead overflows time", []string{"run", "-o", out("c1"), "--set", "cpu.request_overhead=1000000s", "--set", "workload.sessions=20"},
			[]string{"key cpu.request_overhead"}, out("c1")},
		{"run arrivals past the horizon", []string{"run", "-o", out("c2"), "--set", "workload.session_rate_per_s=1e-6"},
			[]string{"key workload.session_rate_per_s"}, out("c2")},
		{"run epoch timestamps", []string{"run", "-o", out("c3"), "--set", "workload.kind=mooncake", "--set", "workload.path=" + mooncakeEpoch},
			[]string{mooncakeEpoch + ":2: field timestamp"}, out("c3")},
		{"run NaN timestamp", []string{"run", "-o", out("c4"), "--set", "workload.kind=mooncake", "--set", "workload.path=" + mooncakeNaN},
			[]string{mooncakeNaN + ":1: field timestamp"}, out("c4")},
		{"run duplicate key", []string{"run", "-o", out("c5"), "-c", dupKeys}, []string{"scenario.yaml:3: key system.nodes"}, out("c5")},
		// messages that named an empty path or read a folder as lines
		{"run -o empty", []string{"run", "-o", ""}, []string{`-o "": name an output folder`}, ""},
		{"trace-stats no path", []string{"trace-stats", "mooncake:"}, []string{"usage: simrun trace-stats FORMAT:PATH"}, ""},
		{"run a folder as trace", []string{"run", "-o", out("c8"), "--set", "workload.kind=mooncake", "--set", "workload.path=" + t.TempDir()}, []string{"is a folder, not a trace file"}, out("c8")},
		{"sweep missing base", []string{"sweep", "-c", writeSweepFile(t, "base: nope.yaml\ngrid:\n  seed: [1]\n"), "-o", out("s14")},
			[]string{"sweep.yaml:1: key base: ", "nope.yaml: not a scenario file"}, out("s14")},
		// the --set used to win without a word
		{"run seed given twice", []string{"run", "-o", out("c6"), "--seed", "3", "--set", "seed=4"}, []string{"--seed 3 and --set seed=4 both give the seed: use one"}, out("c6")},
		{"run seed out of range", []string{"run", "-o", out("c7"), "--seed", "18446744073709551616"}, []string{"want a whole number from 0 to 18446744073709551615"}, out("c7")},
		{"run seed too large", []string{"run", "-o", out("c6"), "-c", bigSeed}, []string{"scenario.yaml:1: key seed"}, out("c6")},
		{"run huge system prompt", []string{"run", "-o", out("c7"), "--set", "workload.system_prompt_tokens=10000000000"},
			[]string{"workload.system_prompt_tokens"}, out("c7")},
		{"run empty nodes", []string{"run", "-o", out("c8"), "--set", "system.nodes=~"}, []string{"system.nodes"}, out("c8")},
		{"run tp 3 in the user's file", []string{"run", "-o", out("c9"), "-c", tp3}, []string{"scenario.yaml:2: key accelerator.tp"}, out("c9")},
		// issue 43: arrivals, tenants and objectives
		{"run unknown arrival", []string{"run", "-o", out("a1"), "--set", "workload.arrival=bursty"},
			[]string{"key workload.arrival", "(allowed: poisson, gamma, diurnal, spike)"}, out("a1")},
		{"run gamma cv 0", []string{"run", "-o", out("a2"), "--set", "workload.arrival=gamma", "--set", "workload.gamma_cv=0"},
			[]string{"key workload.gamma_cv", "must be in (0, 10]"}, out("a2")},
		{"run objective not positive", []string{"run", "-o", out("a3"), "--set", "slo.tpot_ms=-1"}, []string{"key slo.tpot_ms", "an objective is positive"}, out("a3")},
		{"run tenant shares not 1", []string{"run", "-o", out("a4"), "--set", "workload.tenants=[{name: a, share: 0.6}, {name: b, share: 0.6}]"},
			[]string{"key workload.tenants", "the shares sum to 1.2: they must sum to 1"}, out("a4")},
		{"run unknown tenant key", []string{"run", "-o", out("a5"), "-c", writeFile(t, "scenario.yaml", "workload:\n  tenants:\n    - {name: a, share: 1, weight: 2}\n")},
			[]string{"scenario.yaml:3: key workload.tenants[0].weight: unknown key"}, out("a5")},
		{"trace-stats every line bad", []string{"trace-stats", "mooncake:" + mooncakeNaN}, []string{mooncakeNaN + ":1: field timestamp"}, ""},
		// issue 38: each panicked, ran silently wrong or was accepted against the docs
		{"kernels expected index past the vocab", []string{"kernels", "--vectors", writeFile(t, "v.json", fmt.Sprintf(topKP, "1000"))},
			[]string{"v.json: case x: expected.logits_top_kp_select.entries[0][0] index 1000: want a whole number from 0 to inputs.vocab-1 = 1"}, ""},
		{"kernels negative expected index", []string{"kernels", "--vectors", writeFile(t, "v.json", fmt.Sprintf(topKP, "-7"))},
			[]string{"entries[0][0] index -7: want a whole number"}, ""},
		{"run two documents", []string{"run", "-o", out("d1"), "-c", writeFile(t, "two.yaml", "seed: 3\n---\nseed: 4\n")},
			[]string{"two.yaml:2: a second YAML document"}, out("d1")},
		{"sweep two documents", []string{"sweep", "-c", writeSweepFile(t, "grid:\n  seed: [1]\n---\ngrid:\n  seed: [2]\n"), "-o", out("d2")},
			[]string{"sweep.yaml:3: a second YAML document"}, out("d2")},
		{"calibrate --tolerance Inf", []string{"calibrate", "--measured", measuredProfile, "--tolerance", "Inf"},
			[]string{"--tolerance +Inf: want a positive, finite percentage"}, ""},
		{"calibrate --tolerance NaN", []string{"calibrate", "--measured", measuredProfile, "--tolerance", "NaN"}, []string{"--tolerance NaN: want a positive, finite"}, ""},
		{"calibrate --engine without --measured", []string{"calibrate", "--engine", "eager"},
			[]string{"--engine: not read by calibrate without --measured or --fit (it reads --json)"}, ""},
		{"calibrate --device with --fit alone", []string{"calibrate", "--fit", "--device", "h100-sxm"}, []string{"--device: not read by calibrate --fit"}, ""},
		{"calibrate --engine with --measured --fit", []string{"calibrate", "--measured", measuredProfile, "--fit", "--out", out("f.yaml"), "--engine", "eager"},
			[]string{"--engine: not read by calibrate --measured --fit (it reads --measured, --fit, --device, --out)"}, ""},
		{"merge one folder twice", []string{"merge", "-o", out("m3"), shard0, shard0}, []string{shard0 + " is given twice (folders 1 and 2 to merge)"}, out("m3")},
		{"merge a point in two shards", []string{"merge", "-o", out("m4"), shard0, shard0Again}, []string{"point 0 is in two shards, " + shard0 + " and " + shard0Again}, out("m4")},
		{"calibrate --device unknown", []string{"calibrate", "--measured", measuredProfile, "--device", "nope"}, []string{`--device nope: unknown accelerator "nope"`}, ""},
		{"calibrate --engine unknown", []string{"calibrate", "--measured", measuredProfile, "--engine", "nope"}, []string{`--engine nope: "nope" is not allowed`}, ""},
		{"regress --dir missing", []string{"regress", "--dir", out("none")}, []string{"--dir " + out("none") + ": not a folder of micro-scenarios"}, ""},
		{"run unknown fpga.forward", []string{"run", "-o", out("e3"), "--set", "fpga.forward=cut-through"},
			[]string{`key fpga.forward: "cut-through" is not allowed (allowed: stream, store-and-forward)`}, out("e3")},
		{"run --seed empty", []string{"run", "-o", out("e1"), "--seed", ""}, []string{`--seed "": want a whole number from 0 to 18446744073709551615`}, out("e1")},
		{"study given a design", []string{"-o", out("e2"), "--set", "system.design=recompute"},
			[]string{"simrun: --set system.design=recompute: key system.design: recompute: the default study runs every design"}, out("e2")},
		{"calibrate duplicate gpu", []string{"calibrate", "--measured", writeFile(t, "p.json", "{\"gpu\": \"NVIDIA H100\",\n\"gpu\": \"NVIDIA A100\"}")},
			[]string{"p.json: line 2: key gpu: written twice (first on line 1)"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := simrun(c.args...)
			assert.Equal(t, 2, code, "%v\n%s", c.args, stderr)
			for _, w := range c.want {
				assert.Contains(t, stderr, w, "%v", c.args)
			}
			if c.left != "" {
				assert.NoDirExists(t, c.left)
			}
		})
	}
}
