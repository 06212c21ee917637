package workloads

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ragpulseDir writes a RAGPulse trace beside one-chunk companion files.
func ragpulseDir(t testing.TB, trace string) string {
	dir := t.TempDir()
	for _, c := range ragpulseComponents {
		line := `{"` + c.idField + `": 1, "token_length": 8}` + "\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, c.file), []byte(line), 0o644))
	}
	path := filepath.Join(dir, "0_trace.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(trace), 0o644))
	return path
}

const ragpulseLine = `{"timestamp": "0", "input_length": 8, "output_length": 1, "hash_ids": {"user_input": [1]}, "session_id": "s"}`

// Every reproducer of a trace a user can feed: each is an error naming the
// file, the line and the field, and with skip_bad_lines a skipped line.
func TestTraceReproducersAreLineErrors(t *testing.T) {
	first := map[string]string{
		"mooncake": `{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [0]}`,
		"azure":    "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44",
		"sessions": `{"session": "a", "turn": 0, "arrival_s": 0, "new_tokens": 3, "output_tokens": 1}`,
		"ragpulse": ragpulseLine,
	}
	cases := []struct {
		name, format, line, want string
	}{
		{"epoch ms", "mooncake", `{"timestamp": 1700000000000, "input_length": 10, "output_length": 1, "hash_ids": [0]}`, ":2: field timestamp: 1700000000000 is 1.7e+09 s from the trace's start, past the 2000000s limit"},
		{"NaN mooncake", "mooncake", `{"timestamp": "NaN", "input_length": 10, "output_length": 1, "hash_ids": [0]}`, `:2: field timestamp: "NaN": want a non-negative number`},
		{"Inf mooncake", "mooncake", `{"timestamp": "Inf", "input_length": 10, "output_length": 1, "hash_ids": [0]}`, `:2: field timestamp: "Inf": want a non-negative number`},
		{"huge tokens", "mooncake", `{"timestamp": 1, "input_length": 9223372036854775807, "output_length": 1, "hash_ids": [0]}`, ":2: field input_length: 9223372036854775807: more than the limit of 16777216 tokens"},
		{"epoch s ragpulse", "ragpulse", strings.Replace(ragpulseLine, `"0"`, `"1757476916"`, 1), ":2: field timestamp: \"1757476916\" is 1.75748e+09 s"},
		{"NaN ragpulse", "ragpulse", strings.Replace(ragpulseLine, `"0"`, `"NaN"`, 1), `:2: field timestamp: "NaN": want a non-negative number`},
		{"huge output ragpulse", "ragpulse", strings.Replace(ragpulseLine, `"output_length": 1`, `"output_length": 9223372036854775807`, 1), ":2: field output_length: 9223372036854775807: more than the limit"},
		{"sessions 1e7 s", "sessions", `{"session": "a", "turn": 1, "arrival_s": 1e7, "new_tokens": 3, "output_tokens": 1}`, ":2: field arrival_s: 1e7 is 1e+07 s"},
		{"NaN sessions", "sessions", `{"session": "a", "turn": 1, "arrival_s": "NaN", "new_tokens": 3, "output_tokens": 1}`, `:2: field arrival_s: "NaN"`},
		{"first turn 5", "sessions", `{"session": "b", "turn": 5, "arrival_s": 1, "new_tokens": 3, "output_tokens": 1}`, `:2: field turn: 5: session "b"'s next turn is 0`},
		{"repeated turn 0", "sessions", `{"session": "a", "turn": 0, "arrival_s": 1, "new_tokens": 3, "output_tokens": 1}`, `:2: field turn: 0: session "a"'s next turn is 1`},
		{"azure months apart", "azure", "2024-05-16 18:15:46.6805900,374,44", `:3: field TIMESTAMP: "2024-05-16 18:15:46.6805900" is more than the 2000000s limit of a run from the first request`},
		{"azure year 9999", "azure", "9999-11-16 18:15:46.6805900,374,44", `:3: field TIMESTAMP: "9999-11-16`},
		{"azure year 0001", "azure", "0001-11-16 18:15:46.6805900,374,44", `:3: field TIMESTAMP: "0001-11-16`},
		{"azure huge tokens", "azure", "2023-11-16 18:15:47.0000000,9223372036854775807,44", ":3: field ContextTokens: 9223372036854775807: more than the limit"},
		// issue 38: a field given twice was read as the last
		{"timestamp twice", "mooncake", `{"timestamp": 1, "input_length": 10, "output_length": 1, "hash_ids": [0], "timestamp": 0}`, ":2: field timestamp: written twice in the line's object"},
		{"arrival_s twice", "sessions", `{"session": "a", "turn": 1, "arrival_s": 5, "arrival_s": 1, "new_tokens": 3, "output_tokens": 1}`, ":2: field arrival_s: written twice"},
		{"a hash_ids key twice", "ragpulse", strings.Replace(ragpulseLine, `{"user_input": [1]}`, `{"user_input": [1], "user_input": [2]}`, 1), ":2: field hash_ids.user_input: written twice"},
		{"long line", "mooncake", strings.Repeat(" ", MaxLineBytes+10), ":2: longer than the 64 MiB line limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "long line" && testing.Short() {
				t.Skip("a 64 MiB line in -short")
			}
			text := first[c.format] + "\n" + c.line + "\n"
			path := writeFile(t, "trace", text)
			if c.format == "ragpulse" {
				path = ragpulseDir(t, text)
			}
			assertOneBadLine(t, c.format, path, path+c.want)
		})
	}
}

