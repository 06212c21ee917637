package hostcpu

import (
	"fmt"
	"strconv"

	"github.com/kvcosim/kvcosim/hostcpu/store"
	"github.com/kvcosim/kvcosim/internal/names"
	"github.com/kvcosim/kvcosim/sim"
)

// KVAlloc is when the scheduler takes a request's device KV blocks.
type KVAlloc int

const (
	// AllocReserve takes blocks for the whole prompt and output when it
	// admits a request, so that nothing is ever preempted (kvcosim until
	// 2026-11-27).
	AllocReserve KVAlloc = iota
	// AllocIncremental takes blocks as prefill chunks and decode steps
	// need them and preempts a running request when a step finds none
	// free (vLLM v1's KVCacheManager.allocate_slots).
	AllocIncremental
)

// KVAllocs names the values of KVAlloc (accelerator.kv_alloc).
var KVAllocs = names.New("kv allocation", map[KVAlloc]string{
	AllocReserve:     "reserve",
	AllocIncremental: "incremental",
})

// String returns the allocation's name.
func (a KVAlloc) String() string { return KVAllocs.Name(a) }

// Preemption is what becomes of a preempted request's KV.
type Preemption int

const (
	// PreemptRecompute frees its blocks but leaves its KV in them until
	// they are taken (vLLM v1's only mode, whose prefix cache keeps a freed
	// block's contents until the block is reused); what was taken it
	// prefills again when it resumes.
	PreemptRecompute Preemption = iota
	// PreemptSwap copies its blocks to host memory over the accelerator's
	// link and back when it resumes (vLLM v0's swap mode).
	PreemptSwap
	// PreemptStore hands its blocks to the design's store by its export
	// path (Store.Offload) and brings them back by the reverse of it; a
	// design without a store recomputes instead.
	PreemptStore
)

// Preemptions names the values of Preemption (accelerator.preemption).
var Preemptions = names.New("preemption", map[Preemption]string{
	PreemptRecompute: "recompute",
	PreemptSwap:      "swap",
	PreemptStore:     "store",
})

// String returns the mode's name.
func (p Preemption) String() string { return Preemptions.Name(p) }

// Engine is the serving engine's scheduling policy: how it allocates
// device KV memory, what it does with a preempted request, and how it
// chunks prefills. Its zero value is kvcosim's engine before 2026-11-27.
type Engine struct {
	KVAlloc    KVAlloc
	Preemption Preemption
	// WholePrefill: a prompt's prefill runs in one iteration, when the
	// token budget has room for all of it (vLLM's
	// enable_chunked_prefill=False); otherwise it is cut into chunks.
	WholePrefill bool
	// PrefillChunkTokens caps one request's prefill chunk per iteration
	// (vLLM's long_prefill_token_threshold); 0: the token budget alone.
	PrefillChunkTokens int64
}

// chunk is the prefill chunk a request with left prompt tokens to compute
// gets from budget tokens, or 0 when it must wait.
func (e Engine) chunk(left, budget int64) int64 {
	c := min(left, budget)
	if e.PrefillChunkTokens > 0 {
		c = min(c, e.PrefillChunkTokens)
	}
	if e.WholePrefill && c < left {
		return 0
	}
	return c
}

// The engine's spans: a preemption (its stage the mode) on the
// accelerator, from the step that preempted the request until its KV has
// left (at once when recomputed), and a resumption's move back.
const (
	TaskPreempt = "preempt"
	TaskResume  = "resume"
)

// pager is the scheduler's admission and device KV allocation: whole
// requests at admission (accelerator.kv_alloc: reserve), or blocks as the
// iterations need them with preemption (incremental).
type pager struct{ s *System }

// schedule admits requests and forms the node's next iteration.
func (p pager) schedule(n *nodeState) {
	s := p.s
	n.scheduling = true
	defer func() { n.scheduling = false }()
	if s.cfg.Engine.KVAlloc == AllocReserve {
		p.admitWhole(n)
		s.build(n)
		return
	}
	// vLLM v1's order: the running requests get their blocks first,
	// preempting from the most recently admitted; new requests come in
	// only in a step that preempted none.
	preempted := false
	s.build(n)
	for !p.allocate(n) {
		preempted = true
		s.build(n)
	}
	if !preempted && p.admitIncremental(n) > 0 {
		s.build(n)
		if !p.allocate(n) {
			s.check(fmt.Errorf("hostcpu: at %v: node %d: a request admitted with its first chunk's blocks lacked them in its first iteration", s.eng.Now(), n.index))
		}
	}
}

