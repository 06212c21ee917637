package hostcpu

import (
	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/internal/names"
	"github.com/kvcosim/kvcosim/sim"
)

// nodeState is one node's scheduler: requests waiting for admission, the
// running batch, and the sessions whose KV the accelerator holds.
type nodeState struct {
	Node
	index   int
	cpu     *sim.Server
	waiting sim.FIFO[int]
	// resumable are the preempted requests whose KV has been dropped or
	// has left the device, let in again before any waiting one
	resumable sim.FIFO[int]
	// cached are the preempted requests (recompute) whose blocks still
	// hold their KV, the longest preempted first: the next to be taken
	cached    []int
	running   []int
	members   []member        // the running iteration's work, per request
	it        accel.Iteration // the slices build reuses
	iterating bool
	// steps: the decode steps the running iteration stands for (1, or a
	// decode run's; decoderun.go); runner: the executor's runs (nil when
	// it has none)
	steps  int
	runner DecodeRunner
	// scheduling: the pager is forming the next iteration
	scheduling bool
	residents  residents
	// iterCost and iterEnd are the running iteration's compute and when
	// the accelerator ends it; loadWait: it ended, held for a layer-wise
	// load still moving
	iterCost, iterEnd sim.Time
	loadWait          bool
	// staged is the KV the open loop's prefetches hold in the node's host
	// memory (prefetcher.hold)
	staged int64
	// preloadBytes are in the read buffer or on their way; preloading: a
	// pre-load is moving (one at a time)
	preloadBytes int64
	preloading   bool
}

// member is a request's part of an iteration: a prefill chunk or a decode.
type member struct {
	slot  int
	chunk int64 // prefill tokens; 0 for a decode step
}

// enqueue puts a request in line for admission on its node.
func (s *System) enqueue(slot int) {
	r := s.reqs.At(slot)
	r.stageStart = s.eng.Now()
	n := s.nodes[r.node]
	n.waiting.Push(slot)
	s.kick(n)
}

// kick starts the next iteration if the accelerator is idle.
func (s *System) kick(n *nodeState) {
	if n.iterating {
		s.runs.cut(n) // what changed is looked at when the step running ends
		return
	}
	s.pages.schedule(n)
	if len(n.members) == 0 || s.failure != nil {
		return // nothing to run, or the run has failed
	}
	n.iterating = true
	done := sim.Event{Handler: s, Op: opIteration, Arg: int64(n.index)}
	if n.steps = s.runs.steps(n); n.steps > 1 {
		n.iterEnd = n.runner.RunDecodes(n.it, n.steps, done)
		n.iterCost = n.iterEnd - s.eng.Now()
	} else {
		n.iterCost = n.Exec.Run(n.it, done).Total
		n.iterEnd = s.eng.Now() + n.iterCost
	}
	s.counts.addIterations(n.steps, len(n.members))
}

// addIterations counts steps iterations of batch sequences each
// (negative: takes them back).
func (c *Counts) addIterations(steps, batch int) {
	c.Iterations += int64(steps)
	c.IterationSequences += int64(steps * batch)
}

// computeLastToken leaves the last prompt token to be computed when the
// KV at hand covers the whole prompt: the first logits need it. As vLLM
// caps a prefix hit at the prompt less one token, the tokens past that
// come off the reused ones, then the resident ones, so that reused,
// resident and computed tokens add up to the prompt (until 2026-11-27 a
// full hit counted the last token both reused and computed).
func computeLastToken(rec *Record) {
	over := rec.ReusedTokens + rec.ResidentTokens - (rec.PromptTokens - 1)
	if over <= 0 {
		return
	}
	fromReused := min(over, rec.ReusedTokens)
	rec.ReusedTokens -= fromReused
	rec.ResidentTokens -= over - fromReused
}

// RejectReason is why a request was refused: it never runs, and its
// session ends with it.
type RejectReason int

const (
	// RejectContextWindow: its prompt and output pass the model's context
	// window and workload.context_policy is reject (or no prompt token
	// would be left after a truncation).
	RejectContextWindow RejectReason = iota
	// RejectKVMemory: its prompt and output need more blocks than the
	// device's KV memory holds: it could not run even alone.
	RejectKVMemory
)

// rejectReasons is how many reasons there are: the last one's value + 1.
const rejectReasons = int(RejectKVMemory) + 1

// RejectReasons names the values of RejectReason, as summary.json's
// requests_rejected_by_reason keys them.
var RejectReasons = names.New("reject reason", map[RejectReason]string{
	RejectContextWindow: "context_window",
	RejectKVMemory:      "kv_memory",
})

// String returns the reason's name.
func (r RejectReason) String() string { return RejectReasons.Name(r) }

// reject drops a request that can never run, counting it under why.
func (s *System) reject(slot int, why RejectReason) {
	s.keep(s.reqs.At(slot), -1)
	r := s.reqs.Take(slot)
	s.rejected[why]++
	s.records[r.record] = r.rec
	r.sess.running, r.sess.dropped = false, true
	s.preloads.settlePreload(r.sess)
	s.release(r.sess)
	s.fetch.advance(s.nodes[r.node]) // the queue's head may have moved
	s.preloads.waitingChanged()
}

// evictIdle drops the least recently used idle session from the node's
// accelerator; with a store and write-back, its KV is exported first.
func (s *System) evictIdle(n *nodeState) bool {
	victim := n.residents.lruIdle()
	if victim == nil {
		return false
	}
	s.evict(n, victim)
	return true
}

