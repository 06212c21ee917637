package main

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"

	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/scenario"
)

// The break-even map: for the scenario's model and accelerator, the TTFT
// of one resumed turn whose KV is no longer on the accelerator, by design,
// against the history's length and the path its KV is read over. Each
// point is a short simulation of sessions that never overlap (one resumed
// turn at a time on an idle node), so the figure is the design's own
// latency, not a formula: the store's lookup, import (or layer-wise load)
// and the prefill of what is left, against recomputing the whole history.

// breakEvenHistories are the histories of the map, in tokens.
var breakEvenHistories = []int64{64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072}

// A break-even session: a first turn that leaves a history of the length
// (its prompt and its output), then, half a gap later, a resumed turn of
// breakEvenNewTokens; sessions breakEvenGapS apart.
const (
	breakEvenNewTokens    = 64
	breakEvenOutputTokens = 16
	breakEvenGapS         = 600
	breakEvenFile         = "breakeven-sessions.jsonl"
	// breakEvenWindow is the context window the map's runs allow, past its
	// longest history (the model's own window may be shorter).
	breakEvenWindow = 262144
	// breakEvenAsyncBuffer holds an object of the longest window (an
	// asynchronous save's buffer must).
	breakEvenAsyncBuffer = "128GiB"
)

// writeBreakEvenTrace writes the map's sessions (our sessions format) into
// the study's folder and returns its path.
func writeBreakEvenTrace(out string) (string, error) {
	var b bytes.Buffer
	for i, h := range breakEvenHistories {
		at := float64(i) * breakEvenGapS
		fmt.Fprintf(&b, `{"session":"h%d","turn":0,"arrival_s":%g,"new_tokens":%d,"output_tokens":%d}`+"\n", h, at, h-breakEvenOutputTokens, breakEvenOutputTokens)
		fmt.Fprintf(&b, `{"session":"h%d","turn":1,"arrival_s":%g,"new_tokens":%d,"output_tokens":%d}`+"\n", h, at+breakEvenGapS/2, breakEvenNewTokens, breakEvenOutputTokens)
	}
	path := filepath.Join(out, breakEvenFile)
	return path, reports.WriteBytes(path, b.Bytes())
}

// breakEvenSets are a design's overrides for the map: the sessions, every
// turn's KV dropped from the accelerator after it (so that the resumed
// turn needs the store or a recomputation), and room on the accelerator,
// in the context window and in an asynchronous save's buffer for the
// longest history.
func breakEvenSets(trace, design string) []string {
	return []string{"system.design=" + design, "workload.kind=sessions", "workload.path=" + trace, "workload.time_scale=1",
		"workload.limit=0", "workload.max_concurrency=0", "accelerator.retain=off", "accelerator.kv_capacity=auto",
		"accelerator.max_model_len=" + strconv.Itoa(breakEvenWindow), "store.async_buffer=" + breakEvenAsyncBuffer}
}

// breakEvenPath is a path the stored KV is read over: its name and the
// overrides that make it; dram marks the host-DRAM path.
type breakEvenPath struct {
	name string
	sets []string
	dram bool
}

// setsFor are the path's overrides for a design: none for a design with a
// DRAM tier of its own on the DRAM path (it reads from that tier).
func (p breakEvenPath) setsFor(design string) []string {
	if p.dram && hasOwnDRAMTier(design) {
		return nil
	}
	return p.sets
}

// breakEvenPaths are the map's read paths, from the slowest: one drive,
// the scenario's drives, four drives, the scenario's drives behind a Gen5
// FPGA card (the patent's card; only the fpga design changes), and the
// host's DRAM as the only tier (a design with a DRAM tier of its own reads
// from it on every path). With storage.tiers in the scenario, only its own
// path and the DRAM one.
func breakEvenPaths(base *scenario.Loaded) []breakEvenPath {
	n := max(1, base.Storage.Drives)
	drives := func(k int) string {
		return map[bool]string{true: "1 drive", false: fmt.Sprintf("%d drives", k)}[k == 1]
	}
	paths := []breakEvenPath{{name: drives(n) + scenarioMark}}
	if len(base.Storage.Tiers) > 0 {
		paths[0].name = "its tiers" + scenarioMark
	} else {
		if n != 1 {
			paths = append([]breakEvenPath{{name: drives(1), sets: []string{"storage.drives=1"}}}, paths...)
		}
		if n < 4 {
			paths = append(paths, breakEvenPath{name: drives(4), sets: []string{"storage.drives=4"}})
		}
		paths = append(paths, breakEvenPath{name: drives(n) + ", Gen5 card", sets: []string{"fpga.pcie=gen5x16", "fpga.p2p_gbps=50"}})
	}
	dram := "{name: dram, device: " + base.CPU.HostMemory + ", capacity: 512GB}"
	return append(paths, breakEvenPath{name: "host DRAM", sets: []string{"storage.tiers=[" + dram + "]"}, dram: true})
}

