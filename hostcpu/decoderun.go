package hostcpu

// decodeRuns lets one event stand for a run of decode steps (issue 41:
// most of a lightly loaded node's events were its decode steps, one per
// output token). Between two steps whose batch only decodes, and with
// nothing waiting to come in, the scheduler would form the next step from
// the same requests, each a token further on, allocating blocks from those
// free; so the executor prices and counts the steps in a row
// (accel.Executor.RunDecodes) and the scheduler applies them at the run's
// end. Anything that would change the next step (a request enqueued, a
// preempted one's KV out or back in, a layer-wise load landed) kicks the
// node, and the kick cuts the run at the first step whose end has not had
// its turn (accel.Executor.Cut; iteration ends keep their place at a tie
// by sim.TaggedKey): the scheduler looks at its batch there, as it would
// have. Every time, count and byte is the step-by-step run's; only the
// events are fewer (hostcpu.Config.StepByStep turns the runs off, for the
// tests that hold the two equal).
type decodeRuns struct{ s *System }

// maxRunSteps bounds a run: the steps after a cut are priced for nothing,
// so a run stops every few dozen steps when something keeps cutting it.
const maxRunSteps = 64

// steps is how many decode steps the iteration just built on node n
// stands for: 1 unless the batch is all decodes of requests with no load,
// prefill or move under way, the node's queues are empty, and the blocks
// the steps grow into are free without evicting; then up to the step
// that ends the first of its requests, or maxRunSteps.
func (d decodeRuns) steps(n *nodeState) int {
	s := d.s
	if n.runner == nil || s.cfg.StepByStep || s.fn != nil || s.eng.Trace().Enabled() ||
		len(n.members) != len(n.running) || n.waiting.Len() > 0 || n.resumable.Len() > 0 {
		return 1
	}
	steps := int64(maxRunSteps)
	for _, m := range n.members {
		r := s.reqs.At(m.slot)
		if m.chunk > 0 || r.moving || (r.load != loadNone && r.load != loadApplied) {
			return 1
		}
		steps = min(steps, r.outputLeft)
	}
	for steps > 1 && d.extraBlocks(n, steps) > n.KV.Free() {
		steps /= 2
	}
	return int(max(steps, 1))
}

// extraBlocks is how many more blocks the batch's requests hold once each
// has the KV of steps more tokens.
func (d decodeRuns) extraBlocks(n *nodeState, steps int64) int64 {
	var extra int64
	for _, m := range n.members {
		r := d.s.reqs.At(m.slot)
		extra += n.KV.Extra(r.sess.id, r.context+steps)
	}
	return extra
}

// cut ends node n's decode run at the first step whose end has not had
// its turn, taking back the steps after it.
func (d decodeRuns) cut(n *nodeState) {
	if n.steps <= 1 {
		return
	}
	back, end := n.runner.Cut(d.s.eng.Now())
	if back == 0 {
		return
	}
	n.steps -= back
	n.iterCost -= n.iterEnd - end // the run's start stays
	n.iterEnd = end
	d.s.counts.addIterations(-back, len(n.members))
}

// reserve gives node n's batch, at the end of a run, the blocks its last
// step took (the first step's came with the iteration's scheduling; the
// run's steps found the rest free).
func (d decodeRuns) reserve(n *nodeState) {
	if n.steps <= 1 {
		return
	}
	s := d.s
	for _, m := range n.members {
		r := s.reqs.At(m.slot)
		if need := r.context + int64(n.steps); need > r.blockTokens {
			s.pages.reserve(n, r, need)
		}
	}
}
