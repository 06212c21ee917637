package main

import (
	"fmt"
	"github.com/kvcosim/kvcosim/fpga"
	"github.com/kvcosim/kvcosim/hostcpu"
	"os/exec"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"

	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/scenario"
	"github.com/kvcosim/kvcosim/sim"
)

// title puts the scenario under a plot's title, broken at its "; " into
// lines that fit the plot's width.
func title(what, scenarioLine string) string {
	const width = 100
	lines := []string{what}
	line := ""
	for _, part := range strings.Split(scenarioLine, "; ") {
		switch {
		case line == "":
			line = part
		case len(line)+2+len(part) > width:
			lines, line = append(lines, line), part
		default:
			line += "; " + part
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

func ttftCDF(sc string, designs []pointResult) (string, string, *reports.Chart, error) {
	var names []string
	var samples [][]float64
	for _, r := range designs {
		var ttft []float64
		for _, row := range r.rows {
			if row.TTFTms > 0 {
				ttft = append(ttft, row.TTFTms)
			}
		}
		names, samples = append(names, r.sum.Design), append(samples, ttft)
	}
	p, err := reports.LinePlot(title("Time to first token, by design", sc), "TTFT (ms, log scale)", "share of requests at or below", reports.CDFSeries(names, samples))
	if err == nil {
		reports.LogX(p.Plot)
	}
	return "ttft_cdf", "The distribution of the time to first token of every request, per design, at the scenario's load: recompute prefills the whole history, the storing designs import the stored KV cache of resumed turns whose KV left the accelerator (the headline's resumed-turn p50 is each line at its resumed turns' median).", p, err
}

func ttftBreakdown(sc string, designs []pointResult) (string, string, *reports.Chart, error) {
	parts := []string{"CPU (request, decision)", "query (hashing, table walk)", "import (moving the KV)", "queue", "prefill"}
	values := make([][]float64, len(parts))
	var names []string
	for _, r := range designs {
		var sum [5]float64
		for _, row := range r.rows {
			stages := [5]float64{0, row.QueryMs, row.ImportMs, row.QueueMs, row.PrefillMs}
			stages[0] = max(0, row.TTFTms-stages[1]-stages[2]-stages[3]-stages[4])
			for k := range sum {
				sum[k] += stages[k] / float64(len(r.rows))
			}
		}
		for k := range parts {
			values[k] = append(values[k], sum[k])
		}
		names = append(names, r.sum.Design)
	}
	p, err := reports.StackedBars(title("Where the time to first token goes (mean per request)", sc), "mean TTFT (ms)", names, parts, values)
	var words []string
	for i, name := range names {
		words = append(words, fmt.Sprintf("%s %.0f ms of prefill and %.0f of query and import", name, values[4][i], values[1][i]+values[2][i]))
	}
	return "ttft_breakdown", "The mean time to first token per design, split into its stages: the CPU's request handling and claim-2 decision, the store's query (its decision: hashing and the table walk, on the card or a host core) and import (moving the KV from storage into the accelerator, whoever moves it), the wait for the accelerator, and the prefill; a request spends, on average, " + joinWords(words) + ".", p, err
}

// loadSeries is a metric of each design at every load: its mean over the
// seeds, with their least and greatest.
func (st *study) loadSeries(metric func(*reports.Summary) float64) []reports.Series {
	var series []reports.Series
	for d, row := range st.plan.loads {
		s := reports.Series{Name: studyDesigns[d], X: studyLoads}
		for _, seeds := range row {
			v := st.spread(seeds, metric)
			s.Y, s.Min, s.Max = append(s.Y, v.Mean), append(s.Min, v.Min), append(s.Max, v.Max)
		}
		series = append(series, s)
	}
	return series
}

// markSaturation rings each design's first saturated load on a load plot,
// at its mean.
func (st *study) markSaturation(p *reports.Chart, metric func(*reports.Summary) float64) error {
	var xs, ys []float64
	for d, k := range st.saturatedFrom {
		if k >= 0 {
			xs, ys = append(xs, studyLoads[k]), append(ys, st.spread(st.plan.loads[d][k], metric).Mean)
		}
	}
	if len(xs) == 0 {
		return nil
	}
	return reports.Mark(p, "saturated from here", xs, ys)
}

func (st *study) throughputCurve(sc string) (string, string, *reports.Chart, error) {
	metric := func(s *reports.Summary) float64 { return s.SustainedOutputTokensPerS }
	p, err := reports.LinePlot(title("Sustained output throughput against offered load", sc), "offered load (x the scenario's arrival rate)", "sustained output tokens/s", st.loadSeries(metric))
	if err == nil {
		err = st.markSaturation(p, metric)
	}
	var parts []string
	for d := range st.saturatedFrom {
		parts = append(parts, studyDesigns[d]+" "+st.saturationText(d))
	}
	return "throughput_vs_load", fmt.Sprintf("Sustained output throughput against the offered load, per design, the mean%s with bars from their least to their greatest: the output tokens served per session times the sessions per second delivered while they arrive (the whole run's rate divides by its idle tail and stays at the offered rate); rings where a design is first saturated on some seed (it cannot keep up: delivered under 90 %% of offered, or a queue that grows through the run); saturates: %s.", st.seedsWords(), joinWords(parts)), p, err
}

func (st *study) latencyPanels(sc string) ([]*reports.Chart, error) {
	var plots []*reports.Chart
	for i, m := range []struct {
		what, label string
		f           func(*reports.Summary) float64
	}{
		{"Resumed-turn TTFT p50 against offered load", "resumed-turn TTFT p50 (ms)", func(s *reports.Summary) float64 { return s.ResumedTTFTms.P50 }},
		{"TTFT p99 against offered load", "TTFT p99 (ms)", func(s *reports.Summary) float64 { return s.TTFTms.P99 }},
		{"TPOT p50 against offered load", "TPOT p50 (ms)", func(s *reports.Summary) float64 { return s.TPOTms.P50 }},
	} {
		what := m.what
		if i == 0 {
			what = title(what, sc)
		}
		series := st.loadSeries(m.f)
		p, err := reports.LinePlot(what, "offered load (x the scenario's arrival rate)", m.label, series)
		if err == nil {
			if i < 2 { // TTFT spans from milliseconds to minutes
				reports.LogY(p.Plot, series)
			}
			err = st.markSaturation(p, m.f)
		}
		if err != nil {
			return nil, err
		}
		plots = append(plots, p)
	}
	return plots, nil
}

func (st *study) capacityCurve(sc string) (string, string, *reports.Chart, error) {
	s := reports.Series{Name: "fpga"}
	for i, k := range st.plan.capacities {
		n, _ := scenario.ParseSize(studyCapacities[i])
		s.X, s.Y = append(s.X, float64(n)/1e9), append(s.Y, st.results[k].sum.HitRatioTokens)
	}
	p, err := reports.LinePlot(title("Prefill hit ratio against store capacity (fpga design)", sc), "store capacity (GB, log scale)", "share of prompt tokens reused", []reports.Series{s})
	if err == nil {
		reports.LogX(p.Plot)
	}
	return "hit_ratio_vs_capacity", fmt.Sprintf("The share of prompt tokens imported from the store instead of recomputed, against the store's size (fpga design; the KV of evicted sessions must fit to be reused): %.3f with %s, %.3f with %s.",
		s.Y[0], studyCapacities[0], s.Y[len(s.Y)-1], studyCapacities[len(studyCapacities)-1]), p, err
}

func levelPanels(sc string, fpgaRun pointResult) ([]*reports.Chart, error) {
	var stored, f1, f2 reports.Series
	stored.Name, f1.Name, f2.Name = "stored", "FIFO 1", "FIFO 2"
	for _, s := range fpgaRun.levels {
		t := s.at.Seconds()
		stored.X, stored.Y = append(stored.X, t), append(stored.Y, float64(s.inUse*fpgaRun.region)/1e9)
		f1.X, f1.Y = append(f1.X, t), append(f1.Y, float64(s.fifo1))
		f2.X, f2.Y = append(f2.X, t), append(f2.Y, float64(s.fifo2))
	}
	var plots []*reports.Chart
	for i, panel := range []struct {
		what, label string
		s           reports.Series
	}{
		{"Bytes held by the store", "stored (GB)", stored},
		{"FIFO 1: regions idle longer than T", "FIFO 1 (regions)", f1},
		{"FIFO 2: regions freed within T", "FIFO 2 (regions)", f2},
	} {
		what := panel.what
		if i == 0 {
			what = title("The store over time (fpga design): "+strings.ToLower(what[:1])+what[1:], sc)
		}
		p, err := reports.LinePlot(what, "simulated time (s)", panel.label, []reports.Series{panel.s})
		if err != nil {
			return nil, err
		}
		p.Legend = plot.NewLegend() // one line: the axis says what it is
		plots = append(plots, p)
	}
	return plots, nil
}

// timelineLanes are the parts a request's stages run on, top to bottom.
var timelineLanes = []string{"cpu", "fpga", "storage", "accelerator"}

// storageStages are the FPGA engine's stages that wait on the storage.
var storageStages = []string{"import", "storage-write", "stream-out"}

// timelinePanels draws the first session (by id) with three turns of
// which one went through a query: up to three turns, each zoomed on the
// way to its first token, then the first export the FPGA engine made for
// it, zoomed on its stages (claims 7-10).
func timelinePanels(sc string, fpgaRun pointResult) ([]*reports.Chart, error) {
	session, ok := teachingSession(fpgaRun.rows)
	if !ok {
		return nil, fmt.Errorf("session timeline: the fpga run has no requests")
	}
	turns, order := sessionTurns(fpgaRun.spans, session)
	var plots []*reports.Chart
	for i, turn := range order[:min(3, len(order))] {
		p, err := turnTimeline(session, turn, turns[turn], i == 0, sc)
		if err != nil {
			return nil, err
		}
		plots = append(plots, p)
	}
	for _, turn := range order {
		if slices.ContainsFunc(turns[turn], isExportStage) {
			p, err := exportTimeline(turns[turn], turn)
			if err != nil {
				return nil, err
			}
			return append(plots, p), nil
		}
	}
	return plots, nil
}

// sessionTurns groups a session's spans by turn: the CPU's stages carry
// their turn; an FPGA engine stage belongs to the last turn that arrived
// before it started.
func sessionTurns(spans []sim.Span, session int64) (map[string][]sim.Span, []string) {
	turns := map[string][]sim.Span{}
	var order []string
	var arrivals []sim.Time
	for _, sp := range spans {
		if sp.ID != session || sp.Task != hostcpu.TaskDecide {
			continue
		}
		order, arrivals = append(order, sp.Attr("turn")), append(arrivals, sp.Start)
	}
	for _, sp := range spans {
		if sp.ID != session {
			continue
		}
		i := len(arrivals) - 1
		for i > 0 && arrivals[i] > sp.Start {
			i--
		}
		if i >= 0 {
			turns[order[i]] = append(turns[order[i]], sp)
		}
	}
	return turns, order
}

// stageColours keeps a stage's colour the same in every panel.
var stageColours = map[string]int{"decide": 0, "queue": 3, "prefill": 4, "decode": 5, "query": 1, "import": 2, "export": 6,
	"dma-tokens": 7, "hash": 8, "bucket-read": 9, "chain-walk": 10, "signal-cpu": 11, "exchange-read": 12,
	"fifo-allocate": 13, "storage-write": 2, "stream-out": 2, "chain-insert": 14, "fifo-free": 15}

// interval places a span on its lane, from origin, labelled with its
// length (and the FPGA cycles it took, when it is an FPGA stage).
func interval(sp sim.Span, origin sim.Time) reports.Interval {
	part, stage, detail := sp.Part, sp.Task, sp.Stage
	if sp.Clocked { // an FPGA engine stage: query/hash
		stage, detail = detail, ""
		if slices.Contains(storageStages, stage) {
			part = "storage"
		}
	}
	label := stage + " " + fmtMs(ms(sp.End-sp.Start)) + " ms"
	switch {
	case detail != "":
		label = fmt.Sprintf("%s (%s) %s ms", stage, strings.ReplaceAll(detail, "_", " "), fmtMs(ms(sp.End-sp.Start)))
	case sp.Clocked:
		label += ", " + thousands(int64(sp.Cycles)) + " cycles"
	}
	return reports.Interval{Lane: slices.Index(timelineLanes, part), Start: ms(sp.Start - origin), End: ms(sp.End - origin),
		Label: label, Colour: stageColours[stage]}
}

// thousands writes n with commas between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// fmtMs writes a duration in ms with three significant digits, no exponent.
func fmtMs(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

// turnTimeline is one turn's panel, zoomed on the way to the first token:
// the axis ends 30 % after the prefill, so the decode runs off its right
// edge (the legend gives its length). With the FPGA engine's stages, the
// request-level query and import bars give way to them.
func turnTimeline(session int64, turn string, spans []sim.Span, first bool, sc string) (*reports.Chart, error) {
	arrival, firstToken := spans[0].Start, spans[0].Start
	engine := false
	for _, sp := range spans {
		if sp.Task == hostcpu.TaskPrefill {
			firstToken = sp.End
		}
		engine = engine || sp.Clocked && sp.Task == fpga.TaskQuery
	}
	var ivs []reports.Interval
	for _, sp := range spans {
		if sp.Start > firstToken || engine && !sp.Clocked && (sp.Task == hostcpu.TaskQuery || sp.Task == hostcpu.TaskImport) {
			continue // the export comes after the turn; the engine's stages replace the request's
		}
		ivs = append(ivs, interval(sp, arrival))
	}
	what := fmt.Sprintf("Turn %s", turn)
	if first {
		what = title(fmt.Sprintf("Session %d through the system (fpga design): turn %s", session, turn), sc)
	}
	return reports.Timeline(what, "time since the turn arrived (ms)", timelineLanes, ivs, 1.3*ms(firstToken-arrival))
}

// isExportStage reports whether a span is a stage of the FPGA's export.
func isExportStage(sp sim.Span) bool { return sp.Clocked && sp.Task == fpga.TaskExport }

// exportTimeline is the export after a turn: the FPGA engine's stages from
// the export's start.
func exportTimeline(spans []sim.Span, turn string) (*reports.Chart, error) {
	var ivs []reports.Interval
	var start, end sim.Time
	for _, sp := range spans {
		if !isExportStage(sp) {
			continue
		}
		if len(ivs) == 0 {
			start = sp.Start
		}
		end = max(end, sp.End)
		ivs = append(ivs, interval(sp, start))
	}
	return reports.Timeline(fmt.Sprintf("The export after turn %s (claims 7-10): the FPGA engine's stages", turn),
		"time since the export started (ms)", timelineLanes, ivs, 1.05*ms(end-start))
}

// timelineCaption says what the session timeline shows, with its resumed
// turn's query and import against its prefill.
func timelineCaption(fpgaRun pointResult) string {
	const what = "One session through the CPU, the FPGA, the storage and the accelerator (fpga design): up to three turns, each from its arrival and cut 30 % after its prefill (the legend gives every stage's length and the FPGA stages' cycles; bars shorter than 0.5 % of the axis are drawn at that width), then its first export (claims 7-10)"
	session, _ := teachingSession(fpgaRun.rows)
	for _, r := range fpgaRun.rows {
		if r.Session == session && r.Decision == "query" && r.Hit {
			return fmt.Sprintf("%s; its turn %d waits %.0f ms for the FPGA's query and import of its KV from the drives (claims 3-6), then prefills its %d new tokens in %.0f ms.",
				what, r.Turn, r.QueryMs+r.ImportMs, r.ComputedTokens, r.PrefillMs)
		}
	}
	return what + "."
}

// teachingSession is the first session, by id, with at least three turns
// of which one made a query that hit; failing that, the session with the
// most turns.
func teachingSession(rows []reports.RequestRow) (int64, bool) {
	turns, queried := map[int64]int{}, map[int64]bool{}
	var ids []int64
	for _, r := range rows {
		if turns[r.Session] == 0 {
			ids = append(ids, r.Session)
		}
		turns[r.Session]++
		queried[r.Session] = queried[r.Session] || (r.Decision == "query" && r.Hit)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if turns[id] >= 3 && queried[id] {
			return id, true
		}
	}
	best := int64(-1)
	for _, id := range ids {
		if best < 0 || turns[id] > turns[best] {
			best = id
		}
	}
	return best, best >= 0
}

func ms(t sim.Time) float64 { return float64(t) / float64(sim.Millisecond) }

// debugBuildInfo is the module version and, when the build recorded it,
// the commit (and whether the tree had changes).
func debugBuildInfo() (string, bool) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	v := info.Main.Version
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value[:min(12, len(s.Value))]
		case "vcs.modified":
			if s.Value == "true" {
				modified = " (with local changes)"
			}
		}
	}
	if rev == "" {
		rev, modified = gitCommit()
	}
	if rev == "" {
		return v + ", built without version-control information", true
	}
	v += " commit " + rev + modified
	return v, true
}

// gitCommit asks git for the working tree's commit, for a build that did
// not record it (go run, -buildvcs=false): "" where git or a repository
// is not at hand.
func gitCommit() (rev, modified string) {
	out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "", ""
	}
	if status, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(status) > 0 {
		modified = " (with local changes)"
	}
	return strings.TrimSpace(string(out)), modified
}

