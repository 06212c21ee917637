// Command simrun is kvcosim's command line: it runs scenarios, studies and
// the checks that keep the models honest.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// A command is one subcommand of simrun.
type command struct {
	name, summary string
	run           func(args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"run", "run a scenario: run [-c FILE] [-o DIR] [--seed N] [--set key=value]...", runRun},
		{"sweep", "run a grid of scenarios: sweep -c SWEEP.yaml -o DIR [-j N] [--shard I/N] [--force]", runSweep},
		{"merge", "join sweep shards into one sweep.csv: merge -o OUT DIR...", runMerge},
		{"report", "draw a sweep's plots from its sweep.csv: report -i DIR", runReport},
		{"explain", "narrate one session's walk through the system, claim by claim: explain [-c FILE] --session ID", runExplain},
		{"regress", "compare the micro-scenarios' stage cycles and times with their goldens: regress [--update]", runRegress},
		{"calibrate", "run every calibration check and print the table (--json for JSON)", runCalibrate},
		{"fidelity", "check every published figure over seeds and print the table: fidelity [--seeds N] [--quick] [--paper-scale=false] [--json] [-j N] [--root DIR]", runFidelity},
		{"trace-stats", "a trace's statistics and ideal prefix hit ratio: trace-stats FORMAT:PATH", runTraceStats},
		{"kernels", "run a golden-vector file of the decoding kernels: kernels --vectors FILE", runKernels},
		{"verify", "functional mode: import equals recompute: verify [-c FILE] [--sessions N] [--seed S]", runVerify},
	}
}

// run dispatches to a subcommand and returns the exit status: 0 success,
// 1 a check failed, 2 bad usage or input.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help") {
		return runStudy(args, stdout, stderr) // plain simrun: the default study
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "simrun: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

// newFlagSet is a subcommand's flags: errors and help go to stderr, and
// the caller returns 2 when parsing fails.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// flagGiven reports whether the command line gave the flag name, with any
// value, an empty one included.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: simrun [-c FILE] [-o DIR] [-j N] [--force] [--set key=value]...
       simrun COMMAND [flags]

With no command, simrun runs the default study: every design on the embedded
default scenario (or -c FILE), their resumed-turn latency against offered load,
both on study.seeds seeds (default 2; --set study.seeds=N) shown as mean, least
and greatest, the break-even map, the hit ratio against store capacity and the
drives' endurance. It writes DIR/report.html (DIR is out unless -o says otherwise),
comparison.csv, each design's outputs and the plots, and prints the finding.
  -c FILE          scenario file (default: the embedded default scenario)
  -o DIR           output folder (default out)
  -j N             runs at once (default: the number of cores)
  --force          write into an existing folder that is not a kvcosim output
  --set key=value  override a scenario key (repeatable; docs/scenario.md)

`)
	fmt.Fprintln(w, "commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
}
