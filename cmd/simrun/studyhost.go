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
		h, gb := r.sum.Host, func(b int64) string { return fmt.Sprintf("%.3g", float64(b)/1e9) }
		rows = append(rows, []string{r.sum.Design, fmt.Sprintf("%.3g", h.CPUCoreS), gb(h.DRAMReadBytes), gb(h.DRAMWriteBytes),
			fmt.Sprintf("%.1f", h.DRAMPeakGBps), gb(h.PCIeRootBytes), fmt.Sprintf("%.2f", r.sum.Energy.JoulesPerOutputToken),
			fmt.Sprintf("%.2f", r.sum.Cost.USDPerMillionOutputTokens)})
	}
	return rows
}

// hostCaption says what the host table shows, from its figures.
func hostCaption(designs []pointResult) string {
	var words []string
	for _, r := range designs {
		words = append(words, fmt.Sprintf("%s %.3g core-s and %.0f GB through host DRAM", r.sum.Design, r.sum.Host.CPUCoreS,
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
