package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTraceStatsOnTheBundledTraces(t *testing.T) {
	const dir = "../../workloads/testdata/"
	cases := []struct {
		arg  string
		want []string
	}{
		{"mooncake:" + dir + "mooncake_synthetic_trace.jsonl.gz", []string{"requests        3993 (0 malformed lines skipped)",
			"ideal hit ratio blocks 0.639604 (77953 of 121877, 512-token blocks)", "ideal hit ratio tokens 0.651241 (39852448 of 61194628)"}},
		{"azure:" + dir + "azure_conv.csv.gz", []string{"requests        19366", "input tokens    mean 1154.7  median 1020  p90 2735",
			"ideal hit ratio n/a (no block keys)"}},
		{"ragpulse:" + dir + "ragpulse/0_trace.jsonl.gz", []string{"requests        3802 (3304 malformed lines skipped)"}},
	}
	for _, c := range cases {
		code, stdout, stderr := simrun("trace-stats", c.arg)
		assert.Equal(t, 0, code, stderr)
		for _, w := range c.want {
			assert.Contains(t, stdout, w)
		}
	}
}

func TestTraceStatsRejects(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "usage: simrun trace-stats FORMAT:PATH"},
		{[]string{"mooncake"}, "usage: simrun trace-stats FORMAT:PATH"},
		{[]string{"mooncake:/nonexistent.jsonl"}, "/nonexistent.jsonl: no such file"},
		{[]string{"vidur:x"}, `trace format "vidur"`},
	} {
		code, _, stderr := simrun(append([]string{"trace-stats"}, c.args...)...)
		assert.Equal(t, 2, code)
		assert.Contains(t, stderr, c.want)
	}
}
