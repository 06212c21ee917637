package main

import (
	"fmt"

	"github.com/kvcosim/kvcosim/reports"
)

// energyParts are the components of a run's energy, in the order the
// energy plot stacks them.
var energyParts = []string{"accelerator", "fpga", "drives", "host_cpu", "host_dram", "links"}

// hostTable is what each design's store cost the host, and each design's
// energy and cost per output token: a row per design.
func hostTable(designs []pointResult) [][]string {
	rows := [][]string{{"design", "host core-s", "host DRAM read (GB)", "host DRAM written (GB)", "host DRAM peak (GB/s)",
		"PCIe root (GB)", "energy per output token (J)", "cost per million output tokens (USD)"}}
	for _, r := range designs {
		h, gb := r.sum.Host, func(b int64) string { return readableNumber(float64(b) / 1e9) }
		rows = append(rows, []string{r.sum.Design, readableNumber(h.CPUCoreS), gb(h.DRAMReadBytes), gb(h.DRAMWriteBytes),
			fmt.Sprintf("%.1f", h.DRAMPeakGBps), gb(h.PCIeRootBytes), fmt.Sprintf("%.2f", r.sum.Energy.JoulesPerOutputToken),
			fmt.Sprintf("%.2f", r.sum.Cost.USDPerMillionOutputTokens)})
	}
	return rows
}

// hostCaption says what the host table shows, from its figures.
func hostCaption(designs []pointResult) string {
	var words []string
	for _, r := range designs {
		words = append(words, fmt.Sprintf("%s %s core-s and %.0f GB through host DRAM", r.sum.Design, readableNumber(r.sum.Host.CPUCoreS),
			float64(r.sum.Host.DRAMReadBytes+r.sum.Host.DRAMWriteBytes)/1e9))
	}
	return "What each design's store cost the hosts over the run (docs/hostcpu.md, \"Host cost, energy and cost\"): the core-seconds of its hashing, lookups, I/O submissions, DMA set-ups and staging copies, the host-DRAM bytes it read and wrote and their peak rate (bytes started in a 100 ms window), the bytes through the PCIe root complex; and the run's energy and cost (hardware paid off over its amortization period, and energy) per output token: " +
		joinWords(words) + "."
}

// energyPlot is each design's energy per output token, split by
// component.
func energyPlot(sc string, designs []pointResult) (string, string, *reports.Chart, error) {
	values := make([][]float64, len(energyParts))
	var names []string
	for _, r := range designs {
		per := 0.0
		if r.sum.Energy.Joules > 0 {
			per = r.sum.Energy.JoulesPerOutputToken / r.sum.Energy.Joules
		}
		for k, part := range energyParts {
			values[k] = append(values[k], r.sum.Energy.JoulesBy[part]*per)
		}
		names = append(names, r.sum.Design)
	}
	p, err := reports.StackedBars(title("Energy per output token, by component", sc), "energy per output token (J)", names, energyParts, values)
	var words []string
	for i, name := range names {
		words = append(words, fmt.Sprintf("%s %.2f J (%.2f of it the accelerators')", name, designs[i].sum.Energy.JoulesPerOutputToken, values[0][i]))
	}
	return "energy", "The run's energy per output token, per design, by component: each GPU idle all run and active while busy, the FPGA card idle and active, the drives idle and active, the host's cores for the store's core-seconds, host DRAM and the links per bit moved (docs/hostcpu.md gives every power figure's source): " +
		joinWords(words) + ".", p, err
}

// perResumedTurn is a run's figure per resumed turn (0 without one).
func perResumedTurn(s *reports.Summary, v float64) float64 {
	if s.ResumedTurns == 0 {
		return 0
	}
	return v / float64(s.ResumedTurns)
}

// hostCoreSPerResumedTurn is the host core-seconds of a run's store work
// per resumed turn.
func hostCoreSPerResumedTurn(s *reports.Summary) float64 {
	return perResumedTurn(s, s.Host.CPUCoreS)
}

// hostDRAMGBPerResumedTurn is the host-memory traffic of a run's store
// work (read and written) per resumed turn, in GB.
func hostDRAMGBPerResumedTurn(s *reports.Summary) float64 {
	return perResumedTurn(s, float64(s.Host.DRAMReadBytes+s.Host.DRAMWriteBytes)/1e9)
}

// hostLoadSeries is a metric of each storing design at every host load:
// its mean over the seeds, with their least and greatest.
func (st *study) hostLoadSeries(metric func(*reports.Summary) float64) []reports.Series {
	var series []reports.Series
	for d, row := range st.plan.hostLoads {
		s := reports.Series{Name: studyDesigns[d+1], X: studyHostLoads}
		for _, seeds := range row {
			v := st.spread(seeds, metric)
			s.Y, s.Min, s.Max = append(s.Y, v.Mean), append(s.Min, v.Min), append(s.Max, v.Max)
		}
		series = append(series, s)
	}
	return series
}

// hostLoadPanels are the busy-host axis: each storing design's
// resumed-turn TTFT p50, host core-seconds and host-memory traffic per
// resumed turn against the host's load.
func (st *study) hostLoadPanels(sc string) ([]*reports.Chart, error) {
	var plots []*reports.Chart
	for i, m := range []struct {
		what, label string
		f           func(*reports.Summary) float64
	}{
		{"Resumed-turn TTFT p50 against the host's load (storing designs)", "resumed-turn TTFT p50 (ms)", resumedP50},
		{"Host core-seconds per resumed turn", "host core-s per resumed turn", hostCoreSPerResumedTurn},
		{"Host memory traffic (read and written) per resumed turn", "host DRAM per resumed turn (GB)", hostDRAMGBPerResumedTurn},
	} {
		what := m.what
		if i == 0 {
			what = title(what, sc)
		}
		p, err := reports.LinePlot(what, "host load (cpu.background: other work's share of the host)", m.label, st.hostLoadSeries(m.f))
		if err != nil {
			return nil, err
		}
		p.Y.Min = 0
		plots = append(plots, p)
	}
	return plots, nil
}

// hostLoadCaption says what the busy-host axis shows, from its figures:
// each storing design's resumed-turn TTFT p50 at the lightest and the
// heaviest host load.
func (st *study) hostLoadCaption() string {
	top := len(studyHostLoads) - 1
	var words []string
	for d, row := range st.plan.hostLoads {
		words = append(words, fmt.Sprintf("%s %s ms at %g and %s at %g", studyDesigns[d+1], spreadCell(st.spread(row[0], resumedP50), "%.0f"), studyHostLoads[0],
			spreadCell(st.spread(row[top], resumedP50), "%.0f"), studyHostLoads[top]))
	}
	return fmt.Sprintf("The designs that store KV at the scenario's load on a host whose other work takes a share of its cores and memory bandwidth (cpu.background: a core's job takes 1/(1 - share) as long, host memory runs at (1 - share) of its rate; the card's path slows only through its own use of host memory): the resumed-turn TTFT p50, and the host core-seconds and host-memory bytes of the store's work (offloads, exports and imports) per resumed turn; the mean%s with bars from their least to their greatest. Resumed-turn TTFT p50: %s.",
		st.seedsWords(), joinWords(words))
}