// scenarioMark marks the scenario's own read path.
const scenarioMark = " (scenario)"

// breakEvenPathsNote says what the paths are, for captions.
func breakEvenPathsNote(base *scenario.Loaded) string {
	return fmt.Sprintf("drives are %s, striped; the Gen5 card is the FPGA on PCIe Gen5 x16 with a 50 GB/s peer link (only the fpga design changes); host DRAM (%s) is the only tier, or, for a design with a DRAM tier of its own, that tier",
		base.Storage.Device, base.CPU.HostMemory)
}

// breakEvenMap is the map's figures: ttft[path][design][history], the
// resumed turn's TTFT in ms.
type breakEvenMap struct {
	paths []string
	ttft  [][][]float64
	note  string // what the paths are
}

// newBreakEvenMap reads the resumed turns' TTFT from the map's runs.
func newBreakEvenMap(base *scenario.Loaded, plan studyPlan, results []pointResult) (breakEvenMap, error) {
	m := breakEvenMap{note: breakEvenPathsNote(base)}
	for p, path := range breakEvenPaths(base) {
		m.paths = append(m.paths, path.name)
		var row [][]float64
		for d, i := range plan.breakEven[p] {
			var resumed []reports.RequestRow
			for _, r := range results[i].rows {
				if r.Turn == 1 {
					resumed = append(resumed, r)
				}
			}
			if len(resumed) != len(breakEvenHistories) {
				return m, fmt.Errorf("break-even map, %s on %s: %d resumed turns, want %d", studyDesigns[d], path.name, len(resumed), len(breakEvenHistories))
			}
			slices.SortFunc(resumed, func(a, b reports.RequestRow) int { return int(a.ArrivalMs - b.ArrivalMs) })
			var ttft []float64
			for _, r := range resumed {
				ttft = append(ttft, r.TTFTms)
			}
			row = append(row, ttft)
		}
		m.ttft = append(m.ttft, row)
	}
	return m, nil
}

// crossover is the history, in tokens, from which a design's resumed turn
// is faster than recomputing (design 0) on a path: interpolated on the
// log of the history between the two lengths where it changes sides; the
// shortest history when it is faster on every one, +Inf when on none.
func (m breakEvenMap) crossover(path, design int) float64 {
	base, own := m.ttft[path][0], m.ttft[path][design]
	for k := range breakEvenHistories {
		if own[k] >= base[k] {
			continue
		}
		if k == 0 {
			return float64(breakEvenHistories[0])
		}
		before, after := own[k-1]-base[k-1], own[k]-base[k]
		lo, hi := math.Log(float64(breakEvenHistories[k-1])), math.Log(float64(breakEvenHistories[k]))
		return math.Exp(lo + (hi-lo)*before/(before-after))
	}
	return math.Inf(1)
}

// crossoverText says a crossover in words.
func crossoverText(tokens float64) string {
	switch {
	case math.IsInf(tokens, 1):
		return fmt.Sprintf("never (up to %d tokens)", breakEvenHistories[len(breakEvenHistories)-1])
	case tokens <= float64(breakEvenHistories[0]):
		return fmt.Sprintf("always (from %d tokens)", breakEvenHistories[0])
	}
	return fmt.Sprintf("from %.0f tokens", tokens)
}

// crossoverTable is the crossovers, a row per path and a column per
// storing design.
func (m breakEvenMap) crossoverTable() [][]string {
	rows := [][]string{append([]string{"read path"}, studyDesigns[1:]...)}
	for p, name := range m.paths {
		row := []string{name}
		for d := 1; d < len(studyDesigns); d++ {
			row = append(row, crossoverText(m.crossover(p, d)))
		}
		rows = append(rows, row)
	}
	return rows
}

// scenarioPath is the index of the scenario's own read path.
func (m breakEvenMap) scenarioPath() int {
	for p, name := range m.paths {
		if strings.HasSuffix(name, scenarioMark) {
			return p
		}
	}
	return 0
}

