package main

import (
	"bytes"
	"cmp"
	"fmt"
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

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

// A break-even session: a first turn that leaves a history (its prompt
// and its output), then, half a gap later, a resumed turn of
// breakEvenNewTokens; sessions breakEvenGapS apart. Histories double from
// breakEvenShortest to breakEvenLongest, as far as the accelerator's
// memory holds the resumed turn.
const (
	breakEvenNewTokens    = 64
	breakEvenOutputTokens = 16
	breakEvenGapS         = 600
	breakEvenShortest     = 64
	breakEvenLongest      = 131072
	breakEvenFile         = "breakeven-sessions.jsonl"
	// breakEvenTie: a design wins a history when its TTFT is below
	// recompute's by more than this share (a design that recomputes too,
	// as lmcache below one chunk, ties).
	breakEvenTie = 0.01
	// breakEvenViewHistory is the history the read-path plot and the
	// card's view speak of: Llama 3's context window.
	breakEvenViewHistory = 8192
)

// breakEvenHistories are the map's histories for a scenario: those whose
// resumed turn fits all of the accelerator's memory.
func breakEvenHistories(base *scenario.Loaded) ([]int64, error) {
	_, room := base.KVRoom()
	var out []int64
	for h := int64(breakEvenShortest); h <= breakEvenLongest && h+breakEvenNewTokens+breakEvenOutputTokens <= room; h *= 2 {
		out = append(out, h)
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("the break-even map: the accelerator's memory holds %d tokens of %s's KV, too few for histories from %d tokens", room, base.Model, breakEvenShortest)
	}
	return out, nil
}

// writeBreakEvenTrace writes the map's sessions (our sessions format) into
// the study's folder and returns its path.
func writeBreakEvenTrace(out string, histories []int64) (string, error) {
	var b bytes.Buffer
	for i, h := range histories {
		at := float64(i) * breakEvenGapS
		fmt.Fprintf(&b, `{"session":"h%d","turn":0,"arrival_s":%g,"new_tokens":%d,"output_tokens":%d}`+"\n", h, at, h-breakEvenOutputTokens, breakEvenOutputTokens)
		fmt.Fprintf(&b, `{"session":"h%d","turn":1,"arrival_s":%g,"new_tokens":%d,"output_tokens":%d}`+"\n", h, at+breakEvenGapS/2, breakEvenNewTokens, breakEvenOutputTokens)
	}
	path := filepath.Join(out, breakEvenFile)
	return path, reports.WriteBytes(path, b.Bytes())
}

// breakEvenSets are a design's overrides for the map: the sessions (and
// the synthetic generator's keys back at the default's, which a replay
// does not read), every
// turn's KV dropped from the accelerator after it (so that the resumed
// turn needs the store or a recomputation), all of the device memory for
// KV, and a context window and an asynchronous save's buffer that take the
// longest resumed turn (the model's own window may be shorter).
func breakEvenSets(base *scenario.Loaded, trace, design string, histories []int64) []string {
	window := histories[len(histories)-1] + breakEvenNewTokens + breakEvenOutputTokens
	perToken, _ := base.KVRoom()
	return append(scenario.SyntheticDefaults(), "system.design="+design, "workload.kind=sessions", "workload.path="+trace, "workload.time_scale=1",
		"workload.limit=0", "workload.max_concurrency=0", "accelerator.retain=off", "accelerator.kv_capacity=auto",
		"accelerator.max_model_len="+strconv.FormatInt(window, 10), "store.async_buffer="+strconv.FormatInt(window*perToken, 10)+"B")
}

// breakEvenPath is a path the stored KV is read over: its name and the
// overrides that make it; own marks the scenario's own path, dram the
// host-DRAM one.
type breakEvenPath struct {
	name      string
	sets      []string
	own, dram bool
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
// from it on every path), unless the scenario sets its own storage.
func breakEvenPaths(base *scenario.Loaded) []breakEvenPath {
	n := max(1, base.Storage.Drives)
	drives := func(k int) string {
		if k == 1 {
			return "1 drive"
		}
		return fmt.Sprintf("%d drives", k)
	}
	var paths []breakEvenPath
	if n != 1 {
		paths = append(paths, breakEvenPath{name: drives(1), sets: []string{"storage.drives=1"}})
	}
	paths = append(paths, breakEvenPath{name: drives(n) + " (scenario)", own: true})
	if n < 4 {
		paths = append(paths, breakEvenPath{name: drives(4), sets: []string{"storage.drives=4"}})
	}
	paths = append(paths, breakEvenPath{name: drives(n) + ", Gen5 card", sets: []string{"fpga.pcie=gen5x16", "fpga.p2p_gbps=50"}})
	if !storageIsTheDefaults(base) { // storage.tiers may not stand beside storage keys the scenario sets
		return paths
	}
	dram := "{name: dram, device: " + base.CPU.HostMemory + ", capacity: 512GB}"
	return append(paths, breakEvenPath{name: "host DRAM", sets: []string{"storage.tiers=[" + dram + "]"}, dram: true})
}

// storageIsTheDefaults reports whether the scenario's storage keys all come
// from the embedded default.
func storageIsTheDefaults(base *scenario.Loaded) bool {
	return base.Unset("storage.device") && base.Unset("storage.capacity") && base.Unset("storage.drives")
}

// breakEvenPathsNote says what the paths are, for captions.
func breakEvenPathsNote(base *scenario.Loaded) string {
	note := fmt.Sprintf("drives are %s, striped; the Gen5 card is the FPGA on PCIe Gen5 x16 with a 50 GB/s peer link (only the fpga design changes)", base.Storage.Device)
	if storageIsTheDefaults(base) {
		return note + fmt.Sprintf("; host DRAM (%s) is the only tier, or, for a design with a DRAM tier of its own, that tier", base.CPU.HostMemory)
	}
	return note + "; no DRAM path: the scenario sets its own storage"
}

// breakEvenMap is the map's figures: ttft[path][design][history], the
// resumed turn's TTFT in ms.
type breakEvenMap struct {
	histories []int64
	paths     []string
	own       int // the scenario's own path
	ttft      [][][]float64
	note      string // what the paths are
}

// newBreakEvenMap reads the resumed turns' TTFT from the map's runs.
func newBreakEvenMap(base *scenario.Loaded, plan studyPlan, results []pointResult) (breakEvenMap, error) {
	m := breakEvenMap{histories: plan.histories, note: breakEvenPathsNote(base)}
	for p, path := range plan.paths {
		m.paths = append(m.paths, path.name)
		if path.own {
			m.own = p
		}
		var row [][]float64
		for d, i := range plan.breakEven[p] {
			var resumed []reports.RequestRow
			for _, r := range results[i].rows {
				if r.Turn == 1 {
					resumed = append(resumed, r)
				}
			}
			if len(resumed) != len(m.histories) {
				return m, fmt.Errorf("break-even map, %s on %s: %d resumed turns, want %d", studyDesigns[d], path.name, len(resumed), len(m.histories))
			}
			slices.SortFunc(resumed, func(a, b reports.RequestRow) int { return cmp.Compare(a.ArrivalMs, b.ArrivalMs) })
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

// crossover is the index of the shortest history at which a design's
// resumed turn beats recomputing it (design 0) on a path by more than
// breakEvenTie, or -1 if it does at none. The crossing lies between that
// history and the one before: the map measures, it does not interpolate
// (a design that recomputes below its chunk size, as lmcache, steps).
func (m breakEvenMap) crossover(path, design int) int {
	for k := range m.histories {
		if m.ttft[path][design][k] < (1-breakEvenTie)*m.ttft[path][0][k] {
			return k
		}
	}
	return -1
}

// crossoverText says a crossover in words.
func (m breakEvenMap) crossoverText(k int) string {
	switch {
	case k < 0:
		return fmt.Sprintf("never (up to %d tokens)", m.histories[len(m.histories)-1])
	case k == 0:
		return fmt.Sprintf("always (from %d tokens)", m.histories[0])
	}
	return fmt.Sprintf("from %d tokens", m.histories[k])
}

// crossoverTable is the crossovers, a row per path and a column per
// storing design.
func (m breakEvenMap) crossoverTable() [][]string {
	rows := [][]string{append([]string{"read path"}, studyDesigns[1:]...)}
	for p, name := range m.paths {
		row := []string{name}
		for d := 1; d < len(studyDesigns); d++ {
			row = append(row, m.crossoverText(m.crossover(p, d)))
		}
		rows = append(rows, row)
	}
	return rows
}

// historyPlot is the map against the history on the scenario's path, the
// history at which each design first beats recomputing ringed.
func (m breakEvenMap) historyPlot(sc string) (string, string, *reports.Chart, error) {
	p0 := m.own
	var series []reports.Series
	xs := make([]float64, len(m.histories))
	for k, h := range m.histories {
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
	reports.LogX(p.Plot)
	reports.LogY(p.Plot, series)
	var mx, my []float64
	var words []string
	for d := 1; d < len(studyDesigns); d++ {
		k := m.crossover(p0, d)
		words = append(words, studyDesigns[d]+" "+m.crossoverText(k))
		if k > 0 {
			mx, my = append(mx, xs[k]), append(my, m.ttft[p0][d][k])
		}
	}
	if len(mx) > 0 {
		if err := reports.Mark(p, "first history that beats recompute", mx, my); err != nil {
			return "", "", nil, err
		}
	}
	caption := fmt.Sprintf("The TTFT of one resumed turn whose KV is no longer on the accelerator, against the history it resumes, on %s, one turn at a time on an idle node (short simulations, %s). A storing design beats recomputing by more than 1 %%: %s.",
		m.paths[p0], breakEvenFile, joinWords(words))
	return "break_even_history", caption, p, nil
}

// pathPlot is the map at a history (the nearest the map has) against the
// read path, the paths in order of their bandwidth.
func (m breakEvenMap) pathPlot(sc string, history int64) (string, string, *reports.Chart, error) {
	k := m.historyIndex(history)
	var series []reports.Series
	top := 0.0
	for d, name := range studyDesigns {
		s := reports.Series{Name: name}
		for p := range m.paths {
			s.X, s.Y = append(s.X, float64(p)), append(s.Y, m.ttft[p][d][k])
			top = max(top, m.ttft[p][d][k])
		}
		series = append(series, s)
	}
	p, err := reports.PointPlot(title(fmt.Sprintf("TTFT of a resumed turn of %d tokens, by read path", m.histories[k]), sc),
		"where the stored KV is read from", "TTFT of the resumed turn (ms)", series)
	if err != nil {
		return "", "", nil, err
	}
	p.NominalX(m.paths...)
	p.Y.Min, p.Y.Max = 0, 1.05*top
	best, bestPath := math.Inf(1), ""
	for p := range m.paths {
		for d := 1; d < len(studyDesigns); d++ {
			if v := m.ttft[p][d][k]; v < best {
				best, bestPath = v, fmt.Sprintf("%s on %s", studyDesigns[d], m.paths[p])
			}
		}
	}
	caption := fmt.Sprintf("The same resumed turn at a history of %d tokens, on each read path (%s): recompute takes %.0f ms on every path; the fastest storing design is %s, at %.0f ms. The crossover history of every design on every path is in the table above.",
		m.histories[k], m.note, m.ttft[0][0][k], bestPath, best)
	return "break_even_path", caption, p, nil
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
	d, err := store.ParseDesign(design)
	return err == nil && d.DRAMTier
}

// cardOutcome is how the card's resumed turn does against a rival's at
// one history of one path: a win or a loss where they differ by more than
// breakEvenTie of the rival's, a tie otherwise.
func (m breakEvenMap) cardOutcome(path, rival, k int) verdictOutcome {
	card, other := m.ttft[path][fpgaDesign][k], m.ttft[path][rival][k]
	switch {
	case card < (1-breakEvenTie)*other:
		return cardWins
	case card > (1+breakEvenTie)*other:
		return cardLoses
	}
	return cardTies
}

// outcomeWords are the break-even view's words for the card's outcomes.
var outcomeWords = map[verdictOutcome]string{cardWins: "faster", cardLoses: "slower", cardTies: "within 1 %"}

// cardAgainst says, for one path and rival, where along the histories the
// card is faster, slower or within the tie: "slower 64-256; faster
// 512-131072" (a run of histories with one outcome, in order).
func (m breakEvenMap) cardAgainst(path, rival int) string {
	var parts []string
	for k := 0; k < len(m.histories); {
		o, end := m.cardOutcome(path, rival, k), k
		for end+1 < len(m.histories) && m.cardOutcome(path, rival, end+1) == o {
			end++
		}
		span := strconv.FormatInt(m.histories[k], 10)
		if end > k {
			span += "-" + strconv.FormatInt(m.histories[end], 10)
		}
		parts = append(parts, outcomeWords[o]+" "+span)
		k = end + 1
	}
	return strings.Join(parts, "; ")
}

// cardRivals are the designs the card is set against on the map: every
// other design, recompute first.
func cardRivals() []int {
	var out []int
	for d := range studyDesigns {
		if d != fpgaDesign {
			out = append(out, d)
		}
	}
	return out
}

// cardTable is the map seen from the patent's card: a row per read path,
// a column per other design, each cell the histories (tokens) at which the
// card's resumed turn is faster, slower or within 1 %.
func (m breakEvenMap) cardTable() [][]string {
	header := []string{"read path"}
	for _, d := range cardRivals() {
		header = append(header, "fpga against "+studyDesigns[d])
	}
	rows := [][]string{header}
	for p, name := range m.paths {
		row := []string{name}
		for _, d := range cardRivals() {
			row = append(row, m.cardAgainst(p, d))
		}
		rows = append(rows, row)
	}
	return rows
}

// cardCaption says, from the map, on which paths the card is faster and
// on which slower than each other design at a history (the nearest the
// map has at or below it).
func (m breakEvenMap) cardCaption(history int64) string {
	k := m.historyIndex(history)
	var words []string
	for _, d := range cardRivals() {
		by := map[verdictOutcome][]string{}
		for p, name := range m.paths {
			o := m.cardOutcome(p, d, k)
			by[o] = append(by[o], name)
		}
		var said []string
		for _, o := range []verdictOutcome{cardWins, cardLoses, cardTies} {
			switch len(by[o]) {
			case 0:
			case len(m.paths):
				said = append(said, outcomeWords[o]+" on every path")
			default:
				said = append(said, outcomeWords[o]+" on "+joinWords(by[o]))
			}
		}
		words = append(words, "against "+studyDesigns[d]+", "+strings.Join(said, ", "))
	}
	return fmt.Sprintf("The break-even map seen from the patent's card (fpga): on each read path, the histories (tokens) at which its resumed turn is faster than each other design's, slower, or within 1 %% (one turn at a time on an idle node; %s). At a history of %d tokens, the card %s.",
		m.note, m.histories[k], strings.Join(words, "; "))
}

// historyIndex is the index of the map's longest history at or below
// history (the first if none is).
func (m breakEvenMap) historyIndex(history int64) int {
	k := len(m.histories) - 1
	for k > 0 && m.histories[k] > history {
		k--
	}
	return k
}
