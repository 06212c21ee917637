package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kvcosim/kvcosim/fpga"
	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/scenario"
	"github.com/kvcosim/kvcosim/sim"
)

// traceOptions are run's trace exports: a Chrome trace event file for
// Perfetto, a VCD of FPGA signals for GTKWave, the time window and the
// components they keep.
type traceOptions struct {
	chrome, vcd, window, filter string
	from, to                    sim.Time
	components                  []string
}

// parse reads the window (FROM:TO, durations) and the filter (components'
// name parts, comma-separated).
func (o *traceOptions) parse() error {
	o.to = sim.MaxTime
	if o.window != "" {
		a, b, ok := strings.Cut(o.window, ":")
		from, err1 := sim.ParseTime(a)
		to, err2 := sim.ParseTime(b)
		if !ok || err1 != nil || err2 != nil || to <= from {
			return fmt.Errorf("--trace-window %q: want FROM:TO, two durations such as 10s:12s, FROM before TO", o.window)
		}
		o.from, o.to = from, to
	}
	if o.filter != "" {
		o.components = strings.Split(o.filter, ",")
	}
	if (o.window != "" || o.filter != "") && o.chrome == "" && o.vcd == "" {
		return fmt.Errorf("--trace-window and --trace-filter shape --trace or --vcd: give one of them")
	}
	for _, f := range []struct{ flag, path string }{{"--trace", o.chrome}, {"--vcd", o.vcd}} {
		if err := checkOutputFile(f.flag, f.path); err != nil {
			return err
		}
	}
	return nil
}

// checkOutputFile refuses an output file flag's path that exists and is
// not a regular file (reports.CheckOutputFile), naming the flag, before
// any work is done; an empty path is no output.
func checkOutputFile(flag, path string) error {
	if path == "" {
		return nil
	}
	if err := reports.CheckOutputFile(path); err != nil {
		return fmt.Errorf("%s %s: %v", flag, path, err)
	}
	return nil
}

// apart refuses traces written over each other or over a file the run
// writes into its folder out (files): one silently replaced the other.
func (o *traceOptions) apart(out string, files []string) error {
	taken := map[string]string{}
	for _, f := range files {
		taken[absPath(filepath.Join(out, f))] = "the run's " + f
	}
	for _, t := range []struct{ flag, path string }{{"--trace", o.chrome}, {"--vcd", o.vcd}} {
		if t.path == "" {
			continue
		}
		p := absPath(t.path)
		if other, ok := taken[p]; ok {
			return fmt.Errorf("%s %s: %s is that file too", t.flag, t.path, other)
		}
		taken[p] = t.flag
	}
	return nil
}

// absPath is path made absolute, so that one file named two ways is one
// (as it is if the working folder cannot be read).
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}

// keeps reports whether a span is in the window and passes the filter.
func (o *traceOptions) keeps(s sim.Span) bool {
	if s.End < o.from || s.Start >= o.to {
		return false
	}
	if len(o.components) == 0 {
		return true
	}
	for _, c := range o.components {
		if strings.Contains(s.Component, c) {
			return true
		}
	}
	return false
}

// traceExport is an attached export: its sinks, then Close writes files.
type traceExport struct {
	o      *traceOptions
	chrome *reports.ChromeTrace
	file   *reports.AtomicFile
	vcd    *reports.VCD
	sink   *exportSink
}

// attach opens the files and puts the sinks on the run.
func (o *traceOptions) attach(run *scenario.Run, storageName string) (*traceExport, error) {
	x := &traceExport{o: o}
	if o.chrome == "" && o.vcd == "" {
		return x, nil
	}
	if o.chrome != "" {
		f, err := reports.CreateAtomic(o.chrome)
		if err != nil {
			return nil, fmt.Errorf("--trace: %v", err)
		}
		x.file, x.chrome = f, reports.NewChromeTrace(f)
	}
	if o.vcd != "" {
		x.vcd = reports.NewVCD(o.from)
	}
	x.sink = &exportSink{x: x, storage: storageName}
	run.AddSpanSink(x.sink)
	return x, nil
}

// vcdLevels are the store's levels a VCD follows.
var vcdLevels = []string{kvstore.LevelFIFO1, kvstore.LevelFIFO2, kvstore.LevelInUse}

// Level writes the store's levels in the window to the VCD. The last
// levels before the window are its values at the window's start: the dump
// starts from the store's true state, not from zero.
func (s *exportSink) Level(l sim.Level) {
	if s.x.vcd == nil || l.At >= s.x.o.to {
		return
	}
	if l.At < s.x.o.from {
		s.before, s.pending = l, true
		return
	}
	s.flushBefore()
	s.writeLevel(l.At, l)
}

// flushBefore writes the levels held from before the window at its start.
func (s *exportSink) flushBefore() {
	if s.pending {
		s.pending = false
		s.writeLevel(s.x.o.from, s.before)
	}
}

func (s *exportSink) writeLevel(at sim.Time, l sim.Level) {
	for _, name := range vcdLevels {
		s.x.vcd.Level(name, at, l.Value(name))
	}
}

// exportSink passes the kept spans to the Chrome trace and turns them into
// VCD signals.
type exportSink struct {
	x       *traceExport
	storage string
	before  sim.Level // the latest levels before the window
	pending bool      // before is not written yet
}

func (s *exportSink) Span(sp sim.Span) {
	if !s.x.o.keeps(sp) {
		return
	}
	if s.x.chrome != nil {
		s.x.chrome.Span(sp)
	}
	if v := s.x.vcd; v != nil {
		node := fmt.Sprintf("node%d", sp.Node)
		switch {
		case sp.Part == fpga.Part && sp.Clocked:
			v.Busy(node+"_fpga_busy", sp.Start, sp.End)
		case sp.Part == hostcpu.PartFPGA:
			v.Count(node+"_fpga_tasks", sp.Start, sp.End)
		case sp.Part == hostcpu.PartAccel && sp.Task == hostcpu.TaskQueue:
			v.Count(node+"_accel_queue", sp.Start, sp.End)
		case sp.Component == s.storage:
			v.Busy("storage_busy", sp.Start, sp.End)
			v.Count("storage_commands", sp.Start, sp.End)
		}
	}
}

// close writes the export files, each whole or not at all.
func (x *traceExport) close() error {
	if x.chrome != nil {
		if err := x.chrome.Close(); err != nil {
			x.file.Abort()
			return fmt.Errorf("--trace: %v", err)
		}
		if err := x.file.Commit(); err != nil {
			return fmt.Errorf("--trace: %v", err)
		}
	}
	if x.vcd != nil {
		x.sink.flushBefore() // a window the store's levels never changed in
		if err := reports.WriteFile(x.o.vcd, x.vcd.Write); err != nil {
			return fmt.Errorf("--vcd: %v", err)
		}
	}
	return nil
}

// abort drops the export files of a run that failed.
func (x *traceExport) abort() {
	if x.file != nil {
		x.file.Abort()
	}
}
