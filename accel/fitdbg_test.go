package accel

import (
	"fmt"
	"math"
	"testing"
)

func TestFitDebug(t *testing.T) {
	fits, engines, err := FitPresets()
	if err != nil {
		t.Fatal(err)
	}
	for hw, f := range fits {
		d := f.Device
		fmt.Printf("sustain %.0f ", d.LinearSustainTokens)
		fmt.Printf("%s lin %.3f half %.0f attn %.3f cached %.3f mem %.3f ar %.3f hop %v | prompt med %.3f p90 %.3f token med %.3f p90 %.3f\n",
			hw, d.LinearEfficiency, d.LinearHalfTokens, d.AttentionEfficiency, d.CachedAttentionEfficiency, d.MemoryEfficiency,
			d.AllReduceEfficiency, d.NVLinkHopLatency, f.PromptMedian, f.PromptP90, f.TokenMedian, f.TokenP90)
	}
	for _, e := range engines {
		fmt.Printf("%s %v %v seq %v overlap %.2f\n", e.Name, e.IterationOverhead, e.LayerLaunch, e.SequenceOverhead, e.Overlap)
	}
	p, _ := parseProfile("x", measuredProfileH100)
	rows, _ := Compare(p, fits["h100-80gb"].Device)
	_ = rows
	for _, g := range GroupErrors(rows) {
		fmt.Printf("%s %d %.1f%% %.1f%%\n", g.Group, g.Points, 100*g.MAPE, 100*g.P90)
	}
}

func TestFitDebugWorst(t *testing.T) {
	fits, engines, _ := FitPresets()
	ms, _ := loadMeasurements()
	model := modelPresets["llama-2-70b"]
	for _, hw := range []string{"h100-80gb", "a100-80gb"} {
		var runs []measurement
		for _, m := range ms {
			if m.model == "llama2-70b" && m.hardware == hw {
				runs = append(runs, m)
			}
		}
		_, held := splitByConfig(runs)
		seen := map[[4]int]bool{}
		for _, x := range held {
			if seen[x.config()] {
				continue
			}
			seen[x.config()] = true
			p, tk := predict(model, fits[hw].Device, x, engines["vllm-v0"])
			if math.Abs(p/x.promptMs-1) > 0.12 || math.Abs(tk/x.tokenMs-1) > 0.12 {
				fmt.Printf("%s tp%d prompt %d batch %d: prompt %.1f vs %.1f (%+.0f%%) token %.2f vs %.2f (%+.0f%%)\n", hw, x.tp, x.prompt, x.batch,
					p, x.promptMs, 100*(p/x.promptMs-1), tk, x.tokenMs, 100*(tk/x.tokenMs-1))
			}
		}
	}
}
