package hostcpu

import (
	"fmt"
	"strconv"

	"github.com/kvcosim/kvcosim/hostcpu/store"

	"github.com/kvcosim/kvcosim/sim"
)

// The parts of a node that a request's stages run on, as span parts (and
// components, "node0.cpu"): reports draw a session's timeline from them,
// and a trace viewer gives each its own thread.
const (
	PartCPU     = store.PartCPU
	PartFPGA    = store.PartFPGA
	PartStorage = "storage"
	PartAccel   = "accelerator"
)

// The stages of a request, as span tasks; a decision's stage is its
// claim-2 outcome.
const (
	TaskDecide  = "decide"
	TaskQuery   = "query"
	TaskImport  = "import"
	TaskQueue   = "queue"
	TaskPrefill = "prefill"
	TaskDecode  = "decode"
	TaskExport  = "export"
)

// span emits one stage of a request of session sess, turn turn, on a part
// of node n, from start to now, with more attributes as key, value pairs.
// With no trace sink it costs one check.
func (s *System) span(n int, part, task, stage string, sess int64, turn int, start sim.Time, bytes int64, kv ...string) {
	emitStage(s.eng.Trace(), n, part, task, stage, sess, turn, start, s.eng.Now(), bytes, kv...)
}

// emitStage emits on tr a stage span that ended at end.
func emitStage(tr *sim.Tracer, n int, part, task, stage string, sess int64, turn int, start, end sim.Time, bytes int64, kv ...string) {
	if !tr.Enabled() {
		return
	}
	attrs := []sim.Attr{{Key: "turn", Value: strconv.Itoa(turn)}}
	for i := 0; i+1 < len(kv); i += 2 {
		attrs = append(attrs, sim.Attr{Key: kv[i], Value: kv[i+1]})
	}
	op := task
	if stage != "" {
		op += "/" + stage
	}
	tr.Emit(sim.Span{Component: fmt.Sprintf("node%d.%s", n, part), Operation: op, ID: sess, Start: start, End: end,
		Bytes: bytes, Part: part, Node: n, Task: task, Stage: stage, Attrs: attrs})
}
