package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/scenario"
)

// setFlags collects repeated --set key=value flags.
type setFlags []string

func (s *setFlags) String() string     { return fmt.Sprint(*s) }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

func runRun(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", stderr)
	cfg := fs.String("c", "", "scenario file (default: the embedded default scenario)")
	out := fs.String("o", "out", "output folder")
	seed := fs.String("seed", "", "override the scenario's seed")
	var sets setFlags
	fs.Var(&sets, "set", "override a key: --set dotted.key=value (repeatable)")
	force := fs.Bool("force", false, "write into an existing folder that is not a kvcosim output")
	var tr traceOptions
	fs.StringVar(&tr.chrome, "trace", "", "write the spans as Chrome trace events (Perfetto) to this .json file")
	fs.StringVar(&tr.vcd, "vcd", "", "write FPGA, storage and FIFO signals as a VCD (GTKWave) to this file")
	fs.StringVar(&tr.window, "trace-window", "", "keep only FROM:TO of simulated time in the traces (e.g. 10s:12s)")
	fs.StringVar(&tr.filter, "trace-filter", "", "keep only components whose name contains one of these (comma-separated, e.g. node0.fpga,kioxia)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "simrun run: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if err := tr.parse(); err != nil {
		fmt.Fprintf(stderr, "simrun run: %v\n", err)
		return 2
	}
	if err := tr.apart(*out, runFiles); err != nil {
		fmt.Fprintf(stderr, "simrun run: %v\n", err)
		return 2
	}
	if flagGiven(fs, "seed") { // --seed '' too: it sets no seed
		if _, err := strconv.ParseUint(*seed, 10, 64); err != nil {
			fmt.Fprintf(stderr, "simrun run: --seed %q: want a whole number from 0 to %d\n", *seed, uint64(math.MaxUint64))
			return 2
		}
		for _, s := range sets {
			if strings.HasPrefix(s, "seed=") {
				fmt.Fprintf(stderr, "simrun run: --seed %s and --set %s both give the seed: use one\n", *seed, s)
				return 2
			}
		}
		sets = append(setFlags{"seed=" + *seed}, sets...)
	}
	l, err := scenario.Load(*cfg, sets)
	if err != nil {
		fmt.Fprintf(stderr, "simrun run: %v\n", err)
		return 2
	}
	for _, w := range l.Warnings() {
		fmt.Fprintf(stderr, "simrun run: warning: %s\n", w)
	}
	if err := checkOutput(*out, *force); err != nil {
		fmt.Fprintf(stderr, "simrun run: %v\n", err)
		return 2
	}
	res, x, code := execute(l, &tr, stderr)
	if res == nil {
		return code
	}
	sum := res.Summary()
	warnSaturated(stderr, "simrun run", &sum)
	undo, err := prepareOutput(*out, *force)
	if err == nil {
		if err = writeRun(*out, l, &sum, res.Rows()); err == nil {
			err = x.close() // the traces last: a folder is whole or absent
		}
		if err != nil {
			undo()
		}
	}
	if err != nil {
		x.abort()
		fmt.Fprintf(stderr, "simrun run: %v\n", err)
		return 2
	}
	printSummary(stdout, &sum, res.Wall)
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	return 0
}

// execute builds and runs a loaded scenario, with its trace exports
// attached; the caller commits them (close) or drops them (abort).
func execute(l *scenario.Loaded, tr *traceOptions, stderr io.Writer) (*scenario.Result, *traceExport, int) {
	run, err := scenario.Build(l)
	if err != nil {
		fmt.Fprintf(stderr, "simrun: cannot build the scenario: %v\n", err)
		return nil, nil, 2
	}
	x, err := tr.attach(run, l.Storage.Device)
	if err != nil {
		fmt.Fprintf(stderr, "simrun: %v\n", err)
		return nil, nil, 2
	}
	res, err := executeWatched(run, runMeter(stderr))
	if err != nil {
		x.abort()
		fmt.Fprintf(stderr, "simrun: the run stopped: %v\n", err)
		return nil, nil, 1
	}
	return res, x, 0
}

// runFiles are the files writeRun puts in a run's folder, in the order it
// writes them.
var runFiles = []string{"summary.json", "requests.csv", "scenario.yaml", outputMarker}

// writeRun writes summary.json, requests.csv and scenario.yaml into dir,
// in runFiles' order (one order every run: a failure names the same file).
func writeRun(dir string, l *scenario.Loaded, sum *reports.Summary, rows []reports.RequestRow) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create the output folder: %v", err)
	}
	var js bytes.Buffer
	if err := sum.WriteJSON(&js); err != nil {
		return err
	}
	files := map[string]func(io.Writer) error{
		"summary.json": reports.Bytes(js.Bytes()),
		"requests.csv": func(w io.Writer) error { // streamed: a million rows need no copy in memory
			b := bufio.NewWriter(w)
			if err := reports.WriteRequestsCSV(b, rows); err != nil {
				return err
			}
			return b.Flush()
		},
		"scenario.yaml": reports.Bytes(l.YAML()), outputMarker: reports.Bytes(markerText)}
	for _, name := range runFiles {
		if err := reports.WriteFile(filepath.Join(dir, name), files[name]); err != nil {
			return err
		}
	}
	return nil
}

