package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/reports"
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
	engine := fs.String("engine", "", "with --measured: price every iteration on this engine (default: the one each row was measured with)")
	fit := fs.Bool("fit", false, "refit the presets' coefficients and print them; with --measured, fit the device to the profile and write it to --out")
	out := fs.String("out", "", "with --measured --fit: the device file (YAML) to write")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "simrun calibrate: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if err := calibrateFlagsApply(fs, *measured != "", *fit); err != nil {
		return calibrateFailed(stderr, err)
	}
	switch {
	case *measured != "" && *fit:
		if err := checkOutputFile("--out", *out); err != nil {
			return calibrateFailed(stderr, err)
		}
		return runFitProfile(*measured, *device, *out, stdout, stderr)
	case *measured != "":
		return runMeasured(measuredRun{*measured, *device, *engine, *tolerance, *asJSON}, stdout, stderr)
	case *fit:
		return runFitPresets(stdout, stderr)
	}
	var checks []sim.Calibration
	for _, suite := range calibrationSuites {
		c, err := suite()
		if err != nil {
			return calibrateFailed(stderr, err)
		}
		checks = append(checks, c...)
	}
	if *asJSON {
		if err := printJSON(stdout, checks); err != nil {
			return calibrateFailed(stderr, err)
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

// calibrateModeFlags are the flags each form of simrun calibrate reads,
// by --measured and --fit given: a flag given to a form that does not
// read it would change nothing.
var calibrateModeFlags = map[[2]bool][]string{
	{false, false}: {"json"},
	{false, true}:  {"fit"},
	{true, false}:  {"measured", "device", "engine", "tolerance", "json"},
	{true, true}:   {"measured", "fit", "device", "out"},
}

// calibrateFlagsApply refuses a flag the form given does not read, naming
// the flags it reads.
func calibrateFlagsApply(fs *flag.FlagSet, measured, fit bool) error {
	reads := calibrateModeFlags[[2]bool{measured, fit}]
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && !slices.Contains(reads, f.Name) {
			err = fmt.Errorf("--%s: not read by %s (it reads --%s)", f.Name, calibrateForm(measured, fit), strings.Join(reads, ", --"))
		}
	})
	return err
}

// calibrateForm names a form of simrun calibrate.
func calibrateForm(measured, fit bool) string {
	switch {
	case measured && fit:
		return "calibrate --measured --fit"
	case measured:
		return "calibrate --measured"
	case fit:
		return "calibrate --fit"
	}
	return "calibrate without --measured or --fit"
}

// calibrateFailed reports an error that stops simrun calibrate: exit 2.
func calibrateFailed(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "simrun calibrate: %v\n", err)
	return 2
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
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

// measuredRun is what --measured compares: the profile, the device preset
// ("" reads it from the profile), the engine ("" each row's own), the
// tolerance of a group's MAPE and whether to print JSON.
type measuredRun struct {
	path, device, engine string
	tolerancePct         float64
	asJSON               bool
}

// readMeasured reads a profile and its device preset (named, or the
// profile's GPU's).
func readMeasured(path, device string) (*accel.Profile, string, accel.Device, error) {
	p, err := accel.ReadProfile(path)
	given := device != ""
	if err == nil && !given {
		device, err = accel.ProfileDevice(p.GPU)
	}
	var d accel.Device
	if err == nil {
		d, err = accel.DevicePreset(device)
		if err != nil && given {
			err = fmt.Errorf("--device %s: %w", device, err)
		}
	}
	return p, device, d, err
}

// runMeasured compares the model with a measured profile: a line per row
// and per group its MAPE and p90 |error|; exit 1 when a group's MAPE
// exceeds the tolerance, 2 on input it cannot read.
func runMeasured(m measuredRun, stdout, stderr io.Writer) int {
	if !(m.tolerancePct > 0) || math.IsInf(m.tolerancePct, 0) {
		fmt.Fprintf(stderr, "simrun calibrate: --tolerance %v: want a positive, finite percentage\n", m.tolerancePct)
		return 2
	}
	if m.engine != "" {
		if _, err := accel.ParseEngine(m.engine); err != nil {
			return calibrateFailed(stderr, fmt.Errorf("--engine %s: %w", m.engine, err))
		}
	}
	p, device, d, err := readMeasured(m.path, m.device)
	var rows []accel.Compared
	if err == nil {
		rows, err = accel.Compare(p, d, m.engine)
	}
	if err != nil {
		return calibrateFailed(stderr, err)
	}
	groups := accel.GroupErrors(rows)
	if m.asJSON {
		if err := printJSON(stdout, rows); err != nil {
			return calibrateFailed(stderr, err)
		}
	} else {
		printMeasured(stdout, m.path, device, rows, groups, m.tolerancePct)
	}
	for _, g := range groups {
		if 100*g.MAPE > m.tolerancePct {
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

// runFitPresets refits the presets' coefficients (accel.FitPresets) and
// prints them with their held-out errors; accel/fitted.go holds them,
// written by `go test ./accel -run TestFittedCoefficients -update`.
func runFitPresets(stdout, stderr io.Writer) int {
	f, err := accel.FitPresets()
	if err != nil {
		return calibrateFailed(stderr, err)
	}
	for _, class := range []string{"a100-80gb", "h100-80gb"} {
		c := f.Classes[class]
		fmt.Fprintf(stdout, "%s: %d fitting runs, %d held out; held-out prompt |error| median %.1f%% p90 %.1f%%, token median %.1f%% p90 %.1f%%\n",
			class, c.FitRuns, c.HeldRuns, 100*c.PromptMedian, 100*c.PromptP90, 100*c.TokenMedian, 100*c.TokenP90)
	}
	fmt.Fprint(stdout, "\n", f.GoSource())
	return 0
}

// runFitProfile fits a device to a measured profile, writes it as a
// device file for accelerator.device_file, and prints the profile's
// errors before and after.
func runFitProfile(path, device, out string, stdout, stderr io.Writer) int {
	if out == "" {
		fmt.Fprintln(stderr, "simrun calibrate: --fit with --measured writes a device file: give it with --out FILE.yaml")
		return 2
	}
	p, device, d, err := readMeasured(path, device)
	var fitted accel.Device
	if err == nil {
		fitted, err = accel.FitProfile(p, d)
	}
	if err != nil {
		return calibrateFailed(stderr, err)
	}
	for _, x := range []struct {
		what string
		d    accel.Device
	}{{"the " + device + " preset", d}, {"the fitted device", fitted}} {
		rows, _ := accel.Compare(p, x.d, "")
		fmt.Fprintf(stdout, "%s:", x.what)
		for _, g := range accel.GroupErrors(rows) {
			fmt.Fprintf(stdout, " %s %.1f%%", g.Group, 100*g.MAPE)
		}
		fmt.Fprintln(stdout)
	}
	file := accel.DeviceFileOf(device, fitted).YAML("fitted by `simrun calibrate --measured "+path+" --fit` over the "+device+" preset",
		"use it with accelerator.device_file: "+out)
	if err := reports.WriteFile(out, func(w io.Writer) error { _, err := w.Write(file); return err }); err != nil {
		return calibrateFailed(stderr, err)
	}
	fmt.Fprintf(stdout, "wrote %s\n", out)
	return 0
}
