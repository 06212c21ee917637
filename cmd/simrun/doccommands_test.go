package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocCommandsRun holds every command of README.md and docs/ to the
// code beside them, as a reader on a clone would type it, from the
// repository's root:
//
//   - a ```sh block's commands (a line ending in \ goes on; # starts a
//     comment) and a code span in prose that starts with go run, go test
//     or go build are commands; a code span that starts with simrun is a
//     mention; a command in another kind of block is refused (it belongs
//     in a ```sh block, where this test finds it);
//   - every one is checked by what it names: simrun's subcommand and
//     flags (as the subcommand's own flag set lists them), go test's and
//     go build's packages, the tests and benchmarks -run and -bench name
//     and the test flags the packages define, and every path inside the
//     repository (out/ excepted: the commands write it);
//   - every simrun command is then run in this process, its outputs (-o,
//     --out, --trace, --vcd and any path under out/) moved into a
//     temporary folder, and must exit 0; one with a placeholder (an
//     upper-case word such as FILE, DIR or N, an optional [part], or ...)
//     is a synopsis and is only checked; go test and go build are only
//     checked (they would run the tests inside a test);
//   - a command not run as written (too long, a GPU, Slurm, a viewer) is
//     in notRunAsWritten with why and the shorter variant that takes the
//     same path, which runs instead.
//
// docs/sources/ is left out: the project's sources, shipped as they were
// written for another folder. With -short nothing runs (the checks take
// well under a second).
func TestDocCommandsRun(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	var cmds []docCommand
	for _, page := range docPages(t, root) {
		if strings.HasPrefix(page, "docs/sources/") {
			continue // the sources as they were written, for another folder
		}
		text, err := os.ReadFile(filepath.Join(root, page))
		require.NoError(t, err)
		found, problems := pageCommands(page, string(text))
		for _, p := range problems {
			t.Error(p)
		}
		cmds = append(cmds, found...)
	}
	require.NotEmpty(t, cmds)
	t.Chdir(root) // the pages' paths are the root's
	checks := newDocChecker(root)
	for _, c := range cmds {
		for _, p := range checks.check(c) {
			t.Errorf("%s: %s: %s", c.where, c.text, p)
		}
	}
	runs, problems := docRuns(cmds)
	for _, p := range append(problems, unusedExceptions(cmds)...) {
		t.Error(p)
	}
	if testing.Short() {
		t.Skipf("-short: %d commands checked, none of the %d runs made", len(cmds), len(runs))
	}
	before := repoStatus(root)
	tmp := t.TempDir()
	for _, r := range runs {
		args := intoFolder(r.args, tmp)
		start := time.Now()
		var stdout, stderr bytes.Buffer
		code := run(args, &stdout, &stderr)
		t.Logf("%s: %.1f s: simrun %s", r.where, time.Since(start).Seconds(), strings.Join(r.args, " "))
		if code != 0 {
			t.Errorf("%s: simrun %s exited %d:\n%s", r.where, strings.Join(args, " "), code, tail(stderr.String(), 2000))
		}
		for _, f := range docFigures {
			if f.command == r.text {
				assert.Contains(t, stdout.String(), f.stdout, "%s: the figure the page quotes", r.where)
			}
		}
	}
	assert.Equal(t, before, repoStatus(root), "the commands changed files of the repository")
}

// repoStatus is git's list of the checkout's changed and new files ("" if
// git or the checkout is missing).
func repoStatus(root string) string {
	out, _ := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=all").Output()
	return string(out)
}

