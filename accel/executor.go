package accel

import (
	"fmt"

	"github.com/kvcosim/kvcosim/sim"
)

// Part names the accelerator's iterations in spans ("node0.accel"), and
// TaskIteration is their task.
const (
	Part          = "accel"
	TaskIteration = "iteration"
)

// Executor runs a node's iterations one at a time as the scheduler hands
// them over (continuous batching: prefill chunks and decode steps together
// within a token budget and a batch size). It prices each with the cost
// model, raises the caller's event at its end, emits a span, and keeps the
// node's utilisation.
type Executor struct {
	eng         *sim.Engine
	node        *Node
	name        string
	maxBatch    int
	tokenBudget int64
	busyUntil   sim.Time
	busy        sim.Time
	iterations  int64
	tokens      int64
	shapes      *shapeCosts
}

// NewExecutor validates the limits.
func NewExecutor(eng *sim.Engine, name string, node *Node, maxBatch int, tokenBudget int64) (*Executor, error) {
	if maxBatch < 1 || tokenBudget < 1 {
		return nil, fmt.Errorf("accelerator %q: max_batch = %d and token_budget = %d must be at least 1", name, maxBatch, tokenBudget)
	}
	return &Executor{eng: eng, node: node, name: name, maxBatch: maxBatch, tokenBudget: tokenBudget,
		shapes: newShapeCosts(maxBatch, tokenBudget)}, nil
}

// Node returns the node.
func (x *Executor) Node() *Node { return x.node }

// Limits returns the batch size and token budget.
func (x *Executor) Limits() (maxBatch int, tokenBudget int64) { return x.maxBatch, x.tokenBudget }

// Busy reports whether an iteration is running.
func (x *Executor) Busy() bool { return x.eng.Now() < x.busyUntil }

// Run starts an iteration now and raises done at its end. Running while
// busy, or beyond the limits, is a scheduler bug and panics.
func (x *Executor) Run(it Iteration, done sim.Event) Cost {
	now := x.eng.Now()
	seqs, tokens := len(it.Prefills)+len(it.Decodes), it.Tokens()
	switch {
	case x.Busy():
		panic(fmt.Sprintf("accel %s at %v: an iteration started before the last one ended at %v", x.name, now, x.busyUntil))
	case seqs == 0 || seqs > x.maxBatch || tokens > x.tokenBudget:
		panic(fmt.Sprintf("accel %s at %v: iteration of %d sequences and %d tokens breaks the limits %d / %d",
			x.name, now, seqs, tokens, x.maxBatch, x.tokenBudget))
	}
	c := x.node.costOf(it, tokens, x.shapes)
	x.busyUntil = now + c.Total
	x.busy += c.Total
	x.iterations++
	x.tokens += tokens
	if tr := x.eng.Trace(); tr.Enabled() {
		tr.Emit(sim.Span{Component: x.name, Operation: TaskIteration, Start: now, End: x.busyUntil, Bytes: int64(c.Bytes),
			Part: Part, Task: TaskIteration,
			Attrs: []sim.Attr{{Key: "tokens", Value: fmt.Sprint(tokens)}, {Key: "sequences", Value: fmt.Sprint(seqs)}}})
	}
	if done.Handler != nil {
		x.eng.Schedule(x.busyUntil, done)
	}
	return c
}

// ExecutorStats are an executor's totals.
type ExecutorStats struct {
	Iterations, Tokens int64
	Busy               sim.Time
}

// Stats returns the totals so far.
func (x *Executor) Stats() ExecutorStats {
	return ExecutorStats{Iterations: x.iterations, Tokens: x.tokens, Busy: x.busy}
}

// Utilisation is the busy fraction of [0, now].
func (x *Executor) Utilisation(now sim.Time) float64 {
	if now <= 0 {
		return 0
	}
	return float64(min(x.busy, now)) / float64(now)
}
