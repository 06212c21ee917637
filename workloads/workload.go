// Package workloads describes what arrives at the simulated system:
// multi-turn sessions and their requests, from a synthetic generator or
// from real traces (Mooncake, Azure, RAGPulse, our sessions JSONL).
package workloads

import "github.com/kvcosim/kvcosim/sim"

// Turn is one request of a session.
type Turn struct {
	// NewTokens are the prompt tokens this turn adds to the session's
	// history (ids); NewTokenCount is their number.
	NewTokens     []uint32
	NewTokenCount int64
	// BlockKeys are a trace's prefix-chained block ids of the whole prompt
	// (Mooncake hash_ids), when the trace gives them instead of tokens.
	BlockKeys []uint64
	// Output are the generated tokens (ids, in timing mode synthetic).
	Output      []uint32
	OutputCount int64
	// Gap is the time from the previous turn's answer to this turn's
	// arrival (the user's think time); for the first turn, from the
	// session's start.
	Gap sim.Time
	// Interrupted marks a gap lengthened by an interruption.
	Interrupted bool
	// Node pins the turn to a node (-1: the router decides).
	Node int
	// Arrival is a timed turn's arrival (its trace timestamp, scaled).
	Arrival sim.Time
}

// Session is one conversation.
type Session struct {
	ID    int64
	Start sim.Time
	Turns []Turn
	// Tenant is the synthetic workload's tenant the session belongs to
	// ("" without tenants, and in a trace).
	Tenant string
	// Timed sessions come from a trace: a turn arrives at its Arrival, or
	// when the previous turn ends if later; otherwise after its Gap.
	Timed bool
	// Tokens is every turn's new tokens then its output, in turn order, in
	// one array, where the generator lays them out so (nil otherwise): each
	// turn's NewTokens and Output are its pieces, capped at their ends, so
	// that a host can take a session's history as a prefix of it rather
	// than copy it (a day's synthetic sessions hold gigabytes of ids).
	Tokens []uint32
}

// layOut gives the session's turns their ids from ids, every turn's new
// tokens then its output in order, as many as their counts say: Tokens
// becomes a copy of ids of its exact size, and each turn's ids its pieces.
func (s *Session) layOut(ids []uint32) {
	s.Tokens = make([]uint32, len(ids))
	copy(s.Tokens, ids)
	at := int64(0)
	for i := range s.Turns {
		t := &s.Turns[i]
		t.NewTokens = s.Tokens[at : at+t.NewTokenCount : at+t.NewTokenCount]
		at += t.NewTokenCount
		t.Output = s.Tokens[at : at+t.OutputCount : at+t.OutputCount]
		at += t.OutputCount
	}
}

// Workload is the sessions of a run, in order of start.
type Workload struct {
	Sessions []Session
	// BlockTokens is the block size of a trace's block keys (0 if none).
	BlockTokens int64
}

// Requests returns the number of turns of all sessions.
func (w *Workload) Requests() int {
	n := 0
	for _, s := range w.Sessions {
		n += len(s.Turns)
	}
	return n
}

// Limit keeps the first n sessions (n <= 0 keeps all).
func (w *Workload) Limit(n int) {
	if n > 0 && n < len(w.Sessions) {
		w.Sessions = w.Sessions[:n]
	}
}
