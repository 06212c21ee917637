package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/workloads"
)

// runTraceStats prints a trace's statistics. Malformed lines are skipped
// and counted (the bundled RAGPulse trace's second week restarts its
// timestamps); the simulator itself rejects them unless told to skip.
func runTraceStats(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("trace-stats", stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	format, path, ok := strings.Cut(fs.Arg(0), ":")
	if fs.NArg() != 1 || !ok || format == "" || path == "" {
		fmt.Fprintf(stderr, "usage: simrun trace-stats FORMAT:PATH (formats: %s)\n", strings.Join(workloads.TraceFormats, ", "))
		return 2
	}
	t, err := workloads.ReadTrace(format, path, true)
	if err != nil {
		fmt.Fprintf(stderr, "simrun trace-stats: %v\n", err)
		return 2
	}
	printTraceStats(stdout, t)
	return 0
}

func printTraceStats(w io.Writer, t *workloads.Trace) {
	s := t.Stats()
	fmt.Fprintf(w, "trace           %s:%s\n", t.Format, t.Path)
	fmt.Fprintf(w, "requests        %d (%d malformed lines skipped)\n", s.Requests, t.SkippedLines)
	fmt.Fprintf(w, "duration        %.1f s\n", s.Duration.Seconds())
	fmt.Fprintf(w, "arrival rate    %.3f requests/s\n", s.RatePerS())
	for _, l := range []struct {
		name   string
		values []float64
	}{{"input tokens", s.Inputs}, {"output tokens", s.Outputs}} {
		p := reports.NewPercentiles(l.values)
		fmt.Fprintf(w, "%-15s mean %.1f  median %.0f  p90 %.0f  p99 %.0f\n", l.name, p.Mean, p.P50, p.P90, p.P99)
	}
	if !s.HasBlocks {
		fmt.Fprintln(w, "ideal hit ratio n/a (no block keys)")
		return
	}
	fmt.Fprintf(w, "ideal hit ratio blocks %.6f (%d of %d, %d-token blocks)\n", s.HitRatioBlocks(), s.HitBlocks, s.Blocks, s.BlockSize)
	fmt.Fprintf(w, "ideal hit ratio tokens %.6f (%d of %d)\n", s.HitRatioTokens(), s.HitTokens, s.InputTokens)
}
