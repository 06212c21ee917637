package scenario

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/kvcosim/kvcosim/workloads"
)

// Synthetic reports whether the synthetic generator makes the workload
// (workload.kind: synthetic); every other kind is a trace's replay.
func (w Workload) Synthetic() bool { return w.Kind == workloads.SyntheticKind }

// syntheticOnlyKeys are the workload keys only the synthetic generator
// reads, traceOnlyKeys those only a trace's replay reads: given another
// value than the embedded default's for the other kind of workload, they
// would change nothing, silently, so the scenario is refused (kindKeys).
var (
	syntheticOnlyKeys = []string{"workload.sessions", "workload.session_rate_per_s", "workload.turns_mean",
		"workload.system_prompt_tokens", "workload.interrupt_probability", "workload.think_median_s", "workload.think_p90_s",
		"workload.first_prompt_median_tokens", "workload.first_prompt_p90_tokens", "workload.follow_up_median_tokens",
		"workload.follow_up_p90_tokens", "workload.output_median_tokens", "workload.output_p90_tokens", "workload.memory_limit_gib"}
	traceOnlyKeys = []string{"workload.path", "workload.time_scale", "workload.skip_bad_lines"}
)

// kindKeys fails for a key that the workload's kind does not read, set by
// the file or a --set to another value than the embedded default's (a copy
// of the default file sets them all).
func (r *resolver) kindKeys(w Workload) {
	keys, reader := syntheticOnlyKeys, "the synthetic generator"
	if w.Synthetic() {
		keys, reader = traceOnlyKeys, "a trace's replay"
	}
	for _, k := range keys {
		if r.l.Changed(k) {
			r.fail(r.culprit(k, "workload.kind"), "%s is %v, but only %s reads it, and workload.kind is %s", k, workloadValue(w, k), reader, w.Kind)
		}
	}
}

// Changed reports whether the file or a --set gave key (dotted) another
// value than the embedded default's: a copy of the default, or a run's
// scenario.yaml, sets every key, most to the default's values.
func (l *Loaded) Changed(key string) bool {
	def := defaultScenario()
	return !l.Unset(key) && !reflect.DeepEqual(keyValue(&l.Scenario, key), keyValue(&def, key))
}

// keyValue is the value of a dotted key of sc.
func keyValue(sc *Scenario, key string) any {
	v := reflect.ValueOf(sc).Elem()
	for _, part := range strings.Split(key, ".") {
		f, ok := fieldByTag(v, part)
		if !ok {
			panic("scenario: no key " + key)
		}
		v = f
	}
	return v.Interface()
}

// SyntheticDefaults are the synthetic generator's keys at the embedded
// default's values, as --set overrides: a study that turns a scenario into
// a trace's replay sets them back, so that the synthetic settings of the
// scenario it starts from are not refused as unread.
//
// The arrival keys and tenants, left out of the default, are set back to
// none.
func SyntheticDefaults() []string {
	def := defaultWorkload()
	sets := make([]string, len(syntheticOnlyKeys))
	for i, k := range syntheticOnlyKeys {
		sets[i] = fmt.Sprintf("%s=%v", k, workloadValue(def, k))
	}
	sets = append(sets, "workload.arrival=", "workload.tenants=[]")
	for _, p := range arrivalParams(&def, &workloads.ArrivalConfig{}) {
		sets = append(sets, p.key+"=0")
	}
	return sets
}

// defaultScenario is the embedded default scenario.
var defaultScenario = sync.OnceValue(func() Scenario {
	var sc Scenario
	if err := yaml.Unmarshal(defaultYAML, &sc); err != nil {
		panic(fmt.Sprintf("scenario: the embedded default: %v", err))
	}
	return sc
})

// defaultWorkload is the embedded default scenario's workload.
func defaultWorkload() Workload { return defaultScenario().Workload }

// workloadValue is the value of workload key k ("workload." and a field's
// YAML name).
func workloadValue(w Workload, k string) any {
	f, ok := fieldByTag(reflect.ValueOf(w), strings.TrimPrefix(k, "workload."))
	if !ok {
		panic("scenario: no workload key " + k)
	}
	return f.Interface()
}