// admitWhole moves waiting requests into the batch, first come first
// served, while the batch has room and device KV memory has blocks for the
// whole request (prompt and output), evicting idle sessions to make room.
func (p pager) admitWhole(n *nodeState) {
	s := p.s
	for n.waiting.Len() > 0 && len(n.running) < s.cfg.MaxBatch {
		slot := n.waiting.Peek()
		r := s.reqs.At(slot)
		if p.tooLarge(n, slot) {
			continue
		}
		tokens := p.admissionTokens(r)
		if !p.makeRoom(n, r.sess.id, tokens) {
			return // wait for running requests to finish
		}
		p.reserve(n, r, tokens)
		n.waiting.Pop()
		p.start(n, slot)
	}
}

// tooLarge rejects the request at the head of the node's queue if its
// prompt and output need more blocks than the device's KV memory holds:
// it could never run, even alone.
func (p pager) tooLarge(n *nodeState, slot int) bool {
	r := p.s.reqs.At(slot)
	if n.KV.BlocksFor(r.rec.PromptTokens+r.rec.OutputTokens) <= n.KV.Total() {
		return false
	}
	n.waiting.Pop()
	p.s.reject(slot, RejectKVMemory)
	return true
}

// makeRoom evicts idle sessions, least recently used first, then the KV
// that preempted requests left cached, the longest preempted first, until
// session id's tokens fit; false if they do not.
func (p pager) makeRoom(n *nodeState, id, tokens int64) bool {
	for n.KV.Extra(id, tokens) > n.KV.Free() {
		if !p.s.evictIdle(n) && !p.dropCached(n, id) {
			return false
		}
	}
	return true
}

// dropCached frees the blocks of the request preempted longest ago whose
// KV is still cached in them (not session id's): it will prefill all of
// it again. False if there is none.
func (p pager) dropCached(n *nodeState, id int64) bool {
	for i, slot := range n.cached {
		r := p.s.reqs.At(slot)
		if r.sess.id == id {
			continue
		}
		n.cached = append(n.cached[:i], n.cached[i+1:]...)
		n.KV.Release(r.sess.id)
		p.recompute(r)
		return true
	}
	return false
}

// recompute drops a preempted request's KV: when let in again it
// prefills its prompt and the outputs so far (the KV it had, and the last
// token sampled, whose KV a decode step would have computed).
func (p pager) recompute(r *request) {
	s := p.s
	s.counts.PreemptedTokensRecomputed += r.context
	r.rec.RecomputedTokens += r.context
	if r.prefillLeft == 0 {
		r.prefillLeft = 1
	}
	r.prefillLeft += r.context
	r.context, r.blockTokens = 0, 0
}

// uncache takes a request let in again off the cached list: it keeps its
// KV.
func (n *nodeState) uncache(slot int) {
	for i, c := range n.cached {
		if c == slot {
			n.cached = append(n.cached[:i], n.cached[i+1:]...)
			return
		}
	}
}

// reserve grows the request's session to hold tokens (makeRoom has made
// room) and notes how far its blocks reach.
func (p pager) reserve(n *nodeState, r *request, tokens int64) {
	if err := n.KV.Reserve(r.sess.id, tokens); err != nil {
		panic(err) // makeRoom established Extra <= Free
	}
	r.blockTokens = n.KV.BlocksFor(tokens) * n.KV.BlockTokens()
}

// start puts an admitted request in the running batch.
func (p pager) start(n *nodeState, slot int) {
	s := p.s
	r := s.reqs.At(slot)
	s.keep(r, -1)
	n.residents.remove(r.sess.id) // running, not evictable
	now := s.eng.Now()
	r.rec.Queue += now - r.stageStart
	s.span(n.index, PartAccel, TaskQueue, "", r.sess.id, r.rec.Turn, r.stageStart, 0)
	r.admitted = now
	computeLastToken(&r.rec)
	r.context = r.rec.ReusedTokens + r.rec.ResidentTokens
	r.prefillLeft = r.rec.PromptTokens - r.context
	r.rec.ComputedTokens = r.prefillLeft
	r.outputLeft = r.rec.OutputTokens
	n.running = append(n.running, slot)
	n.peakRunning(&s.counts)
	if r.load == loadAwaiting {
		s.loads.startLoad(slot)
	}
	if s.fn != nil {
		s.fn.startGeneration(r)
	}
	s.fetch.advance(n) // the queue's head has moved
	s.preloads.waitingChanged()
}

// MeanBatch is the sequences an iteration ran on average (0 before any).
func (c Counts) MeanBatch() float64 {
	if c.Iterations == 0 {
		return 0
	}
	return float64(c.IterationSequences) / float64(c.Iterations)
}

// peakRunning keeps the most requests the node has run at once.
func (n *nodeState) peakRunning(c *Counts) {
	c.PeakRunning = max(c.PeakRunning, int64(len(n.running)))
}

