package hostcpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/sim"
	"github.com/kvcosim/kvcosim/workloads"
)

// idTurn is a turn of n new token ids (from first on) and outputs output
// tokens, their ids given or not.
func idTurn(first uint32, n, outputs int64, givenOutputs bool) workloads.Turn {
	tr := turn(n, outputs, 10)
	for i := range n {
		tr.NewTokens = append(tr.NewTokens, first+uint32(i))
	}
	if givenOutputs {
		for i := range outputs {
			tr.Output = append(tr.Output, 900+uint32(i))
		}
	}
	return tr
}

// TestHistoryHoldsAnIDForEveryToken: a session of token ids keeps one id
// a token in its history whether the workload gives its outputs' ids or
// only their count; the stand-ins are the session's own, by position.
func TestHistoryHoldsAnIDForEveryToken(t *testing.T) {
	cases := []struct {
		name  string
		given bool
	}{
		{"outputs given", true},
		{"outputs counted", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _, eng := newTestSystem(t, recomputeConfig(), 1000,
				workloads.Session{ID: 0, Turns: []workloads.Turn{idTurn(1, 10, 4, c.given), idTurn(100, 5, 3, c.given)}},
				workloads.Session{ID: 1, Turns: []workloads.Turn{idTurn(1, 10, 4, c.given)}})
			eng.Run()
			a, b := s.sessions[0], s.sessions[1]
			require.Equal(t, int64(22), a.historyLen)
			require.Len(t, a.history, 22)
			require.Len(t, b.history, 14)
			assert.Equal(t, []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, a.history[:10])
			assert.Equal(t, []uint32{100, 101, 102, 103, 104}, a.history[14:19])
			if c.given {
				assert.Equal(t, []uint32{900, 901, 902, 903}, a.history[10:14])
				return
			}
			assert.Equal(t, uint32(s.keys.sessionHash(a, standInOutput, 10, 0)), a.history[10], "the first output's stand-in is by its position")
			assert.Equal(t, uint32(s.keys.sessionHash(a, standInOutput, 21, 0)), a.history[21])
			assert.NotEqual(t, a.history[10:14], b.history[10:14], "two sessions' outputs differ")
		})
	}
}

// TestSessionMixingIDsAndCountsIsRefused: a workload whose session gives
// ids on one turn and a count on another is refused, not run.
func TestSessionMixingIDsAndCountsIsRefused(t *testing.T) {
	cases := []struct {
		name  string
		turns []workloads.Turn
		want  string
	}{
		{"ids then a count", []workloads.Turn{idTurn(1, 5, 2, false), turn(3, 2, 10)}, "workload: session 7: turn 1 gives its new tokens as a count, turn 0 as ids"},
		{"a count then ids", []workloads.Turn{turn(3, 2, 10), turn(3, 2, 10), idTurn(1, 5, 2, false)}, "workload: session 7: turn 2 gives its new tokens as ids, turn 0 as a count"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eng := sim.NewEngine(64)
			kv, err := accel.NewKVMemory(1000, 1, 1)
			require.NoError(t, err)
			w := &workloads.Workload{Sessions: []workloads.Session{{ID: 7, Turns: c.turns}}}
			_, err = NewSystem(eng, recomputeConfig(), []Node{{Exec: &fakeExecutor{eng: eng, took: sim.Millisecond}, KV: kv}}, nil, w, sim.NewStreams(1))
			assert.ErrorContains(t, err, c.want)
		})
	}
}

// TestHistoryGrowsInPlace walks a session through its turns as arrive and
// finish do: each prompt is the history and the turn's new tokens, the
// history grows by the prompt and the outputs, a slice of an older
// history (an export's ids) keeps its tokens, and the ids are copied once,
// into an array with room for every turn (they were copied twice a turn).
func TestHistoryGrowsInPlace(t *testing.T) {
	turns := []workloads.Turn{
		{NewTokens: []uint32{1, 2, 3}, Output: []uint32{4, 5}},
		{NewTokens: []uint32{6}, Output: []uint32{7, 8, 9}},
		{NewTokens: []uint32{10, 11}, Output: []uint32{12}},
	}
	for i := range turns {
		turns[i].NewTokenCount, turns[i].OutputCount = int64(len(turns[i].NewTokens)), int64(len(turns[i].Output))
	}
	sess := &session{plan: workloads.Session{Turns: turns}}
	var want []uint32
	var exported [][]uint32
	for i, turn := range turns {
		prompt, n := sess.promptOf(turn)
		want = append(want, turn.NewTokens...)
		require.Equal(t, want, prompt, "turn %d's prompt", i)
		assert.Equal(t, int64(len(want)), n)
		sess.grow(prompt, n, turn.OutputCount, turn.Output)
		sess.turn++
		want = append(want, turn.Output...)
		require.Equal(t, want, sess.history, "after turn %d", i)
		assert.Equal(t, 12, cap(sess.history), "one array with room for every turn")
		exported = append(exported, sess.history)
	}
	for i, ids := range exported {
		assert.Equal(t, want[:len(ids)], ids, "the ids exported after turn %d", i)
	}
	assert.Equal(t, []uint32{1, 2, 3}, turns[0].NewTokens, "the workload's tokens are not written")
}

// TestHistoryBorrowsTheWorkloadsArray walks a session whose workload lays
// its ids out in one array (Session.Tokens) through its turns: with the
// workload's outputs the prompts and histories are pieces of that array
// (no copy); with other outputs (functional mode's) or after a cut at
// the front they are copied out; in every case they hold the right ids,
// and the workload's array is never written.
func TestHistoryBorrowsTheWorkloadsArray(t *testing.T) {
	cases := []struct {
		name        string
		ownOutputs  bool
		cutAfter    int // cut the history's first token after this turn (-1: never)
		borrowUntil int // the turns whose prompt is a piece of the array
	}{
		{"the workload's outputs", false, -1, 3},
		{"outputs of its own", true, -1, 1},
		{"cut after the first turn", false, 0, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			all := []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
			pristine := append([]uint32(nil), all...)
			turns := []workloads.Turn{
				{NewTokens: all[0:3:3], Output: all[3:5:5]},
				{NewTokens: all[5:6:6], Output: all[6:9:9]},
				{NewTokens: all[9:11:11], Output: all[11:12:12]},
			}
			for i := range turns {
				turns[i].NewTokenCount, turns[i].OutputCount = int64(len(turns[i].NewTokens)), int64(len(turns[i].Output))
			}
			sess := &session{plan: workloads.Session{Turns: turns, Tokens: all}}
			var want []uint32
			for i, turn := range turns {
				prompt, n := sess.promptOf(turn)
				want = append(want, turn.NewTokens...)
				require.Equal(t, want, prompt, "turn %d's prompt", i)
				assert.Equal(t, i < c.borrowUntil, &prompt[0] == &all[0], "turn %d's prompt is a piece of the array", i)
				output := turn.Output
				if c.ownOutputs {
					output = []uint32{90, 91, 92}[:turn.OutputCount]
				}
				sess.grow(prompt, n, turn.OutputCount, output)
				sess.turn++
				want = append(want, output...)
				require.Equal(t, want, sess.history, "after turn %d", i)
				if i == c.cutAfter {
					sess.history, sess.historyLen, want = sess.history[1:], sess.historyLen-1, want[1:]
				}
			}
			assert.Equal(t, pristine, all, "the workload's array is not written")
		})
	}
}
