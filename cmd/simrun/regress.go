package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kvcosim/kvcosim/internal/textdiff"
	"github.com/kvcosim/kvcosim/scenario"
	"github.com/kvcosim/kvcosim/sim"
)

// runRegress runs the canonical micro-scenarios and compares their stage
// spans (with FPGA cycle counts) and per-component picosecond totals with
// the stored goldens.
func runRegress(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("regress", stderr)
	dir := fs.String("dir", filepath.Join("testdata", "regress"), "the micro-scenarios' folder")
	update := fs.Bool("update", false, "rewrite the goldens with what the runs give now")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "simrun regress: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if st, err := os.Stat(*dir); err != nil || !st.IsDir() {
		fmt.Fprintf(stderr, "simrun regress: --dir %s: not a folder of micro-scenarios (NAME.yaml)\n", *dir)
		return 2
	}
	names, err := filepath.Glob(filepath.Join(*dir, "*.yaml"))
	if err != nil || len(names) == 0 {
		fmt.Fprintf(stderr, "simrun regress: no micro-scenarios (NAME.yaml) in %s\n", *dir)
		return 2
	}
	runs := make([]string, len(names)) // every run first: an update writes all goldens or none
	for i, path := range names {
		got, err := regressRun(path, strings.TrimSuffix(path, ".yaml")+".jsonl")
		if err != nil {
			fmt.Fprintf(stderr, "simrun regress: %s: %v\n", strings.TrimSuffix(filepath.Base(path), ".yaml"), err)
			return 2
		}
		runs[i] = got
	}
	changed := 0
	for i, path := range names {
		name, got := strings.TrimSuffix(filepath.Base(path), ".yaml"), runs[i]
		golden := strings.TrimSuffix(path, ".yaml") + ".golden"
		if *update {
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				fmt.Fprintf(stderr, "simrun regress: %v\n", err)
				return 2
			}
			fmt.Fprintf(stdout, "updated %s\n", name)
			continue
		}
		want, _ := os.ReadFile(golden)
		if d := textdiff.Diff(string(want), got); d != "" {
			changed++
			fmt.Fprintf(stdout, "CHANGED %s (golden -, now +):\n%s", name, firstLines(d, 40))
			continue
		}
		fmt.Fprintf(stdout, "ok %s\n", name)
	}
	if changed > 0 {
		fmt.Fprintf(stdout, "%d of %d micro-scenarios changed; simrun regress --update rewrites their goldens\n", changed, len(names))
		return 1
	}
	return 0
}

// firstLines keeps the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "") + fmt.Sprintf("... %d more lines\n", len(lines)-n)
}

// regressRun runs a micro-scenario and renders its golden text.
func regressRun(overlay, sessions string) (string, error) {
	l, err := scenario.Load(overlay, []string{"workload.kind=sessions", "workload.path=" + sessions})
	if err != nil {
		return "", err
	}
	run, err := scenario.Build(l)
	if err != nil {
		return "", err
	}
	var sink sim.SpanRecorder
	run.AddSpanSink(&sink)
	if _, err := run.Execute(); err != nil {
		return "", err
	}
	return renderRegress(sink.Spans), nil
}

// renderRegress lists the stage spans one per line, in the order they
// ended, then per component and operation the count, busy picoseconds and
// bytes of everything else (links, memories, SSD commands).
func renderRegress(spans []sim.Span) string {
	var b strings.Builder
	type key struct{ component, op string }
	type total struct{ n, busy, bytes int64 }
	totals := map[key]*total{}
	for _, sp := range spans {
		if sp.Part != "" {
			fmt.Fprintf(&b, "span %d %d %s %s id=%d bytes=%d", sp.Start, sp.End, sp.Component, sp.Operation, sp.ID, sp.Bytes)
			if sp.Clocked {
				fmt.Fprintf(&b, " cycles=%d", sp.Cycles)
			}
			for _, a := range sp.Attrs {
				fmt.Fprintf(&b, " %s=%s", a.Key, a.Value)
			}
			b.WriteByte('\n')
			continue
		}
		k := key{sp.Component, sp.Operation}
		if totals[k] == nil {
			totals[k] = &total{}
		}
		t := totals[k]
		t.n, t.busy, t.bytes = t.n+1, t.busy+int64(sp.End-sp.Start), t.bytes+sp.Bytes
	}
	keys := slices.SortedFunc(func(yield func(key) bool) {
		for k := range totals {
			if !yield(k) {
				return
			}
		}
	}, func(a, b key) int { return cmp.Or(cmp.Compare(a.component, b.component), cmp.Compare(a.op, b.op)) })
	for _, k := range keys {
		t := totals[k]
		fmt.Fprintf(&b, "total %s %s count=%d busy_ps=%d bytes=%d\n", k.component, k.op, t.n, t.busy, t.bytes)
	}
	return b.String()
}

// isStage reports whether a component is one a request's stages run on
