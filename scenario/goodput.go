package scenario

import (
	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/reports"
)

// goodput judges every request that arrived against its objectives (its
// tenant's, else slo.*): nil when the scenario sets none.
func (r *Run) goodput(load *reports.Load) *reports.Goodput {
	slo := r.l.resolved.slo
	if !slo.set() {
		return nil
	}
	tenants := r.sessionTenants()
	g := &reports.Goodput{Classes: map[string]reports.Attainment{}}
	for _, rec := range r.sys.Records() {
		tenant := tenants[rec.Session]
		o, ok := slo.tenants[tenant]
		if !ok {
			o = slo.all
		}
		ttft, tpot := o.met(rec)
		g.Add(ttft, tpot)
		for _, class := range goodputClasses(rec, tenant) {
			a := g.Classes[class]
			a.Add(ttft, tpot)
			g.Classes[class] = a
		}
	}
	if load.Judged {
		g.RequestsPerS = float64(g.Good) * r.sustainedPerSession(load)
	}
	return g
}

// met says whether a request met each objective: a rejected one meets
// neither; an objective not set is met, and a one-token output has no time
// per output token to miss one.
func (o objectives) met(rec hostcpu.Record) (ttft, tpot bool) {
	if !rec.Done {
		return false, false
	}
	return o.ttft == 0 || rec.TTFT <= o.ttft, o.tpot == 0 || rec.OutputTokens <= 1 || rec.TPOT <= o.tpot
}

// goodputClasses are the classes a request counts in (reports.Goodput).
func goodputClasses(rec hostcpu.Record, tenant string) []string {
	classes := []string{"later_turn"}
	if rec.Turn == 0 {
		classes[0] = "first_turn"
	}
	if resumedTurn(rec) {
		classes = append(classes, "resumed")
	}
	if tenant != "" {
		classes = append(classes, "tenant/"+tenant)
	}
	return classes
}

// sessionTenants maps each session to its tenant: empty without tenants.
func (r *Run) sessionTenants() map[int64]string {
	out := map[int64]string{}
	for _, s := range r.workload.Sessions {
		if s.Tenant != "" {
			out[s.ID] = s.Tenant
		}
	}
	return out
}
