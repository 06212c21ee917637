package main

import (
	"fmt"
	"io"

	"github.com/kvcosim/kvcosim/accel/kernels"
)

// runKernels runs a golden-vector file: one line per case, then the tally.
// Exit 1 if a case failed, 2 if the file is unreadable, of an unknown
// schema, empty, or holds a malformed case (named on stderr).
func runKernels(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("kernels", stderr)
	path := fs.String("vectors", "", "golden-vector `FILE` (any schema of accel/kernels/testdata/vectors/FORMAT.md)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *path == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: simrun kernels --vectors FILE")
		return 2
	}
	file, err := kernels.ReadVectors(*path)
	if err != nil {
		fmt.Fprintf(stderr, "simrun kernels: %v\n", err)
		return 2
	}
	failed, malformed := 0, 0
	results := file.Run()
	for _, r := range results {
		if r.Err == "" {
			fmt.Fprintf(stdout, "PASS %s\n", r.Name)
			continue
		}
		failed++
		fmt.Fprintf(stdout, "FAIL %s: %s\n", r.Name, r.Err)
		if r.BadInput {
			malformed++
			fmt.Fprintf(stderr, "simrun kernels: %s: case %s: %s\n", *path, r.Name, r.Err)
		}
	}
	fmt.Fprintf(stdout, "%d passed, %d failed\n", len(results)-failed, failed)
	switch {
	case malformed > 0:
		return 2
	case failed > 0:
		return 1
	}
	return 0
}
