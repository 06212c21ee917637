package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/hostcpu"
)

// sessionsTrace writes a sessions trace of turns (new tokens, outputs) per
// session, giving each turn's new tokens as token_ids (ids) or as a count,
// and returns its path.
func sessionsTrace(t *testing.T, ids bool, sessions int, turns ...[2]int) string {
	var b strings.Builder
	next := uint32(1)
	for i, tr := range turns {
		for s := range sessions {
			tokens := fmt.Sprintf(`"new_tokens": %d`, tr[0])
			if ids {
				list := make([]string, tr[0])
				for j := range list {
					list[j] = fmt.Sprint(next)
					next++
				}
				tokens = `"token_ids": [` + strings.Join(list, ", ") + "]"
			}
			fmt.Fprintf(&b, `{"session": "s%d", "turn": %d, "arrival_s": %d, %s, "output_tokens": %d}`+"\n", s, i, 100*i+s, tokens, tr[1])
		}
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// records runs the trace with sets and returns its requests' records.
func records(t *testing.T, path string, sets ...string) []hostcpu.Record {
	res := simulate(t, append([]string{"workload.kind=sessions", "workload.path=" + path}, sets...)...)
	return res.Run.sys.Records()
}

// TestTokenIDTraceTruncates: a trace of token ids gives its outputs as
// counts; the history still holds one id a token, so a truncation past
// the outputs cuts ids and counts alike (it once cut 110 ids from a
// history of 100 and panicked).
func TestTokenIDTraceTruncates(t *testing.T) {
	cases := []struct {
		name string
		sets []string
	}{
		{"fpga", nil},
		{"fpga blocks", []string{"fpga.hashing=block", "fpga.block_tokens=64"}},
		{"cpu", []string{"system.design=cpu"}},
		{"lmcache", []string{"system.design=lmcache"}},
		{"cachedattention", []string{"system.design=cachedattention"}},
	}
	path := sessionsTrace(t, true, 1, [2]int{100, 850}, [2]int{100, 60})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			recs := records(t, path, append([]string{"accelerator.max_model_len=1000"}, c.sets...)...)
			require.Len(t, recs, 2)
			r := recs[1]
			assert.True(t, r.Done)
			assert.Equal(t, int64(110), r.TruncatedTokens, "the turn passes the window by 110")
			assert.Equal(t, int64(940), r.PromptTokens)
		})
	}
}

// TestTokenIDsAndCountsReuseAlike: a trace given as token ids and the same
// trace given as counts reuse as many tokens, turn for turn, under every
// hashing scheme: the outputs' stand-in ids keep the ids as many as the
// tokens (block keys were hashed from shifted ids, 640 tokens of 704).
func TestTokenIDsAndCountsReuseAlike(t *testing.T) {
	cases := []struct {
		name string
		sets []string
		want int64 // turn 1's reuse
	}{
		{"blocks", []string{"fpga.hashing=block", "fpga.block_tokens=64"}, 704},
		{"patent", nil, 720},
		{"cpu", []string{"system.design=cpu"}, 720},
		{"lmcache", []string{"system.design=lmcache"}, 512},
		{"blocks truncated", []string{"fpga.hashing=block", "fpga.block_tokens=64", "accelerator.max_model_len=2000"}, -1},
		{"patent truncated", []string{"accelerator.max_model_len=2000"}, -1},
	}
	turns := [][2]int{{700, 20}, {700, 20}, {700, 20}}
	ids, counts := sessionsTrace(t, true, 3, turns...), sessionsTrace(t, false, 3, turns...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sets := append([]string{"accelerator.retain=off"}, c.sets...)
			byIDs, byCounts := records(t, ids, sets...), records(t, counts, sets...)
			require.Len(t, byIDs, 9)
			require.Len(t, byCounts, 9)
			var reused, truncated int64
			for i := range byIDs {
				a, b := byIDs[i], byCounts[i]
				assert.Equal(t, b.ReusedTokens, a.ReusedTokens, "request %d (session %d turn %d)", i, a.Session, a.Turn)
				assert.Equal(t, b.TruncatedTokens, a.TruncatedTokens, "request %d", i)
				reused += a.ReusedTokens
				truncated += a.TruncatedTokens
				if c.want >= 0 && a.Turn == 1 {
					assert.Equal(t, c.want, a.ReusedTokens, "request %d", i)
				}
			}
			assert.Positive(t, reused)
			if c.want < 0 {
				assert.Positive(t, truncated, "the window cuts the third turns")
			}
		})
	}
}

// TestMixedSessionIsRefused: a session that gives token ids on one turn
// and a count on another is refused when the scenario is built, naming
// the file and line, in either mode (functional mode once ran off the end
// of its prompt).
func TestMixedSessionIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mixed.jsonl")
	text := `{"session": "a", "turn": 0, "arrival_s": 0, "token_ids": [1, 2, 3, 4, 5], "output_tokens": 5}` + "\n" +
		`{"session": "a", "turn": 1, "arrival_s": 10, "new_tokens": 30, "output_tokens": 5}` + "\n" +
		`{"session": "a", "turn": 2, "arrival_s": 20, "token_ids": [1, 2], "output_tokens": 5}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	for _, mode := range []string{"timing", "functional"} {
		t.Run(mode, func(t *testing.T) {
			l, err := Load("", []string{"mode=" + mode, "workload.kind=sessions", "workload.path=" + path})
			require.NoError(t, err)
			_, err = Build(l)
			assert.ErrorContains(t, err, path+`:2: field token_ids: missing: session "a" gave token_ids from its turn 0 (line 1)`)
		})
	}
}