// TestDocCommandChecksCatch: each kind of command a page could get wrong
// is caught, and what is right passes.
func TestDocCommandChecksCatch(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	sh := func(line string) string { return "```sh\n" + line + "\n```\n" }
	for _, c := range []struct{ page, want string }{
		{sh("go run ./cmd/simrun run --no-such-flag"), "simrun run has no flag -no-such-flag"},
		{sh("go run ./cmd/simrun --no-such-flag"), "simrun has no flag -no-such-flag"},
		{sh("go run ./cmd/simrun run -c docs/examples/missing.yaml"), "docs/examples/missing.yaml does not exist"},
		{sh("go run ./cmd/simrun trace-stats mooncake:workloads/testdata/missing.jsonl"), "workloads/testdata/missing.jsonl does not exist"},
		{sh("go run ./cmd/simrun frobnicate"), `simrun has no command "frobnicate"`},
		{sh("go test ./nosuchpkg"), "no Go package matches ./nosuchpkg"},
		{sh("go test ./sim -run '^$' -bench BenchmarkNoSuch"), "-bench BenchmarkNoSuch matches no Benchmark function in ./sim"},
		{sh("go test ./scenario -run NoSuchTest"), "-run NoSuchTest matches no Test function in ./scenario"},
		{sh("go test ./sim -frob"), "no package of ./sim defines the test flag -frob"},
		{sh("go build -o x ./cmd/nosuch"), "no Go package matches ./cmd/nosuch"},
		{sh("curl example.com"), "neither simrun's nor in notRunAsWritten"},
		{"```\ngo run ./cmd/simrun run\n```\n", "a command outside a ```sh block"},
		{"Run `simrun sweep --shards 2` to split it.\n", "simrun sweep has no flag -shards"},
		{"Or `go test ./nosuchpkg`.\n", "no Go package matches ./nosuchpkg"},
		{sh("go test ./accel -run TestFittedCoefficients -update"), ""},
		{sh("go test ./fpga/... -update"), ""},
		{sh("go test ./scenario -run '^$' -bench 'BenchmarkClusterDay/nodes=64/.*' -benchtime 1x"), ""},
		{sh("go run ./cmd/simrun sweep -c SWEEP.yaml -o DIR [-j N] [--shard I/N] [--force]"), ""},
		{sh("go run ./cmd/simrun run --set workload.kind=mooncake \\\n  -o out/x  # a comment"), ""},
	} {
		cmds, problems := pageCommands("page.md", c.page)
		checks := newDocChecker(root)
		for _, cmd := range cmds {
			problems = append(problems, checks.check(cmd)...)
		}
		_, more := docRuns(cmds)
		problems = append(problems, more...)
		if c.want == "" {
			assert.Empty(t, problems, c.page)
			continue
		}
		assert.True(t, slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, c.want) }),
			"%q: want a problem with %q, got %q", c.page, c.want, problems)
	}
}

// TestIntoFolderMovesEveryOutput: the output flags' values, paths under
// out/ and the run's default folder go into the folder; inputs stay.
func TestIntoFolderMovesEveryOutput(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"run -o out/run --trace out/run/t.json --vcd=out/f.vcd --trace-window 9s:12s",
			"run -o D/out/run --trace D/out/run/t.json --vcd=D/out/f.vcd --trace-window 9s:12s"},
		{"run --set workload.sessions=4", "run --set workload.sessions=4 -o D/out"},
		{"--set workload.sessions=30", "--set workload.sessions=30 -o D/out"},
		{"report -i out/capacity", "report -i D/out/capacity"},
		{"calibrate --measured accel/calibdata/p.json --fit --out my.yaml", "calibrate --measured accel/calibdata/p.json --fit --out D/my.yaml"},
		{"run --set accelerator.device_file=out/my.yaml -o s1", "run --set accelerator.device_file=D/out/my.yaml -o D/s1"},
		{"merge -o out/all out/s0 out/s1", "merge -o D/out/all D/out/s0 D/out/s1"},
		{"explain --session 3", "explain --session 3"},
	} {
		assert.Equal(t, c.want, strings.Join(intoFolder(strings.Fields(c.args), "D"), " "), c.args)
	}
}

