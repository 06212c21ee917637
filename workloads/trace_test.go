package workloads

import (
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

func writeFile(t *testing.T, name, text string) string {
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

const goodMooncake = `{"timestamp": 0, "input_length": 1000, "output_length": 5, "hash_ids": [0, 1]}
{"timestamp": 3000, "input_length": 1500, "output_length": 7, "hash_ids": [0, 1, 2]}
{"timestamp": 3000, "input_length": 600, "output_length": 3, "hash_ids": [0, 9]}
`

func TestMooncakeStatsByHand(t *testing.T) {
	tr, err := ReadTrace("mooncake", writeFile(t, "m.jsonl", goodMooncake), false)
	require.NoError(t, err)
	s := tr.Stats()
	assert.Equal(t, 3, s.Requests)
	assert.Equal(t, 3*sim.Second, s.Duration)
	assert.InDelta(t, 1.0, s.RatePerS(), 1e-12)
	// request 2 reuses blocks 0, 1 (1,024 tokens); request 3 reuses block 0
	// (512 tokens): 3 of 7 blocks, 1,536 of 3,100 tokens.
	assert.Equal(t, int64(3), s.HitBlocks)
	assert.Equal(t, int64(7), s.Blocks)
	assert.Equal(t, int64(1536), s.HitTokens)
	assert.Equal(t, int64(3100), s.InputTokens)
	assert.Equal(t, []uint64{0, 1, 2}, tr.Requests[1].BlockKeys)
	assert.Equal(t, 2, tr.Requests[1].Line)
}

func TestHitTokensAreCappedByTheInput(t *testing.T) {
	text := `{"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [4, 5]}
{"timestamp": 1, "input_length": 600, "output_length": 1, "hash_ids": [4, 5]}
`
	tr, err := ReadTrace("mooncake", writeFile(t, "m.jsonl", text), false)
	require.NoError(t, err)
	assert.Equal(t, int64(599), tr.Stats().HitTokens, "two blocks matched, but only 600 prompt tokens, the last of them computed")
}

func TestReadsGzip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl.gz")
	f, err := os.Create(path)
	require.NoError(t, err)
	gz := gzip.NewWriter(f)
	_, err = gz.Write([]byte(goodMooncake))
	require.NoError(t, err)
	require.NoError(t, gz.Close())
	require.NoError(t, f.Close())
	tr, err := ReadTrace("mooncake", path, false)
	require.NoError(t, err)
	assert.Len(t, tr.Requests, 3)
}

func TestBadLinesNameFileLineAndField(t *testing.T) {
	cases := []struct {
		name, format, line, want string
	}{
		{"bad json", "mooncake", `{"timestamp": 0,`, ":2: bad JSON"},
		{"text after the object", "mooncake", `{"timestamp": 5000, "input_length": 10, "output_length": 1, "hash_ids": [0]} trailing`, `:2: bad JSON: "trailing" after the line's object`},
		{"two objects on a line", "mooncake", `{"timestamp": 5000, "input_length": 10, "output_length": 1, "hash_ids": [0]} {"timestamp": 6000}`, `:2: bad JSON: "{\"timestamp\": 6000}" after the line's object`},
		{"missing field", "mooncake", `{"timestamp": 5000, "output_length": 1, "hash_ids": [0]}`, ":2: field input_length: missing"},
		{"negative length", "mooncake", `{"timestamp": 5000, "input_length": 10, "output_length": -1, "hash_ids": [0]}`, ":2: field output_length: -1: must be at least 1"},
		{"no output", "mooncake", `{"timestamp": 5000, "input_length": 10, "output_length": 0, "hash_ids": [0]}`, ":2: field output_length: 0: must be at least 1"},
		{"hash_ids count", "mooncake", `{"timestamp": 5000, "input_length": 1025, "output_length": 1, "hash_ids": [0, 1]}`, ":2: field hash_ids: 2 ids for input_length 1025: want ceil(1025 / 512) = 3"},
		{"backwards", "mooncake", `{"timestamp": 10, "input_length": 10, "output_length": 1, "hash_ids": [0]}`, ":2: field timestamp: 10ms goes backwards"},
		// issue 38: the sessions format's arrival is arrival_s, azure's TIMESTAMP
		{"sessions backwards", "sessions", `{"session": "b", "turn": 0, "arrival_s": 1, "new_tokens": 3, "output_tokens": 1}`, ":2: field arrival_s: 1s goes backwards"},
		{"azure backwards", "azure", `2023-11-16 18:15:40.0000000,12,2`, ":3: field TIMESTAMP: "},
		{"azure fields", "azure", `2023-11-16 18:15:50.0000000,12`, ":3: 2 fields"},
		{"azure time", "azure", `yesterday,1,2`, ":3: field TIMESTAMP"},
		{"azure count", "azure", `2023-11-16 18:15:50.0000000,x,2`, ":3: field ContextTokens"},
		{"sessions turn", "sessions", `{"session": "a", "arrival_s": 9, "new_tokens": 3, "output_tokens": 1}`, ":2: field turn: missing or negative"},
		{"sessions ids", "sessions", `{"session": "a", "turn": 1, "arrival_s": 9, "new_tokens": 3, "token_ids": [1], "output_tokens": 1}`, ":2: field new_tokens: 3, but token_ids has 1"},
	}
	first := map[string]string{
		"mooncake": `{"timestamp": 1000, "input_length": 10, "output_length": 1, "hash_ids": [0]}` + "\n",
		"azure":    "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n",
		"sessions": `{"session": "a", "turn": 0, "arrival_s": 5, "new_tokens": 3, "output_tokens": 1}` + "\n",
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, "trace", first[c.format]+c.line+"\n")
			assertOneBadLine(t, c.format, path, path+c.want)
		})
	}
}