// plots draws the study's figures and returns them in the order of its
// argument: the headline's distributions, the break-even map (its
// crossovers, its read paths and the card against the others), the load
// curve, the store's capacity, the drives' endurance, the host's cost, the
// energy and the busy-host axis, and one session's timeline.
func (st *study) plots(out string) ([]reports.Figure, error) {
	sc := st.base.Describe()
	var figures []reports.Figure
	add := func(name, caption string, p *reports.Chart, err error) error {
		if err != nil {
			return err
		}
		figures = append(figures, reports.Figure{File: name + ".svg", Caption: caption, Data: name + ".csv"})
		return reports.SavePlot(p, out, name)
	}
	panels := func(name, caption string, inches float64, plots []*reports.Chart, err error) error {
		if err != nil {
			return err
		}
		figures = append(figures, reports.Figure{File: name + ".svg", Caption: caption, Data: name + ".csv"})
		return reports.SavePanels(plots, out, name, inches)
	}
	fpgaRun := *st.fpga()
	latency, err := st.latencyPanels(sc)
	levels, levelsErr := levelPanels(sc, fpgaRun)
	timeline, timelineErr := timelinePanels(sc, fpgaRun)
	hostLoad, hostLoadErr := st.hostLoadPanels(sc)
	for _, step := range []func() error{
		func() error { return add(ttftCDF(sc, st.designs)) },
		func() error { return add(ttftBreakdown(sc, st.designs)) },
		func() error { return add(st.breakEven.historyPlot(sc)) },
		func() error {
			figures = append(figures, reports.Figure{File: "break_even_crossovers", Table: st.breakEven.crossoverTable(),
				Caption: "The shortest history of the map at which each storing design's resumed turn beats recomputing it by more than 1 %, on each read path (the crossing lies between it and the history before; " + st.breakEven.note + ")."})
			return nil
		},
		func() error { return add(st.breakEven.pathPlot(sc, breakEvenViewHistory)) },
		func() error {
			figures = append(figures, reports.Figure{File: "break_even_card", Table: st.breakEven.cardTable(), Caption: st.breakEven.cardCaption(breakEvenViewHistory)})
			return nil
		},
		func() error {
			return panels("latency_vs_load", "Resumed-turn TTFT p50, TTFT p99 and TPOT p50 against the offered load (x the scenario's arrival rate), per design, the mean"+st.seedsWords()+" with bars from their least to their greatest; rings mark where each design is first saturated on some seed ("+st.firstToSaturate()+").", 2.6, latency, err)
		},
		func() error { return add(st.throughputCurve(sc)) },
		func() error { return add(st.capacityCurve(sc)) },
		func() error {
			return panels("storage_levels", fmt.Sprintf("The fpga design's store over time: the bytes it holds (%.0f GB at the most) and the levels of the free-address FIFOs (claim 10): FIFO 1 holds regions idle longer than the preset time T, FIFO 2 regions freed within T.", peakStoredGB(fpgaRun)), 2.6, levels, levelsErr)
		},
		func() error { return add(st.endurancePlot(sc)) },
		func() error {
			figures = append(figures, reports.Figure{File: "host_cost", Table: hostTable(st.designs), Caption: hostCaption(st.designs)})
			return nil
		},
		func() error { return add(energyPlot(sc, st.designs)) },
		func() error {
			if len(st.plan.hostLoads) == 0 {
				return nil // no busy-host axis (busyHostAxis)
			}
			return panels("host_load", st.hostLoadCaption(), 3.2, hostLoad, hostLoadErr)
		},
		func() error {
			return panels("session_timeline", timelineCaption(fpgaRun), 3.6, timeline, timelineErr)
		},
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return figures, nil
}

// peakStoredGB is the most the fpga run's store held.
func peakStoredGB(fpgaRun pointResult) float64 {
	peak := int64(0)
	for _, l := range fpgaRun.levels {
		peak = max(peak, l.inUse*fpgaRun.region)
	}
	return float64(peak) / 1e9
}

// endurancePlot is each storing design's drive writes per day, with full
// and with delta exports, against the drives' rating.
func (st *study) endurancePlot(sc string) (string, string, *reports.Chart, error) {
	categories := studyDesigns[1:]
	modes := []string{"full exports", "delta exports"}
	values := [][]float64{make([]float64, len(categories)), make([]float64, len(categories))}
	worst, worstName, rated := 0.0, "", 0.0
	for d := 1; d < len(studyDesigns); d++ {
		for m, sum := range []*reports.Summary{&st.designs[d].sum, &st.results[st.plan.delta[d-1]].sum} {
			perDay, _, r0, _ := driveWrites(sum)
			values[m][d-1] = perDay
			if perDay > worst {
				worst, worstName = perDay, studyDesigns[d]+" with "+modes[m]
			}
			rated = max(rated, r0)
		}
	}
	p, err := reports.GroupedBars(title("Sustained drive writes per day, by design and export mode", sc), "sustained drive writes per day (per drive)", categories, modes, values)
	if err == nil && rated > 0 {
		p.Y.Max = max(p.Y.Max, 1.2*rated)
		err = reports.HLine(p, fmt.Sprintf("rated: %g a day", rated), rated, -0.5, float64(len(categories))-0.5)
	}
	caption := fmt.Sprintf("The drive writes per day each storing design's exports make on each drive at the scenario's load kept up around the clock (the bytes it writes per session times the sessions per second delivered while they arrive, over a day, over the capacity of the drive as sold), with whole objects (full, the patent's write-through) and with only the new part of each (delta); the most is %.1f (%s), against the drives' rated %g.",
		worst, worstName, rated)
	return "endurance", caption, p, err
}
