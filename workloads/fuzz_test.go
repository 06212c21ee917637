package workloads

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

// fuzzTrace writes text as a trace of the format and checks that reading
// it, strict or skipping, either fails or gives requests that a run can
// take: arrivals in order within sim.Horizon, token counts in range.
func fuzzTrace(t *testing.T, format, text string) {
	path := filepath.Join(t.TempDir(), "trace")
	if format == "ragpulse" {
		path = ragpulseDir(t, text)
	} else {
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	for _, skip := range []bool{false, true} {
		tr, err := ReadTrace(format, path, skip)
		if err != nil {
			continue
		}
		prev := sim.Time(0)
		for _, r := range tr.Requests {
			require.True(t, r.Arrival >= prev && r.Arrival <= sim.Horizon, "line %d: arrival %v after %v", r.Line, r.Arrival, prev)
			require.True(t, r.Input >= 1 && r.Input <= MaxRequestTokens && r.Output >= 0 && r.Output <= MaxRequestTokens, "line %d", r.Line)
			prev = r.Arrival
		}
		tr.Stats()
	}
}

func FuzzMooncake(f *testing.F) {
	f.Add(goodMooncake)
	f.Add(`{"timestamp": "NaN", "input_length": 10, "output_length": 1, "hash_ids": [0]}`)
	f.Add(`{"timestamp": 1e300, "input_length": 10, "output_length": 1, "hash_ids": [0]}`)
	f.Fuzz(func(t *testing.T, text string) { fuzzTrace(t, "mooncake", text) })
}

func FuzzAzure(f *testing.F) {
	f.Add("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:47.0000000,10,2\n")
	f.Add("TIMESTAMP,ContextTokens,GeneratedTokens\n0001-01-01 00:00:00.0000000,1,1\n9999-12-31 23:59:59.9999999,1,1\n")
	f.Fuzz(func(t *testing.T, text string) { fuzzTrace(t, "azure", text) })
}

func FuzzRAGPulse(f *testing.F) {
	f.Add(ragpulseLine + "\n")
	f.Add(`{"timestamp": "1757476916", "input_length": 8, "output_length": 1, "hash_ids": {"user_input": [2]}, "session_id": "s"}`)
	f.Fuzz(func(t *testing.T, text string) { fuzzTrace(t, "ragpulse", text) })
}

func FuzzSessions(f *testing.F) {
	f.Add(`{"session": "a", "turn": 0, "arrival_s": 0, "new_tokens": 3, "output_tokens": 1}` + "\n" +
		`{"session": "a", "turn": 1, "arrival_s": 2.5, "new_tokens": 2, "output_tokens": 1, "node": 0}` + "\n" +
		`{"session": "b", "turn": 0, "arrival_s": 3, "token_ids": [1, 2], "output_tokens": 1}` + "\n")
	f.Add(`{"session": "a", "turn": 0, "arrival_s": 0, "token_ids": [1, 2], "output_tokens": 1}` + "\n" +
		`{"session": "a", "turn": 1, "arrival_s": 1, "new_tokens": 3, "output_tokens": 1}` + "\n")
	f.Add(`{"session": "a", "turn": 0, "arrival_s": "NaN", "new_tokens": 3, "output_tokens": 1}`)
	f.Fuzz(func(t *testing.T, text string) { fuzzTrace(t, "sessions", text) })
}
