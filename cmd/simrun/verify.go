package main

import (
	"fmt"
	"io"

	"github.com/kvcosim/kvcosim/scenario"
)

// maxVerifySessions bounds --sessions: each session keeps its whole token
// history in memory, and 10,000 already takes minutes.
const maxVerifySessions = 10_000

// runVerify runs random sessions in functional mode through export and
// import and checks each against a recomputation of its whole history.
func runVerify(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("verify", stderr)
	path := fs.String("c", "", "the base scenario file (default: the embedded default)")
	sessions := fs.Int("sessions", 60, "random multi-turn sessions to run, shared between the variants")
	seed := fs.Uint64("seed", 1, "the seed of the sessions and of the runs")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "simrun verify: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *sessions < 1 || *sessions > maxVerifySessions {
		fmt.Fprintf(stderr, "simrun verify: --sessions %d: want 1 to %d\n", *sessions, maxVerifySessions)
		return 2
	}
	meter := newMeter(stderr, "variant", 0)
	variants := func(done, total int) { meter.show(done, total, "") }
	rep, err := scenario.Verify(*path, *sessions, *seed, variants)
	if err != nil {
		fmt.Fprintf(stderr, "simrun verify: %v\n", err)
		return 2
	}
	for _, v := range rep.Variants {
		c := v.Counts
		fmt.Fprintf(stdout, "variant %-46s %3d sessions %4d turns: %3d imports verified, %2d faults injected, %2d detected, %2d unreadable, %3d device evictions, %2d migrations\n",
			v.Name, v.Sessions, v.Requests, c.Imports, c.Injected, c.CorruptDetected, c.Unreadable, v.DeviceEvictions, v.Migrations)
	}
	for _, f := range rep.Failures {
		fmt.Fprintf(stdout, "FAIL %s session %d: %s\n", f.Variant, f.Session, f.Why)
	}
	fmt.Fprintf(stdout, "%d passed, %d failed\n", rep.Passed, rep.Failed)
	if rep.Failed > 0 {
		return 1
	}
	return 0
}
