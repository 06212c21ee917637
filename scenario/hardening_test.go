package scenario

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loadAndBuild loads a scenario (a file when text is not empty) and builds
// it, returning the first error.
func loadAndBuild(t *testing.T, text string, sets []string) error {
	path := ""
	if text != "" {
		path = writeScenario(t, text)
	}
	l, err := Load(path, sets)
	if err != nil {
		return err
	}
	_, err = Build(l)
	return err
}

// Every reproducer of a scenario a user can feed: each is an error naming
// where the culprit was set and its key.
func TestScenarioReproducersNameTheCulprit(t *testing.T) {
	sessions := writeTrace(t, `{"session": "a", "turn": 0, "arrival_s": 0, "new_tokens": 3, "output_tokens": 1, "node": 7}`+"\n")
	epoch := writeTrace(t, `{"timestamp": 1700000000000, "input_length": 10, "output_length": 1, "hash_ids": [0]}`+"\n")
	cases := []struct {
		name, yaml string
		sets       []string
		want       string
	}{
		{"request overhead", "", []string{"cpu.request_overhead=1000000s", "workload.sessions=20"}, "--set cpu.request_overhead=1000000s: key cpu.request_overhead: 1000000s is more than the limit of 1s"},
		{"decision overhead", "", []string{"cpu.decision_overhead=9000000s"}, "key cpu.decision_overhead: 9000000s is more than the limit of 1s"},
		{"host access", "", []string{"cpu.host_access=9000000s"}, "key cpu.host_access: 9000000s is more than the limit of 1s"},
		{"network latency", "", []string{"system.network_latency=9000000s", "system.nodes=2"}, "key system.network_latency: 9000000s is more than the limit of 1s"},
		{"ttl", "", []string{"fpga.ttl=9000000s"}, "key fpga.ttl: 9000000s is more than the limit of 2000000s"},
		{"overheads in total", "", []string{"cpu.request_overhead=1s", "cpu.decision_overhead=1s", "workload.sessions=200000", "workload.session_rate_per_s=1",
			// one-token prompts and outputs keep the run's memory estimate (1.6 GB) within its 4 GB limit
			"workload.first_prompt_median_tokens=1", "workload.first_prompt_p90_tokens=1", "workload.follow_up_median_tokens=1",
			"workload.follow_up_p90_tokens=1", "workload.output_median_tokens=1", "workload.output_p90_tokens=1"},
			"--set cpu.request_overhead=1s: key cpu.request_overhead: about 7.02e+05 requests of 2.00001009s overheads each"},
		{"arrivals past the horizon", "", []string{"workload.session_rate_per_s=1e-6"}, "--set workload.session_rate_per_s=1e-6: key workload.session_rate_per_s: workload.session_rate_per_s = 1e-06: 400 sessions arrive over about 4e+08 s"},
		{"time scale", "", []string{"workload.kind=mooncake", "workload.path=../workloads/testdata/mooncake_synthetic_trace.jsonl.gz", "workload.time_scale=1e9"},
			"--set workload.time_scale=1e9: key workload.time_scale: 1e+09 x the last arrival 1022.025s (../workloads/testdata/mooncake_synthetic_trace.jsonl.gz:3993) is past the 2000000s limit"},
		{"epoch trace", "", []string{"workload.kind=mooncake", "workload.path=" + epoch}, epoch + ":1: field timestamp: 1700000000000 is 1.7e+09 s"},
		{"sessions node", "", []string{"workload.kind=sessions", "workload.path=" + sessions}, sessions + ":1: field node: 7: the system has 1 node(s) (system.nodes)"},
		{"system prompt", "", []string{"workload.system_prompt_tokens=10000000000"}, "--set workload.system_prompt_tokens=10000000000: key workload.system_prompt_tokens: 400 sessions of 3.51 turns (system prompt 10000000000 tokens) would take about 9.6e+04 GB in a run, more than the 4 GiB limit (workload.memory_limit_gib, on a machine with room)"},
		{"sessions", "", []string{"workload.sessions=10000000"}, "--set workload.sessions=10000000: key workload.sessions: 10000000 sessions of 3.51 turns"},
		{"sessions past 4 GB", "", []string{"workload.sessions=290000", "workload.session_rate_per_s=1"},
			"--set workload.sessions=290000: key workload.sessions: 290000 sessions of 3.51 turns (system prompt 0 tokens) would take about 23.5 GB in a run, more than the 4 GiB limit (workload.memory_limit_gib, on a machine with room)"},
		{"turns", "", []string{"workload.turns_mean=1e9"}, "--set workload.turns_mean=1e9: key workload.turns_mean: 400 sessions of 1e+09 turns"},
		{"duplicate top key", "seed: 1\nseed: 2\n", nil, "scenario.yaml:2: key seed: set twice, on lines 1 and 2"},
		{"duplicate nested key", "cpu:\n  cores: 2\n  hash_gbps: 3\n  cores: 4\n", nil, "scenario.yaml:4: key cpu.cores: set twice, on lines 2 and 4"},
		{"duplicate section", "cpu:\n  cores: 2\ncpu:\n  hash_gbps: 3\n", nil, "scenario.yaml:3: key cpu: set twice, on lines 1 and 3"},
		{"seed 2^64", "seed: 18446744073709551616\n", nil, `scenario.yaml:1: key seed: cannot use "18446744073709551616": want a whole number in range`},
		{"seed float", "", []string{"seed=1.5"}, `--set seed=1.5: key seed: cannot use "1.5": want a whole number in range`},
		{"empty seed", "", []string{"seed="}, `--set seed=: key seed: cannot use "": want a whole number`},
		{"null nodes", "", []string{"system.nodes=~"}, `--set system.nodes=~: key system.nodes: empty value "~": want a whole number`},
		{"empty nodes", "system:\n  nodes:\n", nil, `scenario.yaml:2: key system.nodes: empty value "": want a whole number`},
		{"empty design", "system:\n  design:\n", nil, `scenario.yaml:2: key system.design: empty value "": want a string`},
		{"list value", "seed: [1, 2]\n", nil, "scenario.yaml:1: key seed: want a whole number, not a mapping or a list"},
		{"tp", "accelerator:\n  tp: 3\n", nil, `scenario.yaml:2: key accelerator.tp: model "llama-3-70b": tp = 3 must divide its 64 heads`},
		{"custom layers", "model: custom\ncustom_model:\n  layers: 0\n  hidden: 64\n", nil, "scenario.yaml:3: key custom_model.layers: 0 is out of range (allowed: 1 to 16777216)"},
		{"a negative memory limit", "", []string{"workload.memory_limit_gib=-1"}, "--set workload.memory_limit_gib=-1: key workload.memory_limit_gib: -1 is out of range (allowed: 1 to 256)"},
		{"a memory limit below a run's own", "", []string{"workload.memory_limit_gib=0.01"}, "--set workload.memory_limit_gib=0.01: key workload.memory_limit_gib: 0.01 is out of range (allowed: 1 to 256)"},
		{"kv capacity", "", []string{"accelerator.kv_capacity=1B"}, "--set accelerator.kv_capacity=1B: key accelerator.kv_capacity: 1B is less than one 16-token block of 5242880 B"},
		{"a reserve leaving less than a block", "", []string{"accelerator.reserve_gb=44.7231"},
			"--set accelerator.reserve_gb=44.7231: key accelerator.reserve_gb: the device's memory leaves 187008 B for KV, less than one 16-token block of 5242880 B"},
		// issue 43: arrivals, tenants and objectives
		{"unknown arrival", "", []string{"workload.arrival=bursty"}, `--set workload.arrival=bursty: key workload.arrival: "bursty" is not allowed (allowed: poisson, gamma, diurnal, spike)`},
		{"empty arrival", "", []string{"workload.arrival="}, `key workload.arrival: "" is not allowed (allowed: poisson, gamma, diurnal, spike)`},
		{"gamma cv 0", "", []string{"workload.arrival=gamma", "workload.gamma_cv=0"}, "--set workload.gamma_cv=0: key workload.gamma_cv: workload.gamma_cv = 0: must be in (0, 10]"},
		{"gamma cv negative", "workload:\n  arrival: gamma\n  gamma_cv: -1\n", nil, "scenario.yaml:3: key workload.gamma_cv: workload.gamma_cv = -1: must be in (0, 10]"},
		{"gamma cv for poisson", "", []string{"workload.gamma_cv=2"}, "--set workload.gamma_cv=2: key workload.gamma_cv: 2: only workload.arrival gamma reads it, and workload.arrival is poisson"},
		{"diurnal ratio under 1", "", []string{"workload.arrival=diurnal", "workload.diurnal_peak_to_trough=0.5"}, "key workload.diurnal_peak_to_trough: workload.diurnal_peak_to_trough = 0.5: must be in [1, 1000]"},
		{"diurnal period 0", "", []string{"workload.arrival=diurnal", "workload.diurnal_period_s=0"}, "key workload.diurnal_period_s: workload.diurnal_period_s = 0: must be in [1, 2e+06] s"},
		{"spike after the arrivals", "", []string{"workload.arrival=spike", "workload.spike_at_s=5000"}, "key workload.spike_at_s: workload.spike_at_s = 5000: must be in (0, 800) s, before the sessions' expected arrival span"},
		{"spike height under 1", "", []string{"workload.arrival=spike", "workload.spike_height=0.5"}, "key workload.spike_height: workload.spike_height = 0.5: must be in [1, 1000]"},
		{"spike length 0", "", []string{"workload.arrival=spike", "workload.spike_length_s=0"}, "key workload.spike_length_s: workload.spike_length_s = 0: must be in (0, 2e+06] s"},
		{"arrival for a trace", "", []string{"workload.kind=mooncake", "workload.path=../workloads/testdata/mooncake_synthetic_trace.jsonl.gz", "workload.arrival=gamma"},
			"--set workload.arrival=gamma: key workload.arrival: gamma: only the synthetic generator reads it, and workload.kind is mooncake"},
		{"tenants for a trace", "", []string{"workload.kind=mooncake", "workload.path=../workloads/testdata/mooncake_synthetic_trace.jsonl.gz", "workload.tenants=[{name: a, share: 1}]"},
			"key workload.tenants: only the synthetic generator has tenants, and workload.kind is mooncake"},
		{"ttft objective 0", "", []string{"slo.ttft_ms=0"}, "--set slo.ttft_ms=0: key slo.ttft_ms: 0 is out of range: an objective is positive, in milliseconds (allowed: above 0, to 2e+09)"},
		{"tpot objective negative", "slo:\n  tpot_ms: -5\n", nil, "scenario.yaml:2: key slo.tpot_ms: -5 is out of range"},
		{"tenant objective 0", "workload:\n  tenants:\n    - {name: a, share: 1, slo: {ttft_ms: 0}}\n", nil, "scenario.yaml:3: key workload.tenants[0].slo.ttft_ms: 0 is out of range"},
		{"tenant shares short of 1", "workload:\n  tenants:\n    - {name: a, share: 0.5}\n    - {name: b, share: 0.4}\n", nil,
			"scenario.yaml:3: key workload.tenants: the shares sum to 0.9: they must sum to 1 (within 1e-09)"},
		{"tenant share 0", "workload:\n  tenants:\n    - {name: a, share: 0}\n    - {name: b, share: 1}\n", nil, "scenario.yaml:3: key workload.tenants[0].share: workload.tenants[0].share = 0: must be in (0, 1]"},
		{"tenant unknown key", "", []string{"workload.tenants=[{name: a, share: 1, colour: red}]"}, "key workload.tenants[0].colour: unknown key (valid keys here: first_prompt_median_tokens, first_prompt_p90_tokens, follow_up_median_tokens, follow_up_p90_tokens, name, output_median_tokens, output_p90_tokens, share, slo)"},
		{"tenant named twice", "", []string{"workload.tenants=[{name: a, share: 0.5}, {name: a, share: 0.5}]"}, `key workload.tenants[1].name: "a": each tenant needs a name of its own (tenant 0 has it too)`},
		{"tenant without a name", "", []string{"workload.tenants=[{share: 1}]"}, "key workload.tenants[0].name: each tenant needs a name"},
		{"tenant length 0", "", []string{"workload.tenants=[{name: a, share: 1, output_median_tokens: 0}]"}, "key workload.tenants[0].output_median_tokens: median 0: must be positive and finite"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := loadAndBuild(t, c.yaml, c.sets)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestEmptyStringKeyMayBeSetEmpty(t *testing.T) {
	l, err := Load("", []string{"workload.path=a", "workload.path="})
	require.NoError(t, err)
	assert.Equal(t, "", l.Workload.Path)
}

func TestScenarioFileIsBounded(t *testing.T) {
	big := strings.Repeat("# a comment\n", MaxScenarioBytes/12+1)
	_, err := Load(writeScenario(t, big), nil)
	assert.ErrorContains(t, err, "scenario.yaml: cannot read the scenario: larger than the 1024 KiB limit of a scenario file")
	if _, statErr := os.Stat("/dev/zero"); statErr == nil {
		_, err = Load("/dev/zero", nil)
		assert.ErrorContains(t, err, "/dev/zero: cannot read the scenario: larger than the 1024 KiB limit")
	}
}

// TestNoAcceptedScenarioOverflowsTime draws scenarios with durations and
// rates from their whole ranges and beyond: each is refused, or runs to
// its end without the engine's overflow check firing (a panic).
func TestNoAcceptedScenarioOverflowsTime(t *testing.T) {
	draws := 60
	if testing.Short() {
		draws = 12
	}
	rng := rand.New(rand.NewPCG(20, 1))
	duration := func(maxS float64) string { return fmt.Sprintf("%.6fs", rng.Float64()*maxS) } // up to 10% past the limit
	accepted := 0
	for i := range draws {
		sets := []string{
			"model=llama-3-8b", "accelerator.tp=1", "system.design=" + []string{"recompute", "cpu", "fpga"}[i%3],
			"system.nodes=" + fmt.Sprint(1+rng.IntN(2)),
			"cpu.request_overhead=" + duration(1.1), "cpu.decision_overhead=" + duration(1.1),
			"cpu.host_access=" + duration(1.1), "system.network_latency=" + duration(1.1),
			"fpga.free_delay=" + duration(2.2e6), "fpga.ttl=" + duration(2.2e6),
			fmt.Sprintf("workload.session_rate_per_s=%g", 1e-6*float64(rng.IntN(1e6)+1)),
			fmt.Sprintf("workload.sessions=%d", 1+rng.IntN(6)),
			fmt.Sprintf("workload.turns_mean=%g", 1+rng.Float64()*4),
		}
		l, err := Load("", sets)
		if err != nil {
			continue
		}
		r, err := Build(l)
		require.NoError(t, err, "%v", sets)
		res, err := r.Execute()
		require.NoError(t, err, "%v", sets)
		assert.Positive(t, res.Summary().RequestsCompleted, "%v", sets)
		accepted++
	}
	t.Logf("%d of %d draws accepted", accepted, draws)
	assert.Positive(t, accepted, "some draws are accepted")
	assert.Less(t, accepted, draws, "some draws are refused")
}

func FuzzLoad(f *testing.F) {
	f.Add("seed: 2\nsystem:\n  nodes: 2\n", "cpu.cores=4")
	f.Add("cpu:\n  cores: 2\n  cores: 3\n", "seed=")
	f.Add("workload:\n  sessions: 3\n  turns_mean: 2\n", "accelerator.kv_capacity=64KiB")
	f.Fuzz(func(t *testing.T, text, set string) {
		path := filepath.Join(t.TempDir(), "s.yaml")
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		l, err := Load(path, []string{set})
		if err != nil {
			return
		}
		require.NotNil(t, l.resolved)
		_, _ = Load("", []string{set}) // a --set alone
	})
}

// A machine with room raises the synthetic run's memory limit: the day of
// a cluster (BenchmarkClusterDay) is estimated at 23 GB.
func TestMemoryLimitCanBeRaised(t *testing.T) {
	_, err := Load("", []string{"workload.sessions=285000", "workload.session_rate_per_s=3.3"})
	assert.ErrorContains(t, err, "more than the 4 GiB limit")
	_, err = Load("", []string{"workload.sessions=285000", "workload.session_rate_per_s=3.3", "workload.memory_limit_gib=32"})
	assert.NoError(t, err)
}
