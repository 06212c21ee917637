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
	measured := fs.String("measured", "", "compare the model with a measured GPU profile (JSON, docs/accel.md)")
	device := fs.String("device", "", "with --measured: the device preset (default: from the profile's gpu)")
	tolerance := fs.Float64("tolerance", 10, "with --measured: the largest mean absolute error of a group, in percent")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "simrun calibrate: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *measured != "" {
		return runMeasured(*measured, *device, *tolerance, *asJSON, stdout, stderr)
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

// runMeasured compares the model with a measured profile: a line per row
// and per group its MAPE and p90 |error|; exit 1 when a group's MAPE
// exceeds the tolerance, 2 on input it cannot read.
func runMeasured(path, device string, tolerancePct float64, asJSON bool, stdout, stderr io.Writer) int {
	if !(tolerancePct > 0) {
		fmt.Fprintf(stderr, "simrun calibrate: --tolerance %v: want a positive percentage\n", tolerancePct)
		return 2
	}
	p, err := accel.ReadProfile(path)
	if err == nil && device == "" {
		device, err = accel.ProfileDevice(p.GPU)
	}
	var d accel.Device
	if err == nil {
		d, err = accel.DevicePreset(device)
	}
	var rows []accel.Compared
	if err == nil {
		rows, err = accel.Compare(p, d)
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun calibrate: %v\n", err)
		return 2
	}
	groups := accel.GroupErrors(rows)
	if asJSON {
		type row struct {
			Group     string  `json:"group"`
			Label     string  `json:"label"`
			ModelS    float64 `json:"model_s"`
			MeasuredS float64 `json:"measured_s"`
		}
		out := make([]row, len(rows))
		for i, r := range rows {
			out[i] = row{r.Group, r.Label, r.ModelS, r.MeasuredS}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "simrun calibrate: %v\n", err)
			return 2
		}
	} else {
		printMeasured(stdout, path, device, rows, groups, tolerancePct)
	}
	for _, g := range groups {
		if 100*g.MAPE > tolerancePct {
			return 1
		}
	}
	return 0
}

func printMeasured(w io.Writer, path, device string, rows []accel.Compared, groups []accel.GroupError, tolerancePct float64) {
	fmt.Fprintf(w, "%s against the %s model\n", path, device)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "group\tshape\tmodel (ms)\tmeasured (ms)\terror")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.3f\t%+.1f%%\n", r.Group, r.Label, 1e3*r.ModelS, 1e3*r.MeasuredS, 100*r.Error())
	}
	tw.Flush()
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\ngroup\tpoints\tMAPE\tp90 |error|\tok")
	failed := 0
	for _, g := range groups {
		ok := 100*g.MAPE <= tolerancePct
		if !ok {
			failed++
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f%%\t%.1f%%\t%v\n", g.Group, g.Points, 100*g.MAPE, 100*g.P90, ok)
	}
	tw.Flush()
	fmt.Fprintf(w, "%d groups within %g%%, %d not\n", len(groups)-failed, tolerancePct, failed)
}
