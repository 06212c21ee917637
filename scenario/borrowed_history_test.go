package scenario

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/workloads"
)

// TestBorrowedHistoriesRunAsCopies holds the host's two ways of keeping a
// session's history against each other: a synthetic workload lays a
// session's ids out in one array (Session.Tokens) that prompts and
// histories borrow, and the same sessions with every turn's ids in an
// array of its own (no Tokens) take the copying path. Both runs give the
// same summary, requests and generated tokens, with truncation (a cut
// history is copied out of the workload's array), a system prompt, block
// hashing, and functional mode's outputs (not the workload's), whose
// histories a recomputing design prefills again.
func TestBorrowedHistoriesRunAsCopies(t *testing.T) {
	window := []string{"accelerator.retain=off", "accelerator.max_model_len=1500", "workload.truncate_fill=0.5",
		"workload.system_prompt_tokens=200", "workload.sessions=30"}
	functional := []string{"mode=functional", "accelerator.retain=off", "workload.sessions=6", "workload.system_prompt_tokens=20",
		"workload.first_prompt_median_tokens=40", "workload.first_prompt_p90_tokens=80", "workload.follow_up_median_tokens=20",
		"workload.follow_up_p90_tokens=40", "workload.output_median_tokens=8", "workload.output_p90_tokens=16"} // tinylm's prefills are slow
	cases := []struct {
		name   string
		sets   []string
		reuses bool // resumed turns find stored KV
	}{
		{"fpga", window, true},
		{"fpga blocks", append([]string{"fpga.hashing=block", "fpga.block_tokens=64"}, window...), true},
		{"cpu", append([]string{"system.design=cpu"}, window...), true},
		{"cachedattention", append([]string{"system.design=cachedattention"}, window...), true},
		{"functional", functional, true},
		{"functional recompute", append([]string{"system.design=recompute"}, functional...), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			borrowed := built(t, c.sets)
			require.NotNil(t, borrowed.workload.Sessions[0].Tokens, "the synthetic workload lays its ids out in one array")
			l, err := Load("", c.sets)
			require.NoError(t, err)
			l.UseWorkload(copiedTurns(borrowed.workload))
			copied, err := Build(l)
			require.NoError(t, err)
			var summaries [2]reports.Summary
			var csvs [2][]byte
			var outputs [2]map[int64][]hostcpu.TurnOutput // functional mode's generated tokens
			for i, r := range []*Run{copied, borrowed} {
				res, err := r.Execute()
				require.NoError(t, err)
				summaries[i], csvs[i] = summaryAndCSV(t, res)
				if l.Mode == "functional" {
					outputs[i] = r.sys.Outputs()
				}
			}
			assert.Equal(t, summaries[0], summaries[1])
			assert.Equal(t, string(csvs[0]), string(csvs[1]))
			assert.Equal(t, outputs[0], outputs[1], "the turns generate the same tokens")
			assert.Equal(t, c.reuses, summaries[1].PrefillTokensReused > 0, "resumed turns reuse stored KV")
			assert.Equal(t, l.Mode != "functional", summaries[1].RequestsTruncated > 0, "requests truncated (functional mode has no window)")
		})
	}
}

// copiedTurns is w with every turn's ids in an array of its own and no
// session's Tokens.
func copiedTurns(w *workloads.Workload) *workloads.Workload {
	out := &workloads.Workload{Sessions: slices.Clone(w.Sessions)}
	for i := range out.Sessions {
		s := &out.Sessions[i]
		s.Tokens, s.Turns = nil, slices.Clone(s.Turns)
		for j := range s.Turns {
			s.Turns[j].NewTokens, s.Turns[j].Output = slices.Clone(s.Turns[j].NewTokens), slices.Clone(s.Turns[j].Output)
		}
	}
	return out
}
