package hostcpu

import (
	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
)

// hop is one step of a data movement: a device access or a link transfer.
type hop struct {
	dev   memory.Device
	addr  int64
	write bool
	link  *sim.Link
	ring  int64 // a staging hop's bytes: its chunks wrap round them
}

// staging is the hop through the node's host memory, written or read: a
// transfer stages there at address 0, and a streamed one larger than host
// memory wraps round it in whole chunks, as a pipelined copy reuses its
// staging buffers (store.chunk is at most host memory, checked when the
// scenario loads, and a whole transfer fits it).
func (n *Node) staging(write bool) hop {
	return hop{dev: n.HostMemory, write: write, ring: n.HostMemoryBytes}
}

// at is the address of a transfer's chunk at offset off, chunks of chunk
// bytes.
func (h hop) at(off, chunk int64) int64 {
	if h.ring == 0 {
		return h.addr + off
	}
	return h.addr + off/chunk%max(1, h.ring/chunk)*chunk
}

// transfer moves bytes through hops and then raises op for the request
// (or export) id. A whole transfer moves all its bytes through one hop
// after another; a streamed one moves chunks, each hop taking the next
// chunk as soon as it is free and the hop before has passed that chunk on.
type transfer struct {
	hops  []hop
	step  int // whole: the next hop
	bytes int64
	op    int32
	id    int64
	// streamed: chunk bytes, the chunks in all, and per hop the chunks it
	// has started and finished
	chunk   int64
	chunks  int64
	started []int64
	done    []int64
}

// streamDepth is how many chunks one hop of a streamed transfer keeps in
// flight, as a DMA engine keeps several descriptors and an NVMe queue
// several commands: one at a time would leave each device idle for its
// latency between chunks.
const streamDepth = 4

// maxHops bounds a transfer's hops: a streamed hop's event carries the
// transfer and the hop in one argument.
const maxHops = 8

// moveExtent starts a transfer of bytes through hops: streamed in chunks
// when it has several hops and more than one chunk of bytes, else whole.
func (s *System) moveExtent(id int, hops []hop, bytes int64, op int32) {
	tr := transfer{hops: hops, bytes: bytes, op: op, id: int64(id)}
	chunk := s.cfg.Mech.ChunkBytes
	if chunk == 0 || len(hops) < 2 || bytes <= chunk {
		s.transferStep(s.moves.Put(tr))
		return
	}
	if len(hops) > maxHops {
		panic("hostcpu: a transfer of more than 8 hops") // the designs build at most four
	}
	tr.chunk, tr.chunks = chunk, (bytes+chunk-1)/chunk
	tr.started, tr.done = make([]int64, len(hops)), make([]int64, len(hops))
	t := s.moves.Put(tr)
	s.streamIssue(t, 0)
}

// transferStep issues the next hop of a whole transfer, or finishes it.
func (s *System) transferStep(t int) {
	tr := s.moves.At(t)
	if tr.step == len(tr.hops) {
		s.transferDone(t)
		return
	}
	h := tr.hops[tr.step]
	tr.step++
	next := sim.Event{Handler: s, Op: opTransfer, Arg: int64(t)}
	switch {
	case h.link != nil:
		h.link.Transfer(tr.bytes, next)
	case tr.bytes > 0:
		h.dev.Access(memory.Request{Addr: h.addr, Bytes: tr.bytes, Write: h.write, Done: next})
	default:
		s.transferStep(t)
	}
}

// transferDone ends a transfer and raises its op.
func (s *System) transferDone(t int) {
	done := s.moves.Take(t)
	s.Handle(sim.Event{Handler: s, Op: done.op, Arg: done.id})
}

// streamIssue starts hop h on its next chunks while it has fewer than
// streamDepth in flight and the hop before has finished them.
func (s *System) streamIssue(t, h int) {
	tr := s.moves.At(t)
	ready := tr.chunks
	if h > 0 {
		ready = tr.done[h-1]
	}
	for k := tr.started[h]; k < ready && k-tr.done[h] < streamDepth; k = tr.started[h] {
		tr.started[h]++
		bytes := min(tr.chunk, tr.bytes-k*tr.chunk)
		next := sim.Event{Handler: s, Op: opStreamed, Arg: int64(t)*maxHops + int64(h)}
		if x := tr.hops[h]; x.link != nil {
			x.link.Transfer(bytes, next)
		} else {
			x.dev.Access(memory.Request{Addr: x.at(k*tr.chunk, tr.chunk), Bytes: bytes, Write: x.write, Done: next})
		}
	}
}

// streamed takes a chunk's end at one hop: the hop takes its next chunk,
// the hop after takes this one, and the last chunk through the last hop
// ends the transfer.
func (s *System) streamed(arg int64) {
	t, h := int(arg/maxHops), int(arg%maxHops)
	tr := s.moves.At(t)
	tr.done[h]++
	last := len(tr.hops) - 1
	if tr.done[last] == tr.chunks {
		s.transferDone(t)
		return
	}
	s.streamIssue(t, h)
	if h < last {
		s.streamIssue(t, h+1)
	}
}