// notRunAsWritten are the pages' commands the test does not run as they
// are written, each with why and its variant: simrun's arguments, run in
// order in its place, taking the same path in less time or without what
// the command needs (none where nothing of simrun's is left to run).
var notRunAsWritten = []notRun{
	{"go run ./cmd/simrun", "the default study: 60 runs, about 60 s of CPU",
		[]string{"--set workload.sessions=30"}},
	{"go run ./cmd/simrun sweep -c docs/examples/state-of-the-art.yaml -o out/sota",
		"40 points, about 30 s on two cores (docs/studies.md); its first point, then the report over it",
		[]string{"sweep -c docs/examples/state-of-the-art.yaml -o out/sota --shard 0/40"}},
	{"go run ./cmd/simrun sweep -c docs/examples/goodput-by-load.yaml -o out/goodput",
		"35 points, 71 s on two busy cores (docs/studies.md); its first point, then the report over it",
		[]string{"sweep -c docs/examples/goodput-by-load.yaml -o out/goodput --shard 0/35"}},
	{"go run ./cmd/simrun fidelity", "94 runs, 5 seeds at 900 sessions and one at 9,000, about 9 CPU-minutes; TestFidelityQuick runs its --quick form",
		nil},
	{"go run ./cmd/simrun fidelity --open-queue --paper-scale=false --seeds 1", "the open-queue replay at 9,000 sessions, about 9 CPU-minutes; TestFidelityQuick runs the command's --quick form",
		nil},
	{"go run ./cmd/simrun fidelity --open-queue --paper-scale=false --paper-seeds 5", "the open-queue replay at 9,000 sessions on five seeds, 21 minutes on two cores; TestFidelityQuick runs the command's --quick form",
		nil},
	{"go run ./cmd/simrun sweep -c docs/examples/cachedattention-paper.yaml -o out/ca",
		"8 points, 12 s on two cores (docs/studies.md); its first point",
		[]string{"sweep -c docs/examples/cachedattention-paper.yaml -o out/ca --shard 0/8"}},
	{"python tools/gpuprofile/gpuprofile.py --model llama-3-8b --out my-gpu.json",
		"needs an NVIDIA GPU and vLLM; the profile it wrote on an H100 ships, and is compared with the model",
		[]string{"calibrate --measured accel/calibdata/h100-llama-3-8b-2026-11-23.json"}},
	{"PYTHONUNBUFFERED=1 python3 tools/gpuprofile/gpuprofile.py --model llama-3-8b --eager --out h100-llama-3-8b-gpuprofile.json",
		"needs an NVIDIA GPU and vLLM; what it wrote ships as accel/calibdata/h100-llama-3-8b-2026-11-23.json",
		[]string{"calibrate --measured accel/calibdata/h100-llama-3-8b-2026-11-23.json"}},
	{"PYTHONUNBUFFERED=1 python3 tools/gpuprofile/gpuprofile.py --model llama-3-8b --eager --out h200-llama-3-8b-gpuprofile.json",
		"needs an NVIDIA GPU; what it wrote on an H200 ships, and is compared with the model: five of its groups are over the default 10 % (docs/accel.md), so the comparison runs with --tolerance 60",
		[]string{"calibrate --measured accel/calibdata/h200-llama-3-8b-2026-11-27-gpuprofile.json --tolerance 60"}},
	{"go run ./cmd/simrun calibrate --measured my-gpu.json", "my-gpu.json is what a GPU wrote; the shipped profile instead",
		[]string{"calibrate --measured accel/calibdata/h100-llama-3-8b-2026-11-23.json"}},
	{"go run ./cmd/simrun calibrate --measured my-gpu.json --fit --out my-gpu.yaml",
		"my-gpu.json is what a GPU wrote; the device fitted to the shipped profile instead",
		[]string{"calibrate --measured accel/calibdata/h100-llama-3-8b-2026-11-23.json --fit --out out/my-gpu.yaml"}},
	{"go run ./cmd/simrun run --set accelerator.device_file=my-gpu.yaml", "a run on the device fitted above",
		[]string{"run --set accelerator.device_file=out/my-gpu.yaml -o out/my-gpu"}},
	{"go run ./cmd/simrun run -c my-scenario.yaml -o out/mine", "the reader's own scenario; the one a run wrote instead",
		[]string{"run -c out/recompute/scenario.yaml -o out/mine"}},
	{"go run ./cmd/simrun regress --update", "rewrites the goldens in the repository; the comparison, simrun regress, runs as written", nil},
	{"gtkwave out/tour/fpga.vcd", "a viewer with a window; the command before it writes the file", nil},
	{"SIMRUN=~/bin/simrun tools/slurm/submit.sh sweep.yaml ~/results/capacity 16 --cpus-per-task=8 --time=02:00:00",
		"needs a Slurm cluster; what its array tasks and merge job run, on the self-test's sweep",
		[]string{
			"sweep -c tools/slurm/selftest-sweep.yaml -o out/slurm/shard-0 --shard 0/2",
			"sweep -c tools/slurm/selftest-sweep.yaml -o out/slurm/shard-1 --shard 1/2",
			"merge -o out/slurm/all out/slurm/shard-0 out/slurm/shard-1",
			"report -i out/slurm/all",
		}},
	{"tools/slurm/install-debian.sh", "installs Slurm and munge as root (tools/slurm's self-test, KVCOSIM_SLURM=1, runs on what it installs)", nil},
	// docs/studies.md, "kvcosim and BLIS on the Mooncake conversation trace": BLIS's side, and
	// kvcosim's runs with the card's store, 13 s of CPU each
	{"git clone https://github.com/inference-sim/inference-sim /tmp/blis", blisSide, nil},
	{"git -C /tmp/blis checkout f90a1e3a6787da17c2cd463dab6fb2660b1b1760", blisSide, nil},
	{"cd /tmp/blis && go build -o blis . && cd -", blisSide, nil},
	{"python3 tools/blis/mooncake_to_tracev2.py workloads/testdata/mooncake_conversation_trace.jsonl.gz /tmp/conv --time-scale 4", blisSide, nil},
	{"python3 tools/blis/mooncake_to_tracev2.py workloads/testdata/mooncake_conversation_trace.jsonl.gz /tmp/convp --time-scale 4 --prefix groups", blisSide, nil},
	{"cd /tmp/blis && /tmp/blis/blis replay --trace-header /tmp/conv.yaml --trace-data /tmp/conv.csv " + blisReplayArgs +
		" --results-path /tmp/conv.results.json && cd -", blisSide, nil},
	{"cd /tmp/blis && /tmp/blis/blis replay --trace-header /tmp/convp.yaml --trace-data /tmp/convp.csv " + blisReplayArgs +
		" --results-path /tmp/convp.results.json && cd -", blisSide, nil},
	{"python3 tools/blis/blis_stats.py /tmp/conv.results.json", blisSide, nil},
	{"python3 tools/blis/blis_stats.py /tmp/convp.results.json", blisSide, nil},
	{"go run ./cmd/simrun run -c tools/blis/mooncake-conversation.yaml --set system.design=fpga --set fpga.hashing=block -o out/blis/fpga", "the whole trace through the card's store: 13 s of CPU; its first 1,000 requests",
		[]string{"run -c tools/blis/mooncake-conversation.yaml --set system.design=fpga --set fpga.hashing=block --set workload.limit=1000 -o out/blis/fpga"}},
	{"go run ./cmd/simrun run -c tools/blis/mooncake-conversation.yaml --set system.design=fpga --set fpga.hashing=block --set accelerator.kv_alloc=reserve -o out/blis/fpga-reserve", "the same under reserve: 13 s of CPU; its first 1,000 requests",
		[]string{"run -c tools/blis/mooncake-conversation.yaml --set system.design=fpga --set fpga.hashing=block --set accelerator.kv_alloc=reserve --set workload.limit=1000 -o out/blis/fpga-reserve"}},
}

