package reports

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"
)

// RequestRow is one request in requests.csv; times are milliseconds.
type RequestRow struct {
	ID, Session                                                        int64
	Turn, Node                                                         int
	Decision                                                           string
	Hit                                                                bool
	ArrivalMs                                                          float64
	PromptTokens, ReusedTokens, ResidentTokens, ComputedTokens, Output int64
	QueueMs, QueryMs, ImportMs, PrefillMs, DecodeMs, ExportMs          float64
	TTFTms, TPOTms, E2Ems                                              float64
	// KVWaitMs is a resumed turn's wait for its KV (hostcpu.Record.KVWait).
	KVWaitMs float64
	// TruncatedTokens were dropped from the prompt's front to fit the
	// model's context window.
	TruncatedTokens int64
	// Rejected: the request never ran (it could never fit the device's KV
	// memory, or its context window with workload.context_policy reject);
	// its times are zero and not latencies.
	Rejected bool
	// Tenant is the synthetic workload's tenant of the request's session
	// ("" without tenants).
	Tenant string
	// Preempted is the request's preemptions, in a run of the incremental
	// engine (its columns are written only then: a reserve run's file is
	// as it was before the engine had them).
	Preempted *Preempted
}

// Preempted is a request's preemptions: how many times, the KV tokens it
// recomputed and the bytes it moved out of the device (swapped or stored,
// and as many back).
type Preempted struct {
	Times, RecomputedTokens, MovedBytes int64
}

// PreemptedColumns are the columns a run of the incremental engine adds,
// before rejected.
var PreemptedColumns = []string{"preemptions", "preempted_tokens_recomputed", "preempted_bytes_moved"}

// RequestColumns are the CSV header.
var RequestColumns = []string{"id", "session", "turn", "node", "decision", "hit", "arrival_ms",
	"prompt_tokens", "reused_tokens", "resident_tokens", "computed_tokens", "output_tokens",
	"queue_ms", "query_ms", "import_ms", "prefill_ms", "decode_ms", "export_ms", "ttft_ms", "tpot_ms", "e2e_ms", "kv_wait_ms", "truncated_tokens", "rejected"}

// TenantColumn is the last column of requests.csv when the workload has
// tenants (without, the file is as it was before there were any).
const TenantColumn = "tenant"

// WriteRequestsCSV writes the rows with a header.
func WriteRequestsCSV(w io.Writer, rows []RequestRow) error {
	cw := csv.NewWriter(w)
	tenants := slices.ContainsFunc(rows, func(r RequestRow) bool { return r.Tenant != "" })
	preempted := len(rows) > 0 && rows[0].Preempted != nil
	header := RequestColumns
	if preempted { // before rejected
		last := len(RequestColumns) - 1
		header = append(append(append([]string(nil), RequestColumns[:last]...), PreemptedColumns...), RequestColumns[last])
	}
	if tenants {
		header = append(slices.Clip(header), TenantColumn)
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	var rec []string
	for _, r := range rows {
		rec = append(rec[:0], i(r.ID), i(r.Session), i(int64(r.Turn)), i(int64(r.Node)), r.Decision, strconv.FormatBool(r.Hit), f(r.ArrivalMs),
			i(r.PromptTokens), i(r.ReusedTokens), i(r.ResidentTokens), i(r.ComputedTokens), i(r.Output),
			f(r.QueueMs), f(r.QueryMs), f(r.ImportMs), f(r.PrefillMs), f(r.DecodeMs), f(r.ExportMs), f(r.TTFTms), f(r.TPOTms), f(r.E2Ems), f(r.KVWaitMs), i(r.TruncatedTokens))
		if preempted {
			rec = append(rec, i(r.Preempted.Times), i(r.Preempted.RecomputedTokens), i(r.Preempted.MovedBytes))
		}
		rec = append(rec, strconv.FormatBool(r.Rejected))
		if tenants {
			rec = append(rec, r.Tenant)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
