package reports

import (
	"bytes"
	"encoding/csv"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpreadOf(t *testing.T) {
	for _, c := range []struct {
		name   string
		values []float64
		want   Spread
	}{
		{"none", nil, Spread{}},
		{"one", []float64{7}, Spread{7, 7, 7}},
		{"several", []float64{3, 1, 2, 6}, Spread{3, 1, 6}},
		{"a mean that rounds past its values", []float64{0.1, 0.1, 0.1}, Spread{0.1, 0.1, 0.1}},
	} {
		t.Run(c.name, func(t *testing.T) { assert.Equal(t, c.want, SpreadOf(c.values)) })
	}
	assert.True(t, Spread{1, 0, 2}.Overlaps(Spread{3, 2, 4}), "sharing an end")
	assert.False(t, Spread{1, 0, 2}.Overlaps(Spread{3, 2.5, 4}))
}

// The study's comparison.csv: every figure of ComparisonColumns, in their
// order, each followed by its least and greatest; a count's mean stays
// whole; saturated when any seed is; a share no seed judged is empty.
func TestSpreadRowKeepsTheColumnsAndTheirKinds(t *testing.T) {
	seeds := []Summary{
		{Design: "fpga", RequestsCompleted: 10, TTFTms: Percentiles{P50: 2}, Load: Load{Judged: true, DeliveredShare: 0.9}},
		{Design: "fpga", RequestsCompleted: 13, TTFTms: Percentiles{P50: 5}, Saturated: true},
	}
	var b bytes.Buffer
	require.NoError(t, WriteSpreadCSV(&b, [][]Summary{seeds, seeds[:1], seeds[1:]}))
	rows, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	header := rows[0]
	var figures []string
	for _, h := range header {
		if !slices.ContainsFunc([]string{"_min", "_max"}, func(s string) bool { return len(h) > 4 && h[len(h)-4:] == s }) {
			figures = append(figures, h)
		}
	}
	assert.Equal(t, ComparisonColumns, figures, "ComparisonColumns' order, the spread beside each")
	cell := func(row int, column string) string { return rows[row][slices.Index(header, column)] }
	for _, c := range []struct{ column, mean, least, most string }{
		{"requests_completed", "12", "10", "13"},
		{"ttft_ms_p50", "3.500000", "2.000000", "5.000000"},
		{"delivered_share", "0.900000", "0.900000", "0.900000"},
	} {
		assert.Equal(t, []string{c.mean, c.least, c.most}, []string{cell(1, c.column), cell(1, c.column+"_min"), cell(1, c.column+"_max")}, c.column)
	}
	assert.Equal(t, "true", cell(1, "saturated"))
	assert.NotContains(t, header, "saturated_min")
	assert.Equal(t, "false", cell(2, "saturated"))
	assert.Equal(t, []string{"10", "10", "10"}, []string{cell(2, "requests_completed"), cell(2, "requests_completed_min"), cell(2, "requests_completed_max")})
	assert.Equal(t, []string{"", "", ""}, []string{cell(3, "delivered_share"), cell(3, "delivered_share_min"), cell(3, "delivered_share_max")}, "no seed judged")
}

// A line plot with spreads draws error bars and writes each point's least
// and greatest beside it; a ring's row is padded to the header.
func TestLinePlotWritesTheSpread(t *testing.T) {
	p, err := LinePlot("t", "load", "TTFT (ms)", []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{5, 7}, Min: []float64{4, 7}, Max: []float64{6, 9}}})
	require.NoError(t, err)
	require.NoError(t, Mark(p, "saturated", []float64{2}, []float64{7}))
	assert.Equal(t, [][]string{{"series", "load", "TTFT (ms)", "min: TTFT (ms)", "max: TTFT (ms)"},
		{"a", "1", "5", "4", "6"}, {"a", "2", "7", "7", "9"}, {"saturated", "2", "7", "", ""}}, p.Data())
	_, err = LinePlot("t", "x", "y", []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{5, 7}, Min: []float64{4}, Max: []float64{6, 9}}})
	assert.ErrorContains(t, err, `series "a" has 2 y, 1 min and 2 max values`)
	plain, err := LinePlot("t", "x", "y", []Series{{Name: "a", X: []float64{1}, Y: []float64{5}}})
	require.NoError(t, err)
	assert.Equal(t, []string{"series", "x", "y"}, plain.Data()[0], "no spread, no columns")
}

// A table of runs with objectives carries the goodput's columns after the
// others, empty for a run without goodput and the rate empty for one whose
// load is not judged; a table of runs without has none of them.
func TestGoodputColumnsOnlyWithGoodput(t *testing.T) {
	without := Summary{Design: "cpu"}
	assert.Equal(t, ComparisonColumns, ComparisonColumnsFor(HasGoodput(without)))
	assert.Equal(t, ComparisonRow(&without), ComparisonRowFor(&without, false))
	judged := Summary{Design: "fpga", Load: Load{Judged: true}, Goodput: &Goodput{RequestsPerS: 1.5, Attainment: Attainment{Share: 0.75}}}
	unjudged := Summary{Design: "fpga", Goodput: &Goodput{RequestsPerS: 9, Attainment: Attainment{Share: 0.5}}}
	require.True(t, HasGoodput(without, judged))
	assert.Equal(t, append(slices.Clone(ComparisonColumns), "goodput_requests_per_s", "goodput_share"), ComparisonColumnsFor(true))
	tail := func(s Summary) []string { r := ComparisonRowFor(&s, true); return r[len(r)-2:] }
	assert.Equal(t, []string{"1.500000", "0.750000"}, tail(judged))
	assert.Equal(t, []string{"", "0.500000"}, tail(unjudged))
	assert.Equal(t, []string{"", ""}, tail(without))
	var b bytes.Buffer
	require.NoError(t, WriteSpreadCSV(&b, [][]Summary{{judged, judged}, {without}}))
	rows, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	n := len(rows[0])
	assert.Equal(t, []string{"goodput_share", "goodput_share_min", "goodput_share_max"}, rows[0][n-3:])
	assert.Equal(t, []string{"0.750000", "0.750000", "0.750000"}, rows[1][n-3:])
	assert.Equal(t, []string{"", "", ""}, rows[2][n-3:])
}
