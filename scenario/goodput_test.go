package scenario

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/reports"
)

// Goodput against a reference: requests.csv's rows judged one by one
// against their tenant's objectives (slo.* where the tenant sets none):
// good when not rejected and both met, a one-token output meeting any
// TPOT; the counts by class and the rate at the delivered sessions per
// second. Requests past a short context window are rejected: never good.
func TestGoodputCountsEachRequestAgainstItsObjectives(t *testing.T) {
	s, csvBytes := run(t, "workload.sessions=40", "workload.session_rate_per_s=2", "slo.ttft_ms=1500", "slo.tpot_ms=45",
		"workload.context_policy=reject", "accelerator.max_model_len=3000",
		"workload.tenants=[{name: chat, share: 0.6}, {name: code, share: 0.4, first_prompt_median_tokens: 2000, slo: {ttft_ms: 4000}}]")
	require.NotNil(t, s.Goodput)
	table, err := csv.NewReader(bytes.NewReader(csvBytes)).ReadAll()
	require.NoError(t, err)
	col := func(name string) int {
		i := slices.Index(table[0], name)
		require.GreaterOrEqual(t, i, 0, name)
		return i
	}
	num := func(r []string, name string) float64 {
		v, err := strconv.ParseFloat(r[col(name)], 64)
		require.NoError(t, err)
		return v
	}
	ttftObjective := map[string]float64{"chat": 1500, "code": 4000}
	want := reports.Goodput{Classes: map[string]reports.Attainment{}}
	rejected := 0
	for _, r := range table[1:] {
		done := r[col("rejected")] == "false"
		ttft := done && num(r, "ttft_ms") <= ttftObjective[r[col("tenant")]]
		tpot := done && (num(r, "output_tokens") <= 1 || num(r, "tpot_ms") <= 45)
		want.Add(ttft, tpot)
		class := "later_turn"
		if r[col("turn")] == "0" {
			class = "first_turn"
		}
		for _, c := range []string{class, "tenant/" + r[col("tenant")]} {
			a := want.Classes[c]
			a.Add(ttft, tpot)
			want.Classes[c] = a
		}
		if !done {
			rejected++
		}
	}
	require.Positive(t, rejected, "some requests past the window")
	require.Less(t, want.Good, want.Requests-rejected, "some objectives missed")
	require.Positive(t, want.Good)
	assert.Equal(t, want.Attainment, s.Goodput.Attainment)
	for c, a := range want.Classes {
		assert.Equal(t, a, s.Goodput.Classes[c], c)
	}
	assert.Equal(t, s.ResumedTurns, s.Goodput.Classes["resumed"].Requests, "no resumed turn rejected here")
	require.True(t, s.Load.Judged)
	assert.InDelta(t, float64(want.Good)*s.Load.DeliveredSessionsPerS/40, s.Goodput.RequestsPerS, 1e-9)
}

// Without objectives a run has no goodput and requests.csv no tenant
// column; tenants without objectives have theirs, and no goodput either.
func TestNoObjectivesNoGoodput(t *testing.T) {
	s, rows := run(t, "workload.sessions=10")
	assert.Nil(t, s.Goodput)
	header, _, _ := bytes.Cut(rows, []byte("\n"))
	assert.Equal(t, "rejected", string(header[bytes.LastIndexByte(header, ',')+1:]))
	s, rows = run(t, "workload.sessions=10", "workload.tenants=[{name: a, share: 0.5}, {name: b, share: 0.5}]")
	assert.Nil(t, s.Goodput)
	header, _, _ = bytes.Cut(rows, []byte("\n"))
	assert.Equal(t, reports.TenantColumn, string(header[bytes.LastIndexByte(header, ',')+1:]))
}
