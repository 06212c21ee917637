package accel

import (
	"fmt"
	"slices"

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
	run         decodeRun
	// tag keys the iterations' ends (sim.TaggedKey): at a tie they come
	// before the other events and in the executors' order, so that a
	// decode run's one event falls where its last step's would have
	tag uint64
}

// decodeRun is a run of decode steps in flight (RunDecodes): the step's
// contexts, when each step ends, the batch's tokens a step, whom to tell at
// the end, and the generation that tells the wake-up in force from those a
// Cut left stale.
type decodeRun struct {
	contexts []int64
	ends     []sim.Time
	tokens   int64
	done     sim.Event
	gen      int32
}

// NewExecutor validates the limits.
func NewExecutor(eng *sim.Engine, name string, node *Node, maxBatch int, tokenBudget int64) (*Executor, error) {
	if maxBatch < 1 || tokenBudget < 1 {
		return nil, fmt.Errorf("accelerator %q: max_batch = %d and token_budget = %d must be at least 1", name, maxBatch, tokenBudget)
	}
	return &Executor{eng: eng, node: node, name: name, maxBatch: maxBatch, tokenBudget: tokenBudget,
		shapes: newShapeCosts(maxBatch, tokenBudget), tag: eng.NewTag()}, nil
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
	x.mayStart(seqs, tokens)
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
		x.schedule(x.busyUntil, done)
	}
	return c
}

// mayStart panics unless an iteration of seqs sequences and tokens tokens
// may start now: the last one has ended and it is within the limits (a
// scheduler bug otherwise).
func (x *Executor) mayStart(seqs int, tokens int64) {
	switch now := x.eng.Now(); {
	case x.Busy():
		panic(fmt.Sprintf("accel %s at %v: an iteration started before the last one ended at %v", x.name, now, x.busyUntil))
	case seqs == 0 || seqs > x.maxBatch || tokens > x.tokenBudget:
		panic(fmt.Sprintf("accel %s at %v: iteration of %d sequences and %d tokens breaks the limits %d / %d",
			x.name, now, seqs, tokens, x.maxBatch, x.tokenBudget))
	}
}

// RunDecodes starts steps consecutive decode-only iterations now, the
// first it and each later one with every context a token longer (what the
// scheduler hands over step by step while its batch stays the same), and
// raises done once, at the last one's end, which it returns. Each step is
// priced, counted and kept busy exactly as Run would, so one event stands
// for steps iterations with the same times and totals (issue 41); Cut ends
// the run sooner. Prefill chunks in it, or running while busy, are
// scheduler bugs and panic.
func (x *Executor) RunDecodes(it Iteration, steps int, done sim.Event) sim.Time {
	if len(it.Prefills) > 0 {
		panic(fmt.Sprintf("accel %s at %v: a decode run with %d prefill chunks", x.name, x.eng.Now(), len(it.Prefills)))
	}
	seqs, tokens := len(it.Decodes), int64(len(it.Decodes)) // a decode's token each
	x.mayStart(seqs, tokens)
	r := &x.run
	r.contexts = append(r.contexts[:0], it.Decodes...)
	step := Iteration{Decodes: r.contexts}
	r.ends, r.tokens, r.done = r.ends[:0], tokens, done
	end := x.eng.Now()
	price := newDecodeSteps(x.node, x.shapes, seqs)
	for range steps {
		took := price.total(step.Decodes)
		x.busy += took
		end += took
		r.ends = append(r.ends, end)
		for i := range step.Decodes {
			step.Decodes[i]++
		}
	}
	x.iterations += int64(steps)
	x.tokens += int64(steps) * tokens
	x.busyUntil = end
	x.wake(end)
	return end
}

// wake raises the run's done at end, after the wake-ups before it.
func (x *Executor) wake(end sim.Time) {
	x.run.gen++
	x.schedule(end, sim.Event{Handler: x, Op: x.run.gen})
}

// schedule raises ev at t, keyed by the executor's tag (sim.TaggedKey),
// or, where that key has passed (an iteration that takes no time), after
// the event being handled.
func (x *Executor) schedule(t sim.Time, ev sim.Event) {
	if k := sim.TaggedKey(t, x.tag); !x.eng.Precedes(k) {
		x.eng.ScheduleAt(k, ev)
		return
	}
	x.eng.Schedule(t, ev)
}

// Handle takes the wake-up of a decode run and raises its done; a wake-up
// a Cut made stale does nothing.
func (x *Executor) Handle(ev sim.Event) {
	if ev.Op != x.run.gen {
		return
	}
	x.run.ends = x.run.ends[:0]
	x.run.done.Handler.Handle(x.run.done)
}

// Cut ends the decode run in flight at its first step to end at or after
// at that has not had its turn, as if the scheduler had looked at its
// batch again there: the steps after it are taken back (their busy time
// and counts) and done comes at that step's end. A step that ends at the
// time of the event being handled has had its turn before it (iteration
// ends come first at a tie, in their executors' order: sim.TaggedKey),
// unless that event is another executor's iteration end tagged before
// this one. It returns how many steps it took back (0 without a run or
// when the last step is the first to end by at) and when the run ends.
func (x *Executor) Cut(at sim.Time) (back int, end sim.Time) {
	ends := x.run.ends
	keep, _ := slices.BinarySearch(ends, at)
	if keep < len(ends) && x.eng.Precedes(sim.TaggedKey(ends[keep], x.tag)) {
		keep++
	}
	if keep >= len(ends)-1 {
		return 0, x.busyUntil
	}
	cut := len(ends) - 1 - keep
	x.busy -= ends[len(ends)-1] - ends[keep]
	x.iterations -= int64(cut)
	x.tokens -= int64(cut) * x.run.tokens
	x.run.ends = ends[:keep+1]
	x.busyUntil = ends[keep]
	x.wake(ends[keep])
	return cut, x.busyUntil
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