// admitIncremental lets in the preempted requests, then the waiting ones,
// in order, into the token budget the running requests left this step
// (vLLM v1 admits while its step's budget lasts, each request with the
// chunk it gets), while the batch has room and device KV memory has
// blocks for each one's KV at hand and its chunk (evicting idle sessions
// and cached KV, never preempting); it returns how many it let in.
func (p pager) admitIncremental(n *nodeState) int {
	s := p.s
	budget := s.cfg.TokenBudget - n.it.Tokens()
	in := 0
	for budget > 0 && len(n.running) < s.cfg.MaxBatch && (n.resumable.Len() > 0 || n.waiting.Len() > 0) {
		queue, resuming := &n.waiting, n.resumable.Len() > 0
		if resuming {
			queue = &n.resumable
		} else if p.tooLarge(n, queue.Peek()) {
			continue
		}
		slot := queue.Peek()
		r := s.reqs.At(slot)
		context, left := r.context, r.prefillLeft
		if !resuming {
			computeLastToken(&r.rec)
			context = r.rec.ReusedTokens + r.rec.ResidentTokens
			left = r.rec.PromptTokens - context
		}
		step := int64(1) // a decode's token, or one to hold while its KV comes back
		if left > 0 && !r.away {
			step = s.cfg.Engine.chunk(left, budget)
		}
		if step == 0 || !p.makeRoom(n, r.sess.id, context+step) {
			return in // a whole prefill waits for a budget with room, as the rest behind it
		}
		p.reserve(n, r, context+step)
		queue.Pop()
		if resuming {
			n.uncache(slot)
			p.resume(n, slot)
		} else {
			p.start(n, slot)
		}
		if !r.away && !r.moving {
			budget -= step
		}
		in++
	}
	return in
}

// allocate gives every member of the iteration just built the blocks its
// tokens need, in order. When one finds too few free, idle sessions go
// first (least recently used); if none is left, the most recently admitted
// running request is preempted and allocate returns false: the iteration
// must be built again without it.
func (p pager) allocate(n *nodeState) bool {
	s := p.s
	for _, m := range n.members {
		r := s.reqs.At(m.slot)
		need := r.context + max(m.chunk, 1)
		if need <= r.blockTokens {
			continue
		}
		if p.makeRoom(n, r.sess.id, need) {
			p.reserve(n, r, need)
			continue
		}
		victim := p.victim(n)
		if victim < 0 {
			s.check(fmt.Errorf("hostcpu: at %v: node %d: a step needs %d more KV blocks, %d are free, and no running request can be preempted",
				s.eng.Now(), n.index, n.KV.Extra(r.sess.id, need), n.KV.Free()))
			return true
		}
		if len(n.running) == 1 && n.running[victim] == m.slot {
			// Alone, it would preempt itself and come back to the same
			// blocks held by sessions whose turns wait behind it: nothing
			// would ever free them.
			s.check(fmt.Errorf("hostcpu: at %v: node %d stalled: session %d, running alone, needs %d more KV blocks, %d of %d are free, "+
				"and the sessions holding the rest have turns waiting behind it; give the accelerator more KV memory "+
				"(accelerator.kv_capacity) or run fewer sessions at once (workload.max_concurrency)",
				s.eng.Now(), n.index, r.sess.id, n.KV.Extra(r.sess.id, need), n.KV.Free(), n.KV.Total()))
			return true
		}
		p.preempt(n, victim)
		return false
	}
	return true
}

// victim is the index in the node's running batch of the most recently
// admitted request that can be preempted (not moving its KV in), or -1.
func (p pager) victim(n *nodeState) int {
	for i := len(n.running) - 1; i >= 0; i-- {
		r := p.s.reqs.At(n.running[i])
		if !r.moving && (r.load == loadNone || r.load == loadApplied) {
			return i
		}
	}
	return -1
}

// mode is what a preemption does on this design: store falls back to
// recompute where the design stores nothing.
func (p pager) mode() Preemption {
	m := p.s.cfg.Engine.Preemption
	if m == PreemptStore && !p.s.cfg.Design.Stores {
		return PreemptRecompute
	}
	return m
}

