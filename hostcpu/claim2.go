package hostcpu

// situation is what the CPU knows of a request when it decides (claim 2).
type situation struct {
	// first: the session has no history yet; residentHere: its history is
	// on the accelerator of the request's node.
	first, residentHere bool
	// stores: the design has an external store; blocks: it keys prefix
	// blocks, which another session may have stored.
	stores, blocks bool
	// exporting: the session's last export has not ended.
	exporting bool
}

// action is what the CPU does with a decided request.
type action int

const (
	// infer: the request goes to the accelerator's queue.
	infer action = iota
	// lookUp: the store is queried first.
	lookUp
	// park: the request waits for the session's export, undecided.
	park
)

// verdict is a decision and what follows from it.
type verdict struct {
	decision Decision
	action   action
}

// claim2 is the decision table of claim 2: the session's first tokens, or
// a continuation of the history still on this accelerator, go straight to
// the accelerator; anything else is a query (or, without a store, a full
// recomputation). In the block scheme a first request queries too: its
// prefix may be another session's. A query waits while the session's
// export is in flight, so that the store holds its latest version.
func claim2(s situation) verdict {
	switch {
	case s.first && !(s.stores && s.blocks):
		return verdict{FirstTokens, infer}
	case s.residentHere:
		return verdict{Continuation, infer}
	case !s.stores:
		return verdict{Recomputed, infer}
	case s.exporting:
		return verdict{action: park}
	case s.first:
		return verdict{FirstTokens, lookUp}
	}
	return verdict{Query, lookUp}
}