// historyPlot is the map against the history on the scenario's path, each
// design's crossover with recompute marked.
func (m breakEvenMap) historyPlot(sc string) (string, string, *plot.Plot, error) {
	p0 := m.scenarioPath()
	var series []reports.Series
	xs := make([]float64, len(breakEvenHistories))
	for k, h := range breakEvenHistories {
		xs[k] = float64(h)
	}
	for d, name := range studyDesigns {
		series = append(series, reports.Series{Name: name, X: xs, Y: m.ttft[p0][d]})
	}
	p, err := reports.LinePlot(title("TTFT of a resumed turn against its history ("+m.paths[p0]+")", sc),
		"history (tokens, log scale)", "TTFT of the resumed turn (ms, log scale)", series)
	if err != nil {
		return "", "", nil, err
	}
	reports.LogX(p)
	reports.LogY(p, series)
	var mx, my []float64
	var words []string
	for d := 1; d < len(studyDesigns); d++ {
		x := m.crossover(p0, d)
		words = append(words, studyDesigns[d]+" "+crossoverText(x))
		if !math.IsInf(x, 1) && x > float64(breakEvenHistories[0]) {
			mx, my = append(mx, x), append(my, interpolateLog(xs, m.ttft[p0][0], x))
		}
	}
	if len(mx) > 0 {
		if err := reports.Mark(p, "beats recompute from here", mx, my); err != nil {
			return "", "", nil, err
		}
	}
	caption := fmt.Sprintf("The TTFT of one resumed turn whose KV is no longer on the accelerator, against the history it resumes, on %s, one turn at a time on an idle node (short simulations, %s). A storing design beats recomputing: %s.",
		m.paths[p0], breakEvenFile, joinWords(words))
	return "break_even_history", caption, p, nil
}

// pathPlot is the map at the model's context window against the read
// path, the paths in order of their bandwidth.
func (m breakEvenMap) pathPlot(sc string, history int64) (string, string, *plot.Plot, error) {
	k := slices.Index(breakEvenHistories, history)
	if k < 0 {
		k = len(breakEvenHistories) / 2
	}
	var series []reports.Series
	for d, name := range studyDesigns {
		s := reports.Series{Name: name}
		for p := range m.paths {
			s.X, s.Y = append(s.X, float64(p)), append(s.Y, m.ttft[p][d][k])
		}
		series = append(series, s)
	}
	p, err := reports.LinePlot(title(fmt.Sprintf("TTFT of a resumed turn of %d tokens, by read path", breakEvenHistories[k]), sc),
		"where the stored KV is read from", "TTFT of the resumed turn (ms)", series)
	if err != nil {
		return "", "", nil, err
	}
	p.NominalX(m.paths...)
	p.Y.Min, p.Y.Max = 0, 1.5*m.ttft[0][0][k] // room for the legend above recompute's line
	best, bestPath := math.Inf(1), ""
	for p := range m.paths {
		for d := 1; d < len(studyDesigns); d++ {
			if v := m.ttft[p][d][k]; v < best {
				best, bestPath = v, fmt.Sprintf("%s on %s", studyDesigns[d], m.paths[p])
			}
		}
	}
	caption := fmt.Sprintf("The same resumed turn at a history of %d tokens, on each read path (%s): recompute takes %.0f ms on every path; the fastest storing design is %s, at %.0f ms. The crossover history of every design on every path is in the table above.",
		breakEvenHistories[k], m.note, m.ttft[0][0][k], bestPath, best)
	return "break_even_path", caption, p, nil
}

// interpolateLog is y at x on the log-log line through the points (xs
// ascending).
func interpolateLog(xs, ys []float64, x float64) float64 {
	for k := 1; k < len(xs); k++ {
		if x <= xs[k] {
			t := (math.Log(x) - math.Log(xs[k-1])) / (math.Log(xs[k]) - math.Log(xs[k-1]))
			return math.Exp(math.Log(ys[k-1]) + t*(math.Log(ys[k])-math.Log(ys[k-1])))
		}
	}
	return ys[len(ys)-1]
}

// joinWords joins with commas and a final "and".
func joinWords(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	var b bytes.Buffer
	for i, w := range words {
		switch {
		case i == len(words)-1:
			b.WriteString(" and ")
		case i > 0:
			b.WriteString(", ")
		}
		b.WriteString(w)
	}
	return b.String()
}

// hasOwnDRAMTier reports whether a design puts a DRAM tier of its own
// above the drives.
func hasOwnDRAMTier(design string) bool {
	d, err := hostcpu.ParseDesign(design)
	return err == nil && d.DRAMTier
}
