package main

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/kvcosim/kvcosim/kvstore"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/scenario"
	"github.com/kvcosim/kvcosim/sim"
)

// point is one run of a study or a sweep: the overrides on the base
// scenario, the folder for its outputs ("" for none), whether to keep its
// stage spans and store levels, what it is in words (for warnings), its
// scenario when it was loaded before the runs (nil: runPoint loads it),
// and its weight: how long it is expected to take against the others
// (runPoints starts the heaviest first; 0 for all: in order).
type point struct {
	sets    []string
	dir     string
	observe bool
	label   string
	loaded  *scenario.Loaded
	weight  float64
}

// pointResult is what a point's run gave.
type pointResult struct {
	loaded  *scenario.Loaded
	sum     reports.Summary
	rows    []reports.RequestRow
	spans   []sim.Span
	levels  []levelSample
	region  int64
	err     error
	badSpec bool // the point's scenario does not load: bad input, not a failed run
}

// levelSample is the store's levels at a time.
type levelSample struct {
	at                         sim.Time
	fifo1, fifo2, inUse, links int64
}

// stageSink keeps the request stages' spans (the CPU, FPGA, storage and
// accelerator parts of a node) and drops the rest (links, DRAM, SSD
// commands: millions in a run).
type stageSink struct {
	spans  []sim.Span
	levels []levelSample
}

// Level keeps the store's levels when they changed.
func (s *stageSink) Level(l sim.Level) {
	v := levelSample{at: l.At, fifo1: l.Value(kvstore.LevelFIFO1), fifo2: l.Value(kvstore.LevelFIFO2),
		inUse: l.Value(kvstore.LevelInUse), links: l.Value(kvstore.LevelLinks)}
	if n := len(s.levels); n > 0 && s.levels[n-1].same(v) {
		return
	}
	s.levels = append(s.levels, v)
}

// same reports whether two samples hold the same levels.
func (a levelSample) same(b levelSample) bool {
	a.at = b.at
	return a == b
}

// StagesOnly marks the sink as taking only stages (sim.StageSink): the
// devices' spans are left out, and the SSD keeps its closed-form path.
func (s *stageSink) StagesOnly() {}

func (s *stageSink) Span(sp sim.Span) {
	if sp.Part != "" {
		s.spans = append(s.spans, sp)
	}
}

// maxJobs bounds -j: more runs at once than this only adds memory.
const maxJobs = 1024

// checkJobs checks a -j value: 1 to maxJobs runs at once.
func checkJobs(jobs int) error {
	if jobs < 1 || jobs > maxJobs {
		return fmt.Errorf("-j %d: want 1 to %d runs at once", jobs, maxJobs)
	}
	return nil
}

// runPoints runs the points on workers goroutines (each run is
// deterministic by its own seed, so the order they finish in changes
// nothing) and calls progress after each. The heaviest start first
// (longest processing time first), so that the last to end is a short
// run and no worker idles long while another finishes a long one.
func runPoints(base string, points []point, workers int, progress func(done int)) []pointResult {
	out := make([]pointResult, len(points))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range max(1, workers) {
		wg.Go(func() {
			for i := range next {
				out[i] = runPointSafely(base, points[i])
				mu.Lock()
				done++
				if progress != nil {
					progress(done)
				}
				mu.Unlock()
			}
		})
	}
	for _, i := range heaviestFirst(points) {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// heaviestFirst returns the points' indices by weight, heaviest first,
// points of one weight in their order.
func heaviestFirst(points []point) []int {
	order := make([]int, len(points))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(points[b].weight, points[a].weight) })
	return order
}

// runPointSafely is runPoint with a panic turned into the point's error,
// so that one bad point fails alone instead of aborting the others.
func runPointSafely(base string, p point) (res pointResult) {
	defer func() {
		if r := recover(); r != nil {
			res = pointResult{err: fmt.Errorf("point %v panicked: %v", p.sets, r)}
		}
	}()
	return runPoint(base, p)
}

// runPoint loads, runs and (with a folder) writes one point.
func runPoint(base string, p point) pointResult {
	l := p.loaded
	if l == nil {
		var err error
		if l, err = scenario.Load(base, p.sets); err != nil {
			return pointResult{err: err, badSpec: true}
		}
	}
	run, err := scenario.Build(l)
	if err != nil {
		return pointResult{err: err, badSpec: true}
	}
	res := pointResult{loaded: l, region: run.RegionBytes()}
	var sink stageSink
	if p.observe {
		run.AddSpanSink(&sink)
	}
	r, err := run.Execute()
	if err != nil {
		res.err = err
		return res
	}
	res.sum, res.rows, res.spans, res.levels = r.Summary(), r.Rows(), sink.spans, sink.levels
	if p.dir != "" {
		res.err = writeRun(p.dir, l, &res.sum, res.rows)
	}
	return res
}

// outputMarker marks a folder as kvcosim's, so that a later run may write
// over it; markerText is what it says.
const outputMarker = ".kvcosim-output"

var markerText = []byte("written by kvcosim; may be overwritten by it\n")

// checkOutput checks that dir may take outputs: it is absent, empty or a
// kvcosim output, or force. It creates nothing.
func checkOutput(dir string, force bool) error {
	if dir == "" {
		return errors.New(`-o "": name an output folder`)
	}
	entries, err := os.ReadDir(dir)
	switch {
	case err == nil && len(entries) > 0 && !force:
		if _, err := os.Stat(filepath.Join(dir, outputMarker)); err != nil {
			return fmt.Errorf("output folder %s exists and is not a kvcosim output: choose another or pass --force", dir)
		}
	case err != nil && !os.IsNotExist(err):
		return fmt.Errorf("output folder %s: %v", dir, err)
	}
	return nil
}

// prepareOutput checks dir (checkOutput), creates it with its marker and
// returns undo, which removes the folder when this call created it: a
// failed run then leaves nothing behind. (An existing kvcosim output keeps
// its files; each is replaced whole or not at all.)
func prepareOutput(dir string, force bool) (undo func(), err error) {
	if err := checkOutput(dir, force); err != nil {
		return nil, err
	}
	_, statErr := os.Stat(dir)
	undo = func() {}
	if os.IsNotExist(statErr) {
		undo = func() { _ = os.RemoveAll(dir) }
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the output folder: %v", err)
	}
	if err := reports.WriteBytes(filepath.Join(dir, outputMarker), markerText); err != nil {
		undo()
		return nil, fmt.Errorf("cannot write to the output folder: %v", err)
	}
	return undo, nil
}
