package scenario

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/workloads"
)

// TestKeysTheKindDoesNotReadAreRefused: a key only the synthetic generator
// reads, given for a trace's replay, or one only a replay reads, given for
// the generator, would change nothing; the scenario is refused, naming it.
// At the default's value, and in a copy of the default file, it is not.
func TestKeysTheKindDoesNotReadAreRefused(t *testing.T) {
	trace := "workload.path=../workloads/testdata/mooncake_conversation_trace.jsonl.gz"
	cases := []struct {
		name, yaml string
		sets       []string
		want       string // "": accepted
	}{
		{"a rate for a trace", "", []string{"workload.kind=mooncake", trace, "workload.session_rate_per_s=20"},
			"--set workload.session_rate_per_s=20: key workload.session_rate_per_s: workload.session_rate_per_s is 20, but only the synthetic generator reads it, and workload.kind is mooncake"},
		{"a memory limit for a trace", "", []string{"workload.kind=mooncake", trace, "workload.memory_limit_gib=8"},
			"key workload.memory_limit_gib: workload.memory_limit_gib is 8, but only the synthetic generator reads it"},
		{"the kind from the file", "workload:\n  kind: mooncake\n  path: ../workloads/testdata/mooncake_conversation_trace.jsonl.gz\n", []string{"workload.sessions=20"},
			"--set workload.sessions=20: key workload.sessions: workload.sessions is 20, but only the synthetic generator reads it, and workload.kind is mooncake"},
		{"the kind from a --set over the file", "workload:\n  output_p90_tokens: 100\n", []string{"workload.kind=mooncake", trace},
			"--set workload.kind=mooncake: key workload.kind: workload.output_p90_tokens is 100, but only the synthetic generator reads it"},
		{"a time scale for the generator", "", []string{"workload.time_scale=0.5"},
			"--set workload.time_scale=0.5: key workload.time_scale: workload.time_scale is 0.5, but only a trace's replay reads it, and workload.kind is synthetic"},
		{"a trace file for the generator", "", []string{"workload.path=a.jsonl"}, "key workload.path: workload.path is a.jsonl, but only a trace's replay reads it"},
		{"skipping bad lines for the generator", "", []string{"workload.skip_bad_lines=true"}, "key workload.skip_bad_lines: workload.skip_bad_lines is true"},
		{"the default's value for a trace", "", []string{"workload.kind=mooncake", trace, "workload.sessions=400", "workload.think_median_s=" + fmtDefault("workload.think_median_s")}, ""},
		{"the default's value for the generator", "", []string{"workload.time_scale=1", "workload.path="}, ""},
		{"a copy of the default file, a trace", string(DefaultYAML()), []string{"workload.kind=mooncake", trace}, ""},
		{"the synthetic defaults over a changed generator", "", append([]string{"workload.sessions=20", "workload.kind=mooncake", trace}, SyntheticDefaults()...), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := ""
			if c.yaml != "" {
				path = writeScenario(t, c.yaml)
			}
			_, err := Load(path, c.sets)
			if c.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// fmtDefault is the embedded default's value of workload key k.
func fmtDefault(k string) string { return fmt.Sprint(workloadValue(defaultWorkload(), k)) }

// TestKindOnlyKeysAreWorkloadKeys: every key of the two lists names a
// field of the workload, and SyntheticDefaults sets each synthetic one.
func TestKindOnlyKeysAreWorkloadKeys(t *testing.T) {
	for _, k := range append(append([]string(nil), syntheticOnlyKeys...), traceOnlyKeys...) {
		assert.NotPanics(t, func() { workloadValue(defaultWorkload(), k) }, k)
	}
	w := defaultWorkload()
	assert.Len(t, SyntheticDefaults(), len(syntheticOnlyKeys)+2+len(arrivalParams(&w, &workloads.ArrivalConfig{})), "and the arrival keys and tenants")
	// a scenario with another arrival process and tenants turned into a trace's replay, as the study's break-even map does
	sets := append([]string{"workload.arrival=spike", "workload.spike_height=3", "workload.tenants=[{name: a, share: 1}]"}, SyntheticDefaults()...)
	_, err := Load("", append(sets, "workload.kind=mooncake", "workload.path=../workloads/testdata/mooncake_synthetic_trace.jsonl.gz"))
	assert.NoError(t, err)
}