// blisSide is why BLIS's side of the comparison with BLIS is not run: BLIS
// is another project, fetched and built outside this repository.
const blisSide = "BLIS, another project, fetched and built outside the repository (and Python over its results)"

// blisReplayArgs are BLIS's flags for the node of docs/studies.md's comparison.
const blisReplayArgs = "--model meta-llama/llama-3.1-8b-instruct --hardware H100 --tp 1 --total-kv-blocks 26312 --block-size-in-tokens 16 --max-num-seqs 64 --max-num-batched-tokens 8192"

// docFigures are what a command prints that its page quotes.
var docFigures = []struct{ command, stdout string }{
	// README.md: the Mooncake replay's 11 requests too large for the KV memory
	{"go run ./cmd/simrun run --set workload.kind=mooncake --set fpga.hashing=block " +
		"--set workload.path=workloads/testdata/mooncake_synthetic_trace.jsonl.gz " +
		"--set accelerator.max_model_len=262144 --set workload.time_scale=10 -o out/mooncake",
		"11 rejected (context_window 0, kv_memory 11)"},
}

// A notRun is a command not run as written: why, and its variant.
type notRun struct {
	command, why string
	variant      []string
}

// A docCommand is one command of a page.
type docCommand struct {
	where   string   // page:line
	text    string   // its words joined by single spaces
	words   []string // as the shell splits them, comments dropped
	mention bool     // a simrun code span in prose: checked, not run
}