// assertOneBadLine checks that the trace fails naming want and that, with
// skip_bad_lines, the bad line is skipped, counted and not in the stats.
func assertOneBadLine(t *testing.T, format, path, want string) {
	_, err := ReadTrace(format, path, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), want)
	tr, err := ReadTrace(format, path, true)
	require.NoError(t, err, "skip_bad_lines keeps the good line")
	assert.Equal(t, 1, tr.SkippedLines)
	require.Len(t, tr.Requests, 1)
	assert.Equal(t, 1, tr.Stats().Requests, "the bad line is not counted")
}

func TestMissingAndEmptyFiles(t *testing.T) {
	_, err := ReadTrace("mooncake", filepath.Join(t.TempDir(), "absent.jsonl"), false)
	assert.ErrorContains(t, err, "absent.jsonl: no such file")
	_, err = ReadTrace("mooncake", writeFile(t, "empty.jsonl", ""), false)
	assert.ErrorContains(t, err, "empty.jsonl: empty file")
	_, err = ReadTrace("azure", writeFile(t, "header.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"), false)
	assert.ErrorContains(t, err, "header.csv: no requests")
	_, err = ReadTrace("vidur", "x", false)
	assert.ErrorContains(t, err, `trace format "vidur": known formats are mooncake, azure, ragpulse, sessions`)
}

func TestBundledTraces(t *testing.T) {
	cases := []struct {
		format, path string
		requests     int
		skipped      int
	}{
		{"mooncake", "mooncake_conversation_trace.jsonl.gz", 12031, 0},
		{"mooncake", "mooncake_synthetic_trace.jsonl.gz", 3993, 0},
		{"azure", "azure_conv.csv.gz", 19366, 0},
		{"azure", "azure_code.csv.gz", 8819, 0},
		// the second week restarts its timestamps at 0: skipped as backwards
		{"ragpulse", "ragpulse/0_trace.jsonl.gz", 3802, 3304},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			tr, err := ReadTrace(c.format, filepath.Join("testdata", c.path), true)
			require.NoError(t, err)
			assert.Equal(t, c.requests, len(tr.Requests))
			assert.Equal(t, c.skipped, tr.SkippedLines)
		})
	}
}

func ExampleTrace_Stats() {
	tr, _ := ReadTrace("mooncake", "testdata/mooncake_synthetic_trace.jsonl.gz", false)
	s := tr.Stats()
	fmt.Printf("%d requests over %.0f s; ideal hit ratio %.4f of blocks, %.4f of tokens\n",
		s.Requests, s.Duration.Seconds(), s.HitRatioBlocks(), s.HitRatioTokens())
	// Output: 3993 requests over 1022 s; ideal hit ratio 0.6396 of blocks, 0.6512 of tokens
}