func TestAzureHeaderIsChecked(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"missing", "2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:47.6805900,374,44\n", `:1: field header: "2023-11-16 18:15:46.6805900,374,44": want the columns TIMESTAMP,ContextTokens,GeneratedTokens`},
		{"reordered", "ContextTokens,TIMESTAMP,GeneratedTokens\n374,2023-11-16 18:15:46.6805900,44\n", `:1: field header: "ContextTokens,TIMESTAMP,GeneratedTokens"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, "a.csv", c.text)
			for _, skip := range []bool{false, true} {
				_, err := ReadTrace("azure", path, skip)
				assert.ErrorContains(t, err, path+c.want, "skip_bad_lines %v", skip)
			}
		})
	}
}

func TestEveryLineBadNamesTheFirst(t *testing.T) {
	path := writeFile(t, "m.jsonl", `{"timestamp": "NaN", "input_length": 10, "output_length": 1, "hash_ids": [0]}`+"\n{\n")
	_, err := ReadTrace("mooncake", path, true)
	assert.ErrorContains(t, err, path+": no requests: every line skipped as malformed; the first: "+path+`:1: field timestamp: "NaN"`)
}

func TestTruncatedGzipIsNamed(t *testing.T) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	_, err := gz.Write([]byte(strings.Repeat(goodMooncake, 50)))
	require.NoError(t, err)
	require.NoError(t, gz.Close())
	path := filepath.Join(t.TempDir(), "m.jsonl.gz")
	require.NoError(t, os.WriteFile(path, buf.Bytes()[:buf.Len()/2], 0o644))
	for _, skip := range []bool{false, true} {
		_, err = ReadTrace("mooncake", path, skip)
		assert.ErrorContains(t, err, path+": truncated gzip stream after line", "skip_bad_lines %v", skip)
	}
}

func TestSyntheticSizeIsEstimatedBeforeDrawing(t *testing.T) {
	cases := []struct {
		name string
		edit func(c *SyntheticConfig)
		want string
	}{
		{"system prompt", func(c *SyntheticConfig) { c.SystemPromptTokens = 10_000_000_000 }, "workload.system_prompt_tokens: 400 sessions of 3.51 turns (system prompt 10000000000 tokens) would take about 9.6e+04 GB in a run, more than the 4 GiB limit (workload.memory_limit_gib, on a machine with room)"},
		{"sessions", func(c *SyntheticConfig) { c.Sessions = 10_000_000 }, "workload.sessions: 10000000 sessions of 3.51 turns (system prompt 0 tokens) would take about 809 GB in a run, more than the 4 GiB limit (workload.memory_limit_gib, on a machine with room)"},
		{"turns", func(c *SyntheticConfig) { c.TurnsMean = 1e9 }, "workload.turns_mean: 400 sessions of 1e+09 turns (system prompt 0 tokens) would take about 6.48e+06 GB in a run, more than the 4 GiB limit (workload.memory_limit_gib, on a machine with room)"},
		{"sessions past 4 GB", func(c *SyntheticConfig) { c.Sessions, c.SessionRatePerS = 290_000, 1 }, "workload.sessions: 290000 sessions of 3.51 turns (system prompt 0 tokens) would take about 23.5 GB in a run, more than the 4 GiB limit (workload.memory_limit_gib, on a machine with room)"},
		{"sessions just past 4 GB", func(c *SyntheticConfig) { c.Sessions, c.SessionRatePerS = 52_696, 1 }, "workload.sessions: 52696 sessions of 3.51 turns (system prompt 0 tokens) would take about 4.3 GB in a run, more than the 4 GiB limit (workload.memory_limit_gib, on a machine with room)"},
		{"past a limit raised to 16 GiB", func(c *SyntheticConfig) { c.Sessions, c.SessionRatePerS, c.MemoryLimitBytes = 290_000, 1, 16<<30 },
			"workload.sessions: 290000 sessions of 3.51 turns (system prompt 0 tokens) would take about 23.5 GB in a run, more than the 16 GiB limit (workload.memory_limit_gib, on a machine with room)"},
		{"rate", func(c *SyntheticConfig) { c.SessionRatePerS = 1e-6 }, "workload.session_rate_per_s = 1e-06: 400 sessions arrive over about 4e+08 s, past half the 2000000s limit of a run"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultSynthetic()
			c.edit(&cfg)
			assert.EqualError(t, cfg.Validate(), c.want)
		})
	}
	assert.NoError(t, DefaultSynthetic().Validate())
	c := DefaultSynthetic()
	c.Sessions, c.SessionRatePerS = 52_695, 1
	assert.NoError(t, c.Validate(), "the most default sessions within 4 GB")
	c.Sessions, c.MemoryLimitBytes = 285_000, 32<<30
	assert.NoError(t, c.Validate(), "a simulated day of a cluster within a limit raised to 32 GiB")
}

// The run's memory estimate against the resident sets measured (the
// table at runTokenBytes): never below one, and within 1.5x of the least.
func TestRunMemoryEstimateBoundsMeasuredRuns(t *testing.T) {
	cases := []struct {
		name                  string
		sessions, system      int
		turns                 float64
		tiny                  bool
		fpgaMB, lmcacheMB, mb float64 // measured resident; the estimate
	}{
		{"10k", 10_000, 0, 3.51, false, 596, 708, 842},
		{"20k", 20_000, 0, 3.51, false, 1177, 1366, 1651},
		{"40k", 40_000, 0, 3.51, false, 2271, 2688, 3268},
		{"10k system prompt 4000", 10_000, 4000, 3.51, false, 1380, 1474, 1802},
		{"10k turns_mean 7", 10_000, 0, 7, false, 1199, 1259, 1407},
		{"20k one-token turns", 20_000, 0, 3.51, true, 130, 143.6, 191},
		{"10 sessions", 10, 0, 3.51, false, 19.9, 19.9, 34},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultSynthetic()
			cfg.Sessions, cfg.SystemPromptTokens, cfg.TurnsMean = c.sessions, c.system, c.turns
			if c.tiny {
				cfg.FirstPrompt, cfg.FollowUpPrompt, cfg.Output = LengthFit{1, 1}, LengthFit{1, 1}, LengthFit{1, 1}
			}
			est := cfg.RunMemoryEstimate() / 1e6
			assert.InDelta(t, c.mb, est, 0.5, "estimate, MB")
			assert.GreaterOrEqual(t, est, max(c.fpgaMB, c.lmcacheMB), "never below a measured run")
			if c.sessions >= 10_000 {
				assert.LessOrEqual(t, est, 1.5*min(c.fpgaMB, c.lmcacheMB), "within 1.5x of a measured run")
			}
		})
	}
	c := DefaultSynthetic()
	assert.InDelta(t, 3049, c.TokensPerSession(), 1, "1,371 first + 2.51 x 391 follow-up + 3.51 x 198 output")
	c.SystemPromptTokens = 1000
	assert.InDelta(t, 4049, c.TokensPerSession(), 1, "a system prompt is every session's")
}

// TestEndlessFileIsRefused: a trace path that never ends a line (the
// probe's /dev/zero) was read forever, skipping bad lines or not; it now
// stops after maxUnendedBytes naming the file and line.
func TestEndlessFileIsRefused(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	for _, format := range []string{"mooncake", "azure", "sessions"} {
		for _, skip := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/skip=%v", format, skip), func(t *testing.T) {
				_, err := ReadTrace(format, "/dev/zero", skip)
				assert.EqualError(t, err, "/dev/zero:1: no end of line in 1024 MiB: not a trace of lines")
			})
		}
	}
}