var (
	codeSpan    = regexp.MustCompile("`([^`]+)`")
	commandLike = regexp.MustCompile(`^(?:time )?(?:go (?:run|test|build) |simrun )`)
)

// pageCommands finds a page's commands, and the commands it shows
// outside a ```sh block.
func pageCommands(page, text string) (cmds []docCommand, problems []string) {
	fence, pending, from := "", "", 0
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		at := fmt.Sprintf("%s:%d", page, i+1)
		switch {
		case strings.HasPrefix(trimmed, "```") && fence == "":
			fence = strings.TrimPrefix(trimmed, "```") + " " // an unlabelled block is " "
		case strings.HasPrefix(trimmed, "```"):
			fence = ""
		case fence == "sh ":
			if pending == "" {
				from = i + 1
			}
			if more, ok := strings.CutSuffix(trimmed, `\`); ok {
				pending += more + " "
				continue
			}
			if words := shellWords(pending + trimmed); len(words) > 0 {
				cmds = append(cmds, newDocCommand(fmt.Sprintf("%s:%d", page, from), words, false))
			}
			pending = ""
		case fence != "":
			if commandLike.MatchString(trimmed) {
				problems = append(problems, at+": a command outside a ```sh block: "+trimmed)
			}
		default:
			for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
				if commandLike.MatchString(m[1]) {
					words := shellWords(m[1])
					mention := strings.HasPrefix(strings.TrimPrefix(m[1], "time "), "simrun ")
					cmds = append(cmds, newDocCommand(at, words, mention))
				}
			}
		}
	}
	return cmds, problems
}

func newDocCommand(where string, words []string, mention bool) docCommand {
	return docCommand{where: where, text: strings.Join(words, " "), words: words, mention: mention}
}

// shellWords splits a command line as the shell would (quotes, backslash
// escapes), up to a comment.
func shellWords(line string) []string {
	var words []string
	var word strings.Builder
	inWord, quote := false, rune(0)
	runes := []rune(line)
	for i := 0; i < len(runes); i++ {
		c := runes[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(c)
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(runes):
			i++
			word.WriteRune(runes[i])
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, word.String()), false
				word.Reset()
			}
		case c == '#' && !inWord:
			return words
		default:
			word.WriteRune(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}

var (
	envAssignment = regexp.MustCompile(`^[A-Za-z_]\w*=`)
	substitution  = regexp.MustCompile(`^[A-Za-z_]\w*=\$\((.+)$`)
)

// commandLine drops a command's environment assignments and time, and
// returns the program and its arguments; simrun's (go run ./cmd/simrun)
// program is "simrun".
func commandLine(words []string) (prog string, args []string) {
	for len(words) > 0 {
		if m := substitution.FindStringSubmatch(words[0]); m != nil { // a=$(cmd ...
			words = append([]string{m[1]}, words[1:]...)
			break
		}
		if !envAssignment.MatchString(words[0]) && words[0] != "time" {
			break
		}
		words = words[1:]
	}
	if len(words) == 0 {
		return "", nil
	}
	if len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/simrun" {
		return "simrun", words[3:]
	}
	if len(words) >= 2 && words[0] == "go" {
		return "go " + words[1], words[2:]
	}
	return words[0], words[1:]
}