// warnSaturated says on w when a run could not keep up with its load: its
// latencies then measure a queue that grows with the run's length.
func warnSaturated(w io.Writer, who string, s *reports.Summary) {
	if s.Saturated {
		fmt.Fprintf(w, "%s: warning: design %s is saturated: %s\n", who, s.Design, s.Load.Why)
	}
}

// rejectedWhy is what refused a run's rejected requests, by reason as
// summary.json counts them: " (context_window 0, kv_memory 11)"; nothing
// when none was.
func rejectedWhy(s *reports.Summary) string {
	if s.RequestsRejected == 0 {
		return ""
	}
	var by []string
	for _, why := range slices.Sorted(maps.Keys(s.RequestsRejectedByReason)) {
		by = append(by, fmt.Sprintf("%s %d", why, s.RequestsRejectedByReason[why]))
	}
	return " (" + strings.Join(by, ", ") + ")"
}

// printSummary prints the headline figures of a run and the wall time it
// took (on the console only: the output files hold nothing that varies
// from one run of a seed to the next).
func printSummary(w io.Writer, s *reports.Summary, wall time.Duration) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "design\t%s\n", s.Design)
	fmt.Fprintf(tw, "requests\t%d completed, %d rejected%s, %d truncated to fit the context window; %d sessions\n",
		s.RequestsCompleted, s.RequestsRejected, rejectedWhy(s), s.RequestsTruncated, s.Sessions)
	fmt.Fprintf(tw, "TTFT ms\tmean %.1f  p50 %.1f  p90 %.1f  p99 %.1f\n", s.TTFTms.Mean, s.TTFTms.P50, s.TTFTms.P90, s.TTFTms.P99)
	fmt.Fprintf(tw, "TPOT ms\tmean %.2f  p50 %.2f  p99 %.2f\n", s.TPOTms.Mean, s.TPOTms.P50, s.TPOTms.P99)
	fmt.Fprintf(tw, "prefill tokens\t%d computed, %d reused from the store, %d resident (hit ratio %.3f)\n",
		s.PrefillTokensComputed, s.PrefillTokensReused, s.PrefillTokensResident, s.HitRatioTokens)
	fmt.Fprintf(tw, "throughput\t%.0f output tokens/s over %.0f s simulated; %.0f sustained (the load kept up for good)\n",
		s.ThroughputTokensPerS, s.SimTimeS, s.SustainedOutputTokensPerS)
	if s.Load.Judged {
		fmt.Fprintf(tw, "load\t%.3g sessions/s offered, %.3g delivered (%.1f %%)%s\n", s.Load.OfferedSessionsPerS,
			s.Load.DeliveredSessionsPerS, 100*s.Load.DeliveredShare, map[bool]string{true: ": SATURATED"}[s.Saturated])
	} else {
		fmt.Fprintf(tw, "load\tnot judged (fewer than %d sessions, or all at once)\n", reports.MinJudgedSessions)
	}
	fmt.Fprintf(tw, "evictions\tdevice %d, store %d\n", s.Evictions["device"], s.Evictions["store"])
	fmt.Fprintf(tw, "wall time\t%.2f s, %d events\n", wall.Seconds(), s.Events)
	tw.Flush()
}
