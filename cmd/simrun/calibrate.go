package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
)

// calibrationSuites are every package's calibration checks, in table order.
var calibrationSuites = []func() ([]sim.Calibration, error){memory.Calibrations, accel.Calibrations}

func runCalibrate(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("calibrate", stderr)
	asJSON := fs.Bool("json", false, "print the checks as a JSON array")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "simrun calibrate: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	var checks []sim.Calibration
	for _, suite := range calibrationSuites {
		c, err := suite()
		if err != nil {
			fmt.Fprintf(stderr, "simrun calibrate: %v\n", err)
			return 2
		}
		checks = append(checks, c...)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(checks); err != nil {
			fmt.Fprintf(stderr, "simrun calibrate: %v\n", err)
			return 2
		}
	} else {
		printCalibrations(stdout, checks)
	}
	for _, c := range checks {
		if !c.OK {
			return 1
		}
	}
	return 0
}

func printCalibrations(w io.Writer, checks []sim.Calibration) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "name\ttarget\tmodel\tunit\ttolerance\tsource\tok")
	failed := 0
	for _, c := range checks {
		if !c.OK {
			failed++
		}
		fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%s\t%g%%\t%s\t%v\n", c.Name, c.Target, c.Model, c.Unit, 100*c.Tolerance, c.Source, c.OK)
	}
	tw.Flush()
	fmt.Fprintf(w, "%d passed, %d failed\n", len(checks)-failed, failed)
}