var placeholder = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// isSynopsis reports whether a command has a placeholder: an upper-case
// word (FILE, DIR, N, SWEEP.yaml, I/N), an optional [part], or ....
func isSynopsis(args []string) bool {
	for _, a := range args {
		if strings.ContainsAny(a, "[]") || a == "..." {
			return true
		}
		for _, part := range strings.FieldsFunc(a, func(r rune) bool { return strings.ContainsRune("/=:,.)", r) }) {
			if placeholder.MatchString(part) {
				return true
			}
		}
	}
	return false
}

// A docRun is one simrun command line to run, for the command text at
// where.
type docRun struct {
	where, text string
	args        []string
}

// docRuns is what the test runs: every command that is simrun's, not a
// mention and not a synopsis, or in its place its variant, each command
// line once (pages repeat one another); a command that is none of these
// and not go test or go build is a problem.
func docRuns(cmds []docCommand) (runs []docRun, problems []string) {
	queued := map[string]bool{}
	queue := func(c docCommand, where string, args []string) {
		if key := strings.Join(args, " "); !queued[key] {
			queued[key] = true
			runs = append(runs, docRun{where, c.text, args})
		}
	}
	for _, c := range cmds {
		if c.mention {
			continue
		}
		prog, args := commandLine(c.words)
		if i := slices.IndexFunc(notRunAsWritten, func(n notRun) bool { return n.command == c.text }); i >= 0 {
			for _, v := range notRunAsWritten[i].variant {
				queue(c, c.where+" (variant)", strings.Fields(v))
			}
			continue
		}
		switch {
		case isSynopsis(args), prog == "go test", prog == "go build":
		case prog == "simrun":
			queue(c, c.where, args)
		default:
			problems = append(problems, fmt.Sprintf("%s: %s: neither simrun's nor in notRunAsWritten (why it is not run, and a variant)", c.where, c.text))
		}
	}
	return runs, problems
}

// unusedExceptions are the entries of notRunAsWritten and docFigures that
// no page has.
func unusedExceptions(cmds []docCommand) []string {
	var problems []string
	for _, n := range notRunAsWritten {
		if !slices.ContainsFunc(cmds, func(c docCommand) bool { return c.text == n.command }) {
			problems = append(problems, fmt.Sprintf("notRunAsWritten: no page has %q any more", n.command))
		}
	}
	for _, f := range docFigures {
		if !slices.ContainsFunc(cmds, func(c docCommand) bool { return c.text == f.command }) {
			problems = append(problems, fmt.Sprintf("docFigures: no page has %q any more", f.command))
		}
	}
	return problems
}

// outputFlags are the simrun flags whose value is written.
var outputFlags = []string{"o", "out", "trace", "vcd"}

// intoFolder moves a command's outputs into dir: the values of its output
// flags, any argument or key=value under out/, and, for run and the study,
// the output folder they take by default.
func intoFolder(args []string, dir string) []string {
	moved := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	out := make([]string, len(args))
	given := false
	for i, a := range args {
		out[i] = a
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case strings.HasPrefix(a, "-") && slices.Contains(outputFlags, name) && hasValue:
			out[i], given = "--"+name+"="+moved(value), given || name == "o"
		case i > 0 && strings.HasPrefix(args[i-1], "-") && slices.Contains(outputFlags, strings.TrimLeft(args[i-1], "-")):
			out[i], given = moved(a), given || strings.TrimLeft(args[i-1], "-") == "o"
		case strings.HasPrefix(a, "out/"):
			out[i] = moved(a)
		case hasValue && strings.HasPrefix(value, "out/"):
			out[i] = a[:len(a)-len(value)] + moved(value)
		}
	}
	if sub := subcommand(args); !given && (sub == "run" || sub == "") {
		out = append(out, "-o", moved("out"))
	}
	return out
}

