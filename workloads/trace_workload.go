package workloads

import "github.com/kvcosim/kvcosim/sim"

// Workload turns the trace into sessions for replay: requests without a
// session are one-turn sessions; a session's turns keep file order. Every
// turn is timed: it arrives at its timestamp times timeScale (0.5 doubles
// the load), or when its session's previous turn ends, if later.
//
// A turn's new tokens are its input for a first turn; for a later turn of
// a trace that gives whole prompts (RAGPulse), the input minus the
// history so far (previous input and output), at least 1; a sessions
// trace gives them itself.
func (t *Trace) Workload(timeScale float64) *Workload {
	w := &Workload{BlockTokens: t.BlockTokens}
	bySession := map[string]int{}   // session name -> index in w.Sessions
	lastRequest := map[string]int{} // session name -> its latest request
	for i, r := range t.Requests {
		turn := Turn{NewTokens: r.Tokens, NewTokenCount: r.Input, OutputCount: r.Output, BlockKeys: r.BlockKeys, Node: r.Node,
			Arrival: sim.TimeOf(float64(r.Arrival) * timeScale)}
		idx, ok := bySession[r.Session]
		prev := lastRequest[r.Session]
		lastRequest[r.Session] = i
		if r.Session == "" || !ok {
			bySession[r.Session] = len(w.Sessions)
			w.Sessions = append(w.Sessions, Session{ID: int64(len(w.Sessions)), Start: turn.Arrival, Timed: true, Turns: []Turn{turn}})
			continue
		}
		s := &w.Sessions[idx]
		if t.wholePrompt {
			p := t.Requests[prev]
			turn.NewTokenCount = max(1, r.Input-p.Input-p.Output)
		}
		s.Turns = append(s.Turns, turn)
	}
	return w
}

// Limit keeps the first n requests (n <= 0 keeps all).
func (t *Trace) Limit(n int) {
	if n > 0 && n < len(t.Requests) {
		t.Requests = t.Requests[:n]
	}
}