// TestSessionsGiveIDsOnEveryTurnOrNone: a session's turns give token_ids
// on every turn or on none; a mix is an error naming the file, the line,
// the session and its turn 0's line, and other sessions may choose
// otherwise.
func TestSessionsGiveIDsOnEveryTurnOrNone(t *testing.T) {
	const (
		ids0    = `{"session": "a", "turn": 0, "arrival_s": 0, "token_ids": [1, 2, 3], "output_tokens": 1}`
		count0  = `{"session": "a", "turn": 0, "arrival_s": 0, "new_tokens": 3, "output_tokens": 1}`
		ids1    = `{"session": "a", "turn": 1, "arrival_s": 1, "token_ids": [4, 5], "output_tokens": 1}`
		both1   = `{"session": "a", "turn": 1, "arrival_s": 1, "new_tokens": 2, "token_ids": [4, 5], "output_tokens": 1}`
		count1  = `{"session": "a", "turn": 1, "arrival_s": 1, "new_tokens": 2, "output_tokens": 1}`
		otherID = `{"session": "b", "turn": 0, "arrival_s": 0, "token_ids": [7], "output_tokens": 1}`
	)
	cases := []struct {
		name  string
		lines []string
		want  string // "" for a good trace
	}{
		{"ids throughout", []string{ids0, ids1}, ""},
		{"ids and an agreeing count", []string{ids0, both1}, ""},
		{"counts throughout", []string{count0, count1}, ""},
		{"another session gives ids", []string{count0, otherID, count1}, ""},
		{"ids then a count", []string{ids0, count1}, `:2: field token_ids: missing: session "a" gave token_ids from its turn 0 (line 1), and a session gives token_ids on every turn or on none`},
		{"a count then ids", []string{otherID, count0, ids1}, `:3: field token_ids: session "a" gave new_tokens without token_ids from its turn 0 (line 2), and a session gives token_ids on every turn or on none`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, "s.jsonl", strings.Join(c.lines, "\n")+"\n")
			tr, err := ReadTrace("sessions", path, false)
			if c.want == "" {
				require.NoError(t, err)
				assert.Len(t, tr.Requests, len(c.lines))
				return
			}
			assert.ErrorContains(t, err, path+c.want)
			tr, err = ReadTrace("sessions", path, true)
			require.NoError(t, err, "skip_bad_lines keeps the good lines")
			assert.Equal(t, 1, tr.SkippedLines)
			assert.Len(t, tr.Requests, len(c.lines)-1)
		})
	}
}

// TestWholePromptTurnsBringOnlyTheirNewTokens: a format whose requests give
// the whole prompt (RAGPulse) replays a session's later turn with the
// tokens its history does not hold (its input less the previous turn's
// input and output, at least 1); one whose requests give the turn's own
// prompt replays them as given.
func TestWholePromptTurnsBringOnlyTheirNewTokens(t *testing.T) {
	tr, err := ReadTrace("ragpulse", "testdata/ragpulse/0_trace.jsonl.gz", true)
	require.NoError(t, err)
	require.True(t, tr.wholePrompt, "ragpulse's requests give whole prompts")
	var order []string // sessions in order of their first request, as Workload numbers them
	bySession := map[string][]TraceRequest{}
	for _, r := range tr.Requests {
		if _, seen := bySession[r.Session]; !seen || r.Session == "" {
			order = append(order, r.Session)
		}
		bySession[r.Session] = append(bySession[r.Session], r)
	}
	for _, whole := range []bool{true, false} {
		tr.wholePrompt = whole
		w := tr.Workload(1)
		require.Len(t, w.Sessions, len(order))
		later := 0
		for i, s := range w.Sessions {
			reqs := bySession[order[i]]
			for k := 1; k < len(s.Turns); k++ {
				want := reqs[k].Input
				if whole {
					want = max(1, reqs[k].Input-reqs[k-1].Input-reqs[k-1].Output)
				}
				require.Equal(t, want, s.Turns[k].NewTokenCount, "whole prompts %v: session %d turn %d", whole, s.ID, k)
				later++
			}
		}
		assert.Positive(t, later, "the trace has sessions of several turns")
	}
}
