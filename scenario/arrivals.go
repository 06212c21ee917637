package scenario

import (
	"fmt"

	"github.com/kvcosim/kvcosim/sim"
	"github.com/kvcosim/kvcosim/workloads"
)

// arrivalParam is one parameter key of an arrival process: its value in
// the scenario and in the generator's configuration.
type arrivalParam struct {
	key     string
	process workloads.Arrival
	spec    *float64 // the scenario's value
	used    *float64 // the generator's
}

func arrivalParams(w *Workload, c *workloads.ArrivalConfig) []arrivalParam {
	return []arrivalParam{
		{"workload.gamma_cv", workloads.ArrivalGamma, &w.GammaCV, &c.GammaCV},
		{"workload.diurnal_period_s", workloads.ArrivalDiurnal, &w.DiurnalPeriodS, &c.DiurnalPeriodS},
		{"workload.diurnal_peak_to_trough", workloads.ArrivalDiurnal, &w.DiurnalPeakToTrough, &c.DiurnalPeakToTrough},
		{"workload.spike_at_s", workloads.ArrivalSpike, &w.SpikeAtS, &c.SpikeAtS},
		{"workload.spike_length_s", workloads.ArrivalSpike, &w.SpikeLengthS, &c.SpikeLengthS},
		{"workload.spike_height", workloads.ArrivalSpike, &w.SpikeHeight, &c.SpikeHeight},
	}
}

// given reports whether the file or a --set wrote key itself (a list
// item's key too: Where answers for the item's keys it leaves out).
func (r *resolver) given(key string) bool {
	_, ok := r.l.where[key]
	return ok
}

// resolveArrivals reads the synthetic workload's arrival process and its
// tenants into c. The chosen process's parameters left out are written
// into the scenario at their defaults (the run's scenario.yaml records
// them); a parameter of another process is refused, as are arrival keys and
// tenants for a trace's replay.
func (r *resolver) resolveArrivals(sc *Scenario, c *workloads.SyntheticConfig) {
	w := &sc.Workload
	c.Arrival = workloads.DefaultArrival()
	params := arrivalParams(w, &c.Arrival)
	if !w.Synthetic() {
		r.refuseForTrace(w, params)
		return
	}
	if w.Arrival != "" || r.given("workload.arrival") { // given empty, it is refused
		c.Arrival.Process = pick(r, "workload.arrival", w.Arrival, workloads.Arrivals.Parse)
	}
	for _, p := range params {
		switch {
		case p.process != c.Arrival.Process:
			if *p.spec != 0 {
				r.fail(r.culprit(p.key, "workload.arrival"), "%v: only workload.arrival %s reads it, and workload.arrival is %s", *p.spec, p.process, c.Arrival.Process)
			}
		case r.given(p.key):
			*p.used = *p.spec // checked by SyntheticConfig.Validate
		default:
			*p.spec = *p.used
		}
	}
	c.Tenants = r.tenants(w.Tenants, *c)
}

// refuseForTrace fails for an arrival key or tenants given to a trace's
// replay, which reads none of them.
func (r *resolver) refuseForTrace(w *Workload, params []arrivalParam) {
	if w.Arrival != "" {
		r.fail(r.culprit("workload.arrival", "workload.kind"), "%s: only the synthetic generator reads it, and workload.kind is %s", w.Arrival, w.Kind)
	}
	for _, p := range params {
		if *p.spec != 0 {
			r.fail(r.culprit(p.key, "workload.kind"), "%v: only the synthetic generator reads it, and workload.kind is %s", *p.spec, w.Kind)
		}
	}
	if len(w.Tenants) > 0 {
		r.fail(r.culprit("workload.tenants", "workload.kind"), "only the synthetic generator has tenants, and workload.kind is %s", w.Kind)
	}
}

// tenants are the scenario's tenants for the generator: a length key a
// tenant leaves out is the workload's own (c's).
func (r *resolver) tenants(specs []TenantSpec, c workloads.SyntheticConfig) []workloads.Tenant {
	var out []workloads.Tenant
	for i, t := range specs {
		fit := func(median, p90 float64, keys string, own workloads.LengthFit) workloads.LengthFit {
			prefix := fmt.Sprintf("workload.tenants[%d].%s", i, keys)
			if r.given(prefix + "median_tokens") {
				own.Median = median
			}
			if r.given(prefix + "p90_tokens") {
				own.P90 = p90
			}
			return own
		}
		out = append(out, workloads.Tenant{Name: t.Name, Share: t.Share,
			FirstPrompt:    fit(t.FirstPromptMedian, t.FirstPromptP90, "first_prompt_", c.FirstPrompt),
			FollowUpPrompt: fit(t.FollowUpMedian, t.FollowUpP90, "follow_up_", c.FollowUpPrompt),
			Output:         fit(t.OutputMedian, t.OutputP90, "output_", c.Output)})
	}
	return out
}

// objectives are the SLOs a request is judged by for goodput; 0: none.
type objectives struct{ ttft, tpot sim.Time }

// any reports whether an objective is set.
func (o objectives) any() bool { return o.ttft > 0 || o.tpot > 0 }

// sloConfig is slo.* and each tenant's own objectives over them.
type sloConfig struct {
	all     objectives
	tenants map[string]objectives
}

// set reports whether any request has an objective: the run's summary
// then has its goodput.
func (s sloConfig) set() bool {
	if s.all.any() {
		return true
	}
	for _, o := range s.tenants {
		if o.any() {
			return true
		}
	}
	return false
}

// maxObjectiveMs bounds an objective: the horizon of a run.
var maxObjectiveMs = sim.Horizon.Seconds() * 1e3

// resolveSLO reads slo.* and each tenant's slo.* over them.
func (r *resolver) resolveSLO(sc *Scenario, out *resolved) {
	out.slo.all = r.objectives("slo", sc.SLO, objectives{})
	for i, t := range sc.Workload.Tenants {
		if out.slo.tenants == nil {
			out.slo.tenants = map[string]objectives{}
		}
		out.slo.tenants[t.Name] = r.objectives(fmt.Sprintf("workload.tenants[%d].slo", i), t.SLO, out.slo.all)
	}
}

// objectives reads the SLO at prefix over inherited: each given one must
// be positive, at most the horizon.
func (r *resolver) objectives(prefix string, s SLO, inherited objectives) objectives {
	o := inherited
	for _, f := range []struct {
		key string
		ms  float64
		to  *sim.Time
	}{{prefix + ".ttft_ms", s.TTFTms, &o.ttft}, {prefix + ".tpot_ms", s.TPOTms, &o.tpot}} {
		if f.ms == 0 && !r.given(f.key) {
			continue
		}
		if !(f.ms > 0 && f.ms <= maxObjectiveMs) {
			r.fail(f.key, "%v is out of range: an objective is positive, in milliseconds (allowed: above 0, to %v)", f.ms, maxObjectiveMs)
			continue
		}
		*f.to = sim.TimeOf(f.ms * 1e9)
	}
	return o
}
