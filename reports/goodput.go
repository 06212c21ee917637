package reports

// Goodput is what a run served within its objectives (slo.ttft_ms,
// slo.tpot_ms, a tenant's own): a request is good when it completed with
// its TTFT and its TPOT each at most its objective (an objective not set
// is met; a one-token output has no TPOT and meets any); a rejected
// request is never good. docs/scenario.md, "Goodput", gives the
// definitions it follows (DistServe's, BLIS's) and where it differs.
type Goodput struct {
	// RequestsPerS is the good requests per second of the load kept up
	// for good, as the sustained rates are (Summary.SustainedOutputTokensPerS):
	// the good requests per session, times the sessions per second
	// delivered while they arrived (Load.DeliveredSessionsPerS, over
	// Load's arrival window). Absent for a run whose load is not judged.
	RequestsPerS float64 `json:"requests_per_s,omitempty"`
	// Attainment is over every request that arrived: its Share, the good
	// requests over them, is the run's SLO attainment.
	Attainment
	// Classes are the same figures by class: "first_turn" and
	// "later_turn" (every request is one or the other), "resumed" (the
	// later turns whose KV was not on the accelerator, and any request
	// whose lookup hit the store: Summary.ResumedTurns' requests), and
	// "tenant/NAME" for each tenant.
	Classes map[string]Attainment `json:"classes"`
}

// Attainment counts a class's requests against their objectives: those
// that arrived, those good, and those meeting each objective (a rejected
// request meets neither).
type Attainment struct {
	Requests int     `json:"requests"`
	Good     int     `json:"good"`
	TTFTMet  int     `json:"ttft_met"`
	TPOTMet  int     `json:"tpot_met"`
	Share    float64 `json:"share"`
}

// Add counts one request: whether it met each objective.
func (a *Attainment) Add(ttftMet, tpotMet bool) {
	a.Requests++
	if ttftMet {
		a.TTFTMet++
	}
	if tpotMet {
		a.TPOTMet++
	}
	if ttftMet && tpotMet {
		a.Good++
	}
	a.Share = float64(a.Good) / float64(a.Requests)
}