// evict releases a session's device KV on node n.
func (s *System) evict(n *nodeState, sess *session) {
	n.KV.Release(sess.id)
	n.residents.remove(sess.id)
	sess.resident = -1
	s.counts.DeviceEvictions++
	if s.cfg.Export == OnEvict {
		s.export.startExport(sess, n.index, sess.lastRecord)
	}
}

// build forms the next iteration: one decode step for every request past
// its prefill, then prefill chunks in admission order within the token
// budget. The iteration's slices are the node's, reused by the next build.
func (s *System) build(n *nodeState) accel.Iteration {
	it := accel.Iteration{Prefills: n.it.Prefills[:0], Decodes: n.it.Decodes[:0]}
	n.members = n.members[:0]
	for _, slot := range n.running {
		r := s.reqs.At(slot)
		if r.prefillLeft == 0 && r.outputLeft > 0 && len(n.members) < s.cfg.MaxBatch && !r.moving {
			it.Decodes = append(it.Decodes, r.context)
			n.members = append(n.members, member{slot: slot})
		}
	}
	budget := s.cfg.TokenBudget - int64(len(it.Decodes))
	for _, slot := range n.running {
		r := s.reqs.At(slot)
		if r.prefillLeft == 0 || budget == 0 || len(n.members) == s.cfg.MaxBatch || s.loads.sitsOut(r) || r.moving {
			continue
		}
		chunk := s.cfg.Engine.chunk(r.prefillLeft, budget)
		if chunk == 0 {
			continue // a whole prefill waits for a budget with room for it
		}
		budget -= chunk
		it.Prefills = append(it.Prefills, accel.Chunk{New: chunk, Cached: r.context, Last: chunk == r.prefillLeft})
		n.members = append(n.members, member{slot: slot, chunk: chunk})
	}
	n.it = it
	return it
}

// iterationDone applies an iteration to its requests and finishes those
// that generated their last token.
func (s *System) iterationDone(n *nodeState) {
	if s.loads.holdForLoads(n) {
		return
	}
	now := s.eng.Now()
	n.iterating = false
	s.runs.reserve(n)
	for _, m := range n.members {
		r := s.reqs.At(m.slot)
		if s.fn != nil {
			s.fn.runMember(r, m.chunk)
		}
		if m.chunk > 0 {
			r.context += m.chunk
			r.prefillLeft -= m.chunk
			if r.prefillLeft > 0 {
				continue
			}
			if r.rec.TTFT == 0 { // not a preempted request's prefill again
				r.firstToken = now // the last chunk's logits give the first token
				s.span(n.index, PartAccel, TaskPrefill, "", r.sess.id, r.rec.Turn, r.admitted, 0)
				r.rec.Prefill = now - r.admitted
				r.rec.TTFT = now - r.rec.Arrival
			}
		} else {
			r.context += int64(n.steps)
		}
		r.outputLeft -= int64(n.steps)
		if r.outputLeft == 0 {
			s.finish(n, m.slot)
		}
	}
	kept := n.running[:0]
	for _, slot := range n.running {
		if s.reqs.At(slot).outputLeft > 0 {
			kept = append(kept, slot)
		}
	}
	n.running = kept
	s.kick(n)
}

// finish ends a turn: the record is complete, the session's history grows
// and its KV stays resident (evictable), or leaves the device with
// DropAfterTurn; with write-through it is exported now; the session's next
// turn comes after its gap.
func (s *System) finish(n *nodeState, slot int) {
	now := s.eng.Now()
	r := s.reqs.At(slot)
	sess := r.sess
	turn := sess.plan.Turns[sess.turn]
	r.rec.Decode = now - r.firstToken
	s.span(n.index, PartAccel, TaskDecode, "", sess.id, r.rec.Turn, r.firstToken, 0)
	r.rec.E2E = now - r.rec.Arrival
	if r.rec.OutputTokens > 1 {
		r.rec.TPOT = r.rec.Decode / sim.Time(r.rec.OutputTokens-1)
	}
	r.rec.Done = true
	s.records[r.record] = r.rec
	output := turn.Output
	if s.fn != nil {
		output = s.fn.finishGeneration(r)
	}
	sess.grow(r.prompt, r.promptLen, turn.OutputCount, s.keys.outputIDs(sess, r.promptLen, output, turn.OutputCount))
	sess.resident, sess.lastUse, sess.lastNode, sess.lastRecord = n.index, now, n.index, r.record
	sess.running = false
	n.residents.add(sess)
	sess.turn++
	record := r.record
	s.reqs.Take(slot) // r is not to be used from here on
	if s.cfg.Export == AfterTurn {
		s.export.startExport(sess, n.index, record)
	}
	if s.cfg.DropAfterTurn {
		s.evict(n, sess) // accelerator.retain: off, the papers' baseline
	}
	s.release(sess) // closed loop: unless an export is in flight
	if sess.turn < len(sess.plan.Turns) && s.closed == nil {
		next := sess.plan.Turns[sess.turn]
		at := now + next.Gap
		if sess.plan.Timed {
			at = max(now, next.Arrival)
		}
		s.eng.Schedule(at, sim.Event{Handler: s, Op: opTurn, Arg: sess.index})
	}
}