// preempt takes the i-th running request off the batch and frees its
// blocks: recomputed, it waits to be let in again at once; swapped or
// stored, once its KV has left the device.
func (p pager) preempt(n *nodeState, i int) {
	s := p.s
	slot := n.running[i]
	n.running = append(n.running[:i], n.running[i+1:]...)
	r := s.reqs.At(slot)
	if s.fn != nil {
		s.check(fmt.Errorf("hostcpu: at %v: node %d: session %d needs preempting, which functional mode cannot replay (allowed: accelerator.kv_alloc: reserve, or more accelerator.kv_capacity)",
			s.eng.Now(), n.index, r.sess.id))
		return
	}
	r.rec.Preemptions++
	s.counts.Preemptions++
	r.preemptedAt = s.eng.Now()
	bytes := r.context * s.cfg.KVBytesPerToken
	switch mode := p.mode(); mode {
	case PreemptRecompute:
		s.span(n.index, PartAccel, TaskPreempt, mode.String(), r.sess.id, r.rec.Turn, r.preemptedAt, 0, "tokens", strconv.FormatInt(r.context, 10))
		n.cached = append(n.cached, slot)
		n.resumable.Push(slot)
	case PreemptSwap:
		s.counts.PreemptedBytesSwapped += bytes
		p.moveOut(n, r, bytes)
		host{s}.Move(ticket(opPreemptedOut, slot), p.swapOut(n), bytes)
	case PreemptStore:
		s.counts.PreemptedBytesStored += bytes
		p.moveOut(n, r, bytes)
		s.store.Offload(ticket(opPreemptedOut, slot), store.Export{Session: r.sess.id, Node: n.index, Bytes: bytes})
	}
}

// moveOut frees a swapped or stored request's blocks as its KV leaves.
func (p pager) moveOut(n *nodeState, r *request, bytes int64) {
	n.KV.Release(r.sess.id)
	r.blockTokens = 0
	r.rec.PreemptedBytes += bytes
	r.moving, r.away = true, true
}

// swapOut is the way of swapped KV to host memory: the accelerator's link,
// then host memory.
func (p pager) swapOut(n *nodeState) []store.Hop {
	return []store.Hop{{Link: n.FromGPU}, n.Staging(true)}
}

// backIn is the way of a preempted request's KV back into the accelerator:
// swapped, and stored by a store that keeps it in host memory, from host
// memory over the accelerator's link; stored by the card, over its peer
// link from its exchange memory (Store.Offload's way, reversed).
func (p pager) backIn(n *nodeState) []store.Hop {
	if p.mode() == PreemptStore && p.s.cfg.Design.Card {
		if n.P2PToGPU == nil {
			return nil
		}
		return []store.Hop{{Link: n.P2PToGPU}}
	}
	return []store.Hop{n.Staging(false), {Link: n.ToGPU}}
}

// movedOut takes a swapped or stored request's KV having left the device:
// it waits to be let in again.
func (p pager) movedOut(slot int) {
	if r := p.moveEnded(slot, opPreemptedOut, TaskPreempt); r != nil {
		n := p.s.nodes[r.node]
		n.resumable.Push(slot)
		p.s.kick(n)
	}
}

// resume puts a preempted request back in the batch; a swapped or stored
// one sits out until its KV is back.
func (p pager) resume(n *nodeState, slot int) {
	s := p.s
	r := s.reqs.At(slot)
	n.running = append(n.running, slot)
	n.peakRunning(&s.counts)
	if !r.away {
		return // its KV stayed, or is recomputed
	}
	r.moving, r.away, r.preemptedAt = true, false, s.eng.Now()
	host{s}.Move(ticket(opPreemptedIn, slot), p.backIn(n), r.context*s.cfg.KVBytesPerToken)
}

// movedIn takes a preempted request's KV being back: it runs again.
func (p pager) movedIn(slot int) {
	if r := p.moveEnded(slot, opPreemptedIn, TaskResume); r != nil {
		p.s.kick(p.s.nodes[r.node])
	}
}

// moveEnded ends a preempted request's move out or back in (op), its span
// traced as task, and returns the request; nil where the move is taken up
// again after the events due now (later).
func (p pager) moveEnded(slot int, op int32, task string) *request {
	s := p.s
	r := s.reqs.At(slot)
	if p.later(r, op, slot) {
		return nil
	}
	r.moving = false
	s.span(r.node, PartAccel, task, p.mode().String(), r.sess.id, r.rec.Turn, r.preemptedAt, r.context*s.cfg.KVBytesPerToken,
		"tokens", strconv.FormatInt(r.context, 10))
	return r
}

// later raises op again after the events due now when a move ended
// within the scheduling of its node's iteration (a store that moves
// nothing ends its ticket at once), which must not start another.
func (p pager) later(r *request, op int32, slot int) bool {
	if !p.s.nodes[r.node].scheduling {
		return false
	}
	p.s.eng.Schedule(p.s.eng.Now(), sim.Event{Handler: p.s, Op: op, Arg: int64(slot)})
	return true
}

// admissionTokens are the tokens a waiting request needs blocks for to be
// let in: its whole prompt and output (reserve), or its KV at hand and a
// first chunk of at most the whole budget (incremental).
func (p pager) admissionTokens(r *request) int64 {
	if p.s.cfg.Engine.KVAlloc == AllocReserve {
		return r.rec.PromptTokens + r.rec.OutputTokens
	}
	context := r.rec.ReusedTokens + r.rec.ResidentTokens
	return context + max(1, min(r.rec.PromptTokens-context, p.s.cfg.TokenBudget))
}
