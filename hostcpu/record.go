package hostcpu

import (
	"github.com/kvcosim/kvcosim/internal/names"
	"github.com/kvcosim/kvcosim/sim"
)

// Decision is the claim-2 outcome for a request.
type Decision int

const (
	// FirstTokens: the session's first request; the accelerator infers.
	FirstTokens Decision = iota
	// Continuation: the history is still resident on this accelerator.
	Continuation
	// Query: the FPGA (or CPU) looks the session's cache up.
	Query
	// Recomputed: not resident and no store (design recompute).
	Recomputed
)

// Decisions names the values of Decision: Names lists them, Parse reads one.
var Decisions = names.New("decision", map[Decision]string{
	FirstTokens:  "first_tokens",
	Continuation: "continuation",
	Query:        "query",
	Recomputed:   "recompute",
})

// String returns the outcome's name.
func (d Decision) String() string { return Decisions.Name(d) }

// Record is what happened to one request; the reports turn it into a row
// of requests.csv.
type Record struct {
	ID, Session int64
	Turn, Node  int
	Decision    Decision
	// Hit: the query found the session's cache (or a prefix of blocks).
	Hit bool
	// PromptTokens is the request's whole context (history and new
	// tokens); ReusedTokens came from the store, ResidentTokens were still
	// on the accelerator, ComputedTokens were prefilled; TruncatedTokens
	// were dropped from the front to fit the context window.
	PromptTokens, ReusedTokens, ResidentTokens, ComputedTokens, OutputTokens int64
	TruncatedTokens                                                          int64
	Arrival                                                                  sim.Time
	// Stage durations: waiting for the CPU and for admission (Queue), the
	// store lookup (Query), moving KV in (Import), prefill, decode, and the
	// export that followed the turn.
	Queue, QueryTime, Import, Prefill, Decode, Export sim.Time
	// Parked is the wait for the session's previous export (a synchronous
	// save); LoadStall what a layer-wise load added to the request's first
	// iteration.
	// KVWait is a resumed turn's whole wait for its KV: Parked, the lookup
	// and the import (a whole load) or LoadStall (a layer-wise one).
	Parked, LoadStall, KVWait sim.Time
	// TTFT, TPOT and E2E are the user-visible latencies.
	TTFT, TPOT, E2E sim.Time
	ImportBytes     int64
	ExportBytes     int64
	// Preemptions counts the times the request was preempted; it
	// recomputed RecomputedTokens of KV it had computed, or moved
	// PreemptedBytes out of the device (and as many back).
	Preemptions      int64
	RecomputedTokens int64
	PreemptedBytes   int64
	Done             bool
}

// Counts are a run's totals beyond the per-request records.
type Counts struct {
	Decisions map[string]int64
	// Queries counts store lookups started; each ends a hit or a miss.
	Queries               int64
	QueryHits, QueryMiss  int64
	DeviceEvictions       int64
	Exports, ExportFailed int64
	Migrations            int64
	// Prefetches started; each was used (landed before its load started)
	// or late (the load waited for it).
	Prefetches, PrefetchUsed, PrefetchLate int64
	// PrefetchDeferred are the requests whose prefetch waited for an open
	// loop's look-ahead window; PrefetchStagedPeakBytes is the most KV an
	// open loop's prefetches held in one node's host memory at once, each
	// copy from its prefetch's start until the load or pre-load that reads
	// it lands.
	PrefetchDeferred, PrefetchStagedPeakBytes int64
	// LookAheads are objects raised into the top tier for held-back
	// closed-loop turns; each was used (the session's next lookup found it
	// there) or wasted (demoted again, not the session's any more, or its
	// next turn needed no lookup or ended the session).
	LookAheads, LookAheadUsed, LookAheadWasted int64
	// Preloads are objects moved into a read buffer for held-back turns;
	// each was used (its turn's load) or wasted (the turn found another
	// version, on another node, or none)
	Preloads, PreloadUsed, PreloadWasted int64
	// ExportsStarted counts exports begun; each ends (Exports, failed ones
	// among them) or is dropped. ExportsBlocked waited for room in the
	// asynchronous exports' buffer; ExportsDropped found it full and were
	// not stored.
	ExportsStarted, ExportsBlocked, ExportsDropped int64
	// Preemptions are running requests taken off the batch for want of a
	// free KV block (accelerator.kv_alloc: incremental); the KV they had
	// was recomputed (tokens), swapped to host memory or stored (bytes,
	// each moved out and back). PeakRunning is the most requests a node
	// ran at once; Iterations ran IterationSequences sequences in all.
	Preemptions, PreemptedTokensRecomputed      int64
	PreemptedBytesSwapped, PreemptedBytesStored int64
	PeakRunning                                 int64
	Iterations, IterationSequences              int64
	// Truncated requests lost their oldest tokens to the context window
	// (those refused for it are System.Rejected().For(RejectContextWindow)).
	Truncated int64
	// Finished counts the requests over (completed or rejected) when
	// Counts was called: what a run's progress reports.
	Finished int64
}
