package reports

import (
	"bytes"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// referenceRequestsCSV is requests.csv as encoding/csv writes it from
// every field formatted as a string: what WriteRequestsCSV must write.
func referenceRequestsCSV(rows []RequestRow) []byte {
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	tenants := slices.ContainsFunc(rows, func(r RequestRow) bool { return r.Tenant != "" })
	preempted := len(rows) > 0 && rows[0].Preempted != nil
	header := slices.Clone(RequestColumns[:len(RequestColumns)-1])
	if preempted {
		header = append(header, PreemptedColumns...)
	}
	header = append(header, RequestColumns[len(RequestColumns)-1])
	if tenants {
		header = append(header, TenantColumn)
	}
	_ = cw.Write(header)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, r := range rows {
		rec := []string{i(r.ID), i(r.Session), i(int64(r.Turn)), i(int64(r.Node)), r.Decision, strconv.FormatBool(r.Hit), f(r.ArrivalMs),
			i(r.PromptTokens), i(r.ReusedTokens), i(r.ResidentTokens), i(r.ComputedTokens), i(r.Output),
			f(r.QueueMs), f(r.QueryMs), f(r.ImportMs), f(r.PrefillMs), f(r.DecodeMs), f(r.ExportMs), f(r.TTFTms), f(r.TPOTms), f(r.E2Ems), f(r.KVWaitMs), i(r.TruncatedTokens)}
		if preempted {
			rec = append(rec, i(r.Preempted.Times), i(r.Preempted.RecomputedTokens), i(r.Preempted.MovedBytes))
		}
		rec = append(rec, strconv.FormatBool(r.Rejected))
		if tenants {
			rec = append(rec, r.Tenant)
		}
		_ = cw.Write(rec)
	}
	cw.Flush()
	return b.Bytes()
}

// TestRequestsCSVIsEncodingCSVs holds WriteRequestsCSV, which writes a row
// whose text needs no quoting straight into its buffer, against
// encoding/csv over random rows: texts that need quoting (commas, quotes,
// line breaks, a leading space, `\.`) and that do not, numbers of every
// sign and size, NaN and infinities, with and without preemptions and
// tenants.
func TestRequestsCSVIsEncodingCSVs(t *testing.T) {
	texts := []string{"", "query", "first", "continuation", "a,b", `say "hi"`, "two\nlines", "cr\rx", " lead", `\.`, "tenant-1", "chat_long", "é", "x y", "a:b/c+d.e"}
	floats := []float64{0, 1.5, -2.25, 1e-9, 123456.789012345, 1e300, math.NaN(), math.Inf(1), math.Inf(-1)}
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		preempted, tenants := trial%2 == 0, trial%3 == 0
		rows := make([]RequestRow, 1+rng.IntN(20))
		for k := range rows {
			f := func() float64 { return floats[rng.IntN(len(floats))] * float64(rng.IntN(3)) }
			n := func() int64 { return rng.Int64N(1<<40) - 1<<39 }
			rows[k] = RequestRow{ID: n(), Session: n(), Turn: rng.IntN(9), Node: rng.IntN(64) - 1, Decision: texts[rng.IntN(len(texts))],
				Hit: rng.IntN(2) == 0, ArrivalMs: f(), PromptTokens: n(), ReusedTokens: n(), ResidentTokens: n(), ComputedTokens: n(), Output: n(),
				QueueMs: f(), QueryMs: f(), ImportMs: f(), PrefillMs: f(), DecodeMs: f(), ExportMs: f(), TTFTms: f(), TPOTms: f(), E2Ems: f(), KVWaitMs: f(),
				TruncatedTokens: n(), Rejected: rng.IntN(2) == 0}
			if preempted {
				rows[k].Preempted = &Preempted{n(), n(), n()}
			}
			if tenants {
				rows[k].Tenant = texts[rng.IntN(len(texts))]
			}
		}
		var got bytes.Buffer
		require.NoError(t, WriteRequestsCSV(&got, rows))
		require.Equal(t, string(referenceRequestsCSV(rows)), got.String(), "trial %d", trial)
	}
}
