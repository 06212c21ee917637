package reports

import (
	"bufio"
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"strings"
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
	bw := bufio.NewWriter(w)
	cw := csv.NewWriter(bw) // its buffer is bw: rows written to either fall in order
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
	line, rec := &lineFields{}, &recordFields{}
	for _, r := range rows {
		line.b, line.plain, line.fields = line.b[:0], true, 0
		r.fields(line, preempted, tenants)
		if line.plain { // nothing to quote: the line as encoding/csv would write it
			if _, err := bw.Write(append(line.b, '\n')); err != nil {
				return err
			}
			continue
		}
		rec.s = rec.s[:0]
		r.fields(rec, preempted, tenants)
		if err := cw.Write(rec.s); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// fieldSink takes a row's fields in column order.
type fieldSink interface {
	int(v int64)
	float(v float64)
	bool(v bool)
	text(v string)
}

// fields hands the row's columns to to: the preemption columns if
// preempted, the tenant if tenants.
func (r RequestRow) fields(to fieldSink, preempted, tenants bool) {
	for _, v := range []int64{r.ID, r.Session, int64(r.Turn), int64(r.Node)} {
		to.int(v)
	}
	to.text(r.Decision)
	to.bool(r.Hit)
	to.float(r.ArrivalMs)
	for _, v := range []int64{r.PromptTokens, r.ReusedTokens, r.ResidentTokens, r.ComputedTokens, r.Output} {
		to.int(v)
	}
	for _, v := range []float64{r.QueueMs, r.QueryMs, r.ImportMs, r.PrefillMs, r.DecodeMs, r.ExportMs, r.TTFTms, r.TPOTms, r.E2Ems, r.KVWaitMs} {
		to.float(v)
	}
	to.int(r.TruncatedTokens)
	if preempted {
		to.int(r.Preempted.Times)
		to.int(r.Preempted.RecomputedTokens)
		to.int(r.Preempted.MovedBytes)
	}
	to.bool(r.Rejected)
	if tenants {
		to.text(r.Tenant)
	}
}

// lineFields writes the fields into one CSV line, unquoted; plain says
// whether every text field is one encoding/csv leaves unquoted (made of
// letters, digits and _ . : / + -).
type lineFields struct {
	b      []byte
	plain  bool
	fields int
}

func (l *lineFields) sep() {
	if l.fields > 0 {
		l.b = append(l.b, ',')
	}
	l.fields++
}
func (l *lineFields) int(v int64)     { l.sep(); l.b = strconv.AppendInt(l.b, v, 10) }
func (l *lineFields) float(v float64) { l.sep(); l.b = strconv.AppendFloat(l.b, v, 'f', 6, 64) }
func (l *lineFields) bool(v bool)     { l.sep(); l.b = strconv.AppendBool(l.b, v) }
func (l *lineFields) text(v string) {
	l.sep()
	l.b = append(l.b, v...)
	l.plain = l.plain && !strings.ContainsFunc(v, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_.:/+-", c))
	})
}

// recordFields collects the fields as encoding/csv's record.
type recordFields struct{ s []string }

func (f *recordFields) int(v int64)     { f.s = append(f.s, strconv.FormatInt(v, 10)) }
func (f *recordFields) float(v float64) { f.s = append(f.s, strconv.FormatFloat(v, 'f', 6, 64)) }
func (f *recordFields) bool(v bool)     { f.s = append(f.s, strconv.FormatBool(v)) }
func (f *recordFields) text(v string)   { f.s = append(f.s, v) }