// subcommand is a simrun command line's subcommand: "" for the study.
func subcommand(args []string) string {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return ""
	}
	return args[0]
}

// A docChecker checks what a command names against the repository.
type docChecker struct {
	root  string
	flags map[string][]string // simrun's flags by subcommand ("" the study)
}

func newDocChecker(root string) *docChecker {
	return &docChecker{root: root, flags: map[string][]string{}}
}

// check returns what a command names that is not there.
func (c *docChecker) check(cmd docCommand) []string {
	prog, args := commandLine(cmd.words)
	problems := c.paths(cmd.words)
	switch prog {
	case "simrun":
		problems = append(problems, c.simrunArgs(args)...)
	case "go test":
		problems = append(problems, c.goTest(args)...)
	case "go build":
		problems = append(problems, c.goPackages(goPackagePatterns(args, nil))...)
	}
	return problems
}

// repoPath is a path in a word, alone or after = or FORMAT:.
var repoPath = regexp.MustCompile(`(?:^|[=:,])(?:\./)?([\w.-]+(?:/[\w.*-]+)+)`)

// paths checks every path a command names inside the repository (its
// first element one of the root's): out/ is written, a placeholder's is
// the reader's.
func (c *docChecker) paths(words []string) []string {
	var problems []string
	for _, w := range words {
		if isSynopsis([]string{w}) {
			continue
		}
		for _, m := range repoPath.FindAllStringSubmatch(w, -1) {
			p := m[1]
			first, _, _ := strings.Cut(p, "/")
			if first == "out" || strings.Contains(p, "...") || !exists(filepath.Join(c.root, first)) {
				continue
			}
			if !exists(filepath.Join(c.root, p)) {
				problems = append(problems, fmt.Sprintf("%s does not exist", p))
			}
		}
	}
	return problems
}

var flagLine = regexp.MustCompile(`(?m)^  -(\S+)`)

// simrunArgs checks a simrun command's subcommand and the flags it gives.
func (c *docChecker) simrunArgs(args []string) []string {
	sub := subcommand(args)
	if sub == "help" || slices.Contains(args, "-h") || slices.Contains(args, "--help") {
		return nil
	}
	i := slices.IndexFunc(commands(), func(cmd command) bool { return cmd.name == sub })
	if sub != "" && i < 0 {
		return []string{fmt.Sprintf("simrun has no command %q", sub)}
	}
	known, ok := c.flags[sub]
	if !ok {
		var help bytes.Buffer
		if sub == "" {
			runStudy([]string{"-h"}, &help, &help)
		} else {
			commands()[i].run([]string{"-h"}, &help, &help)
		}
		for _, m := range flagLine.FindAllStringSubmatch(help.String(), -1) {
			known = append(known, m[1])
		}
		c.flags[sub] = known
	}
	var problems []string
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(strings.Trim(a, "[]"), "-"), "=")
		if strings.HasPrefix(strings.TrimLeft(a, "["), "-") && !slices.Contains(known, name) {
			problems = append(problems, fmt.Sprintf("%s has no flag -%s (it has %s)", strings.TrimSpace("simrun "+sub), name, strings.Join(known, ", ")))
		}
	}
	return problems
}

// goTestValueFlags are go test's flags that take a value; goTestFlags
// all of its own, which need no package to define them.
var (
	goTestValueFlags = []string{"run", "bench", "benchtime", "count", "timeout", "cpu", "list", "skip", "p", "parallel", "tags", "o", "coverprofile", "shuffle"}
	goTestFlags      = append([]string{"v", "benchmem", "short", "race", "failfast", "json", "cover", "x", "c", "fullpath"}, goTestValueFlags...)
)

