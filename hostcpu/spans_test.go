package hostcpu

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvcosim/kvcosim/sim"
)

// spanSink keeps every span.
type spanSink struct{ spans []sim.Span }

func (k *spanSink) Span(s sim.Span) { k.spans = append(k.spans, s) }

// TestSpansFollowEachStage: every request of a traced run leaves one span
// per stage it went through, on its part of its node: a resumed turn
// that hit its store a decision, a query on the store's part marked hit,
// an import, its queue, prefill and decode, and its export.
func TestSpansFollowEachStage(t *testing.T) {
	for _, design := range []string{"cpu", "fpga"} {
		t.Run(design, func(t *testing.T) {
			cfg := rigConfig(t, design)
			cfg.DropAfterTurn = true
			r := newRig(t, rigSpec{cfg: cfg, kvTokens: 4096, sessions: chats(1, 2, 100, 50, false)})
			sink := &spanSink{}
			r.eng.Trace().AddSink(sink)
			r.run(t)
			var resumed []string
			for _, sp := range sink.spans {
				if sp.Part == "fpga" && sp.Task != TaskQuery && sp.Task != TaskExport {
					continue // the engine's own stages
				}
				if sp.Attr("turn") == "1" {
					resumed = append(resumed, sp.Part+":"+sp.Operation)
					assert.Equal(t, "node0."+sp.Part, sp.Component)
					assert.LessOrEqual(t, sp.Start, sp.End)
				}
				if sp.Task == TaskQuery && sp.Attr("turn") == "1" {
					assert.Equal(t, "true", sp.Attr("hit"))
				}
			}
			part := PartCPU
			if cfg.Design.Card {
				part = PartFPGA
			}
			assert.Equal(t, []string{"cpu:decide/query", part + ":query", "storage:import", "accelerator:queue", "accelerator:prefill",
				"accelerator:decode", part + ":export"}, resumed)
		})
	}
}
