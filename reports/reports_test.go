package reports

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/kvcosim/kvcosim/internal/golden"
)

func TestPercentilesAreNearestRank(t *testing.T) {
	v := make([]float64, 100)
	for i := range v {
		v[i] = float64(100 - i) // 100 .. 1, unsorted
	}
	p := NewPercentiles(v)
	assert.Equal(t, Percentiles{Mean: 50.5, P50: 50, P90: 90, P99: 99}, p)
	assert.Equal(t, Percentiles{}, NewPercentiles(nil))
	assert.Equal(t, Percentiles{Mean: 7, P50: 7, P90: 7, P99: 7}, NewPercentiles([]float64{7}))
}

func TestRequestsCSV(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteRequestsCSV(&b, []RequestRow{{ID: 3, Session: 1, Turn: 2, Decision: "query", Hit: true, TTFTms: 12.5}}))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 2)
	assert.Equal(t, strings.Join(RequestColumns, ","), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "3,1,2,0,query,true,0.000000,"))
	assert.Contains(t, lines[1], ",12.500000,")
}

// A run of the incremental engine adds its preemption columns before
// rejected, which stays last; a reserve run's file has none.
func TestRequestsCSVPreemptionColumns(t *testing.T) {
	var b bytes.Buffer
	row := RequestRow{ID: 1, Rejected: true, Preempted: &Preempted{Times: 2, RecomputedTokens: 300, MovedBytes: 4096}}
	require.NoError(t, WriteRequestsCSV(&b, []RequestRow{row}))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 2)
	assert.True(t, strings.HasSuffix(lines[0], ",truncated_tokens,preemptions,preempted_tokens_recomputed,preempted_bytes_moved,rejected"), lines[0])
	assert.True(t, strings.HasSuffix(lines[1], ",0,2,300,4096,true"), lines[1])
}

// The map keys come out sorted, so the same run gives the same bytes.
func ExampleSummary_WriteJSON() {
	s := Summary{Design: "fpga", Decisions: map[string]int64{"query": 2, "continuation": 5}}
	var b bytes.Buffer
	_ = s.WriteJSON(&b)
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "design") || strings.Contains(l, "continuation") || strings.Contains(l, "\"query\"") {
			fmt.Println(strings.TrimSpace(l))
		}
	}
	// Output:
	// "design": "fpga",
	// "continuation": 5,
	// "query": 2
}

// A page with warnings opens with a banner naming each; one without has
// none. A figure with a table draws the table in place of an image.
func TestPageBannerAndTableFigures(t *testing.T) {
	for _, c := range []struct {
		warnings []string
		banner   bool
	}{{nil, false}, {[]string{"fpga at 6x the load is saturated: delivered 76.0 %"}, true}} {
		var b bytes.Buffer
		p := Page{Title: "t", Warnings: c.warnings, Lead: "cachedattention wins", Headline: [][]string{{"design"}, {"fpga"}},
			Figures: []Figure{{File: "crossovers", Caption: "where", Table: [][]string{{"path", "fpga"}, {"1 drive", "from 1024 tokens"}}}}}
		require.NoError(t, p.WriteHTML(&b))
		html := b.String()
		assert.Equal(t, c.banner, strings.Contains(html, `<div class="warning" id="saturated">`))
		for _, w := range c.warnings {
			assert.Contains(t, html, "<li>"+w+"</li>")
		}
		assert.Contains(t, html, `<p class="lead">cachedattention wins</p>`)
		assert.Contains(t, html, "<td>from 1024 tokens</td>")
		assert.NotContains(t, html, `<img src="crossovers"`)
	}
}
