package hostcpu

import (
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
)

// mover carries out the host's transfers: it moves bytes through a path of
// hops and then raises the transfer's ticket at its owner (the System).
type mover struct {
	owner sim.Handler
	// chunk is store.chunk: the piece a transfer of several hops streams
	// in (0: whole extents hop by hop)
	chunk int64
	moves sim.Slots[transfer]
}

// transfer moves bytes through hops and then ends its ticket. A whole
// transfer moves all its bytes through one hop after another; a streamed
// one moves chunks, each hop taking the next chunk as soon as it is free
// and the hop before has passed that chunk on.
type transfer struct {
	hops  []store.Hop
	step  int // whole: the next hop
	bytes int64
	done  store.Ticket
	// streamed: chunk bytes, the chunks in all, and per hop the chunks it
	// has started and finished
	chunk    int64
	chunks   int64
	started  []int64
	finished []int64
}

// The mover's events.
const (
	opStep     = iota // a whole transfer's hop is done
	opStreamed        // a streamed transfer's chunk is done at one hop
)

// streamDepth is how many chunks one hop of a streamed transfer keeps in
// flight, as a DMA engine keeps several descriptors and an NVMe queue
// several commands: one at a time would leave each device idle for its
// latency between chunks.
const streamDepth = 4

// maxHops bounds a transfer's hops: a streamed hop's event carries the
// transfer and the hop in one argument.
const maxHops = 8

// start begins a transfer of bytes through hops: streamed in chunks when
// it has several hops and more than one chunk of bytes, else whole.
func (m *mover) start(done store.Ticket, hops []store.Hop, bytes int64) {
	tr := transfer{hops: hops, bytes: bytes, done: done}
	chunk := m.chunk
	if chunk == 0 || len(hops) < 2 || bytes <= chunk {
		m.step(m.moves.Put(tr))
		return
	}
	if len(hops) > maxHops {
		panic("hostcpu: a transfer of more than 8 hops") // the designs build at most four
	}
	tr.chunk, tr.chunks = chunk, (bytes+chunk-1)/chunk
	tr.started, tr.finished = make([]int64, len(hops)), make([]int64, len(hops))
	t := m.moves.Put(tr)
	m.issue(t, 0)
}

// Handle takes a hop's or a chunk's end.
func (m *mover) Handle(ev sim.Event) {
	if ev.Op == opStep {
		m.step(int(ev.Arg))
		return
	}
	m.streamed(ev.Arg)
}

// step issues the next hop of a whole transfer, or finishes it.
func (m *mover) step(t int) {
	tr := m.moves.At(t)
	if tr.step == len(tr.hops) {
		m.finish(t)
		return
	}
	h := tr.hops[tr.step]
	tr.step++
	next := sim.Event{Handler: m, Op: opStep, Arg: int64(t)}
	switch {
	case h.Link != nil:
		h.Link.Transfer(tr.bytes, next)
	case tr.bytes > 0:
		h.Dev.Access(memory.Request{Addr: h.Addr, Bytes: tr.bytes, Write: h.Write, Done: next})
	default:
		m.step(t)
	}
}

// finish ends a transfer and raises its ticket.
func (m *mover) finish(t int) {
	done := m.moves.Take(t)
	m.owner.Handle(eventOf(m.owner, done.done))
}

// issue starts hop h on its next chunks while it has fewer than
// streamDepth in flight and the hop before has finished them.
func (m *mover) issue(t, h int) {
	tr := m.moves.At(t)
	ready := tr.chunks
	if h > 0 {
		ready = tr.finished[h-1]
	}
	for k := tr.started[h]; k < ready && k-tr.finished[h] < streamDepth; k = tr.started[h] {
		tr.started[h]++
		bytes := min(tr.chunk, tr.bytes-k*tr.chunk)
		next := sim.Event{Handler: m, Op: opStreamed, Arg: int64(t)*maxHops + int64(h)}
		if x := tr.hops[h]; x.Link != nil {
			x.Link.Transfer(bytes, next)
		} else {
			x.Dev.Access(memory.Request{Addr: x.At(k*tr.chunk, tr.chunk), Bytes: bytes, Write: x.Write, Done: next})
		}
	}
}

// streamed takes a chunk's end at one hop: the hop takes its next chunk,
// the hop after takes this one, and the last chunk through the last hop
// ends the transfer.
func (m *mover) streamed(arg int64) {
	t, h := int(arg/maxHops), int(arg%maxHops)
	tr := m.moves.At(t)
	tr.finished[h]++
	last := len(tr.hops) - 1
	if tr.finished[last] == tr.chunks {
		m.finish(t)
		return
	}
	m.issue(t, h)
	if h < last {
		m.issue(t, h+1)
	}
}