// goTest checks a go test command: its packages, the tests -run and the
// benchmarks -bench name (their top level), and any flag go test does not
// define, which a package's tests (or a package they import) must.
func (c *docChecker) goTest(args []string) []string {
	values := map[string]string{}
	patterns := goPackagePatterns(args, values)
	problems := c.goPackages(patterns)
	if len(problems) > 0 {
		return problems
	}
	funcs, defined := c.testFuncs(patterns)
	for flagName, value := range values {
		prefix := map[string]string{"run": "Test", "bench": "Benchmark"}[flagName]
		switch {
		case !slices.Contains(goTestFlags, flagName) && !defined[flagName]:
			problems = append(problems, fmt.Sprintf("no package of %s defines the test flag -%s", strings.Join(patterns, " "), flagName))
		case prefix == "" || value == "^$":
		default:
			top, _, _ := strings.Cut(value, "/")
			re, err := regexp.Compile(top)
			if err != nil || !slices.ContainsFunc(funcs, func(f string) bool { return strings.HasPrefix(f, prefix) && re.MatchString(f) }) {
				problems = append(problems, fmt.Sprintf("-%s %s matches no %s function in %s", flagName, value, prefix, strings.Join(patterns, " ")))
			}
		}
	}
	return problems
}

// goPackagePatterns splits a go command's arguments into its flags (into
// values, when not nil: a bool flag's value is "") and its package
// patterns.
func goPackagePatterns(args []string, values map[string]string) []string {
	var patterns []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			patterns = append(patterns, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasValue && (slices.Contains(goTestValueFlags, name) || values == nil) && i+1 < len(args) {
			i++
			value = args[i]
		}
		if values != nil {
			values[name] = value
		}
	}
	return patterns
}

// packageDirs lists the folders a package pattern names (./x, ./x/...).
func (c *docChecker) packageDirs(pattern string) []string {
	base, all := strings.CutSuffix(strings.TrimPrefix(pattern, "./"), "...")
	base = filepath.Join(c.root, strings.TrimSuffix(base, "/"))
	if !all {
		return []string{base}
	}
	var dirs []string
	_ = filepath.WalkDir(base, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	return dirs
}

// goPackages checks that every pattern names at least one Go package.
func (c *docChecker) goPackages(patterns []string) []string {
	var problems []string
	for _, p := range patterns {
		if !slices.ContainsFunc(c.packageDirs(p), hasGoFiles) {
			problems = append(problems, fmt.Sprintf("no Go package matches %s", p))
		}
	}
	return problems
}

func hasGoFiles(dir string) bool {
	names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	return len(names) > 0
}

var flagDefinition = regexp.MustCompile(`flag\.\w+\("(\w+)"`)

// testFuncs lists the top-level functions of the packages' tests, and the
// flags their test files, or the module's packages these import, define.
func (c *docChecker) testFuncs(patterns []string) (funcs []string, defined map[string]bool) {
	defined = map[string]bool{}
	module := "github.com/kvcosim/kvcosim/"
	for _, p := range patterns {
		for _, dir := range c.packageDirs(p) {
			files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
			for _, name := range files {
				f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
				if err != nil {
					continue
				}
				for _, d := range f.Decls {
					if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
						funcs = append(funcs, fn.Name.Name)
					}
				}
				sources := []string{name}
				for _, imp := range f.Imports {
					if path, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(path, module) {
						more, _ := filepath.Glob(filepath.Join(c.root, strings.TrimPrefix(path, module), "*.go"))
						sources = append(sources, more...)
					}
				}
				for _, s := range sources {
					text, _ := os.ReadFile(s)
					for _, m := range flagDefinition.FindAllStringSubmatch(string(text), -1) {
						defined[m[1]] = true
					}
				}
			}
		}
	}
	return funcs, defined
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
