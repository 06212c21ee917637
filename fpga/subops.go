package fpga

import (
	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
)

// subKind is one kind of asynchronous operation a stage issues. Each goes
// through phases; every phase is one access or transfer whose completion
// event brings it to the next.
type subKind uint8

const (
	// subHostRead: read request TLP to the host, host-memory read, data TLPs
	// back to the card.
	subHostRead subKind = iota
	// subHostWrite: data TLPs to the host, then the host-memory write.
	subHostWrite
	// subTable: count table accesses one after another (a chain walk).
	subTable
	// subImport: a storage read, then (over the peer link) a write into the
	// exchange memory, then (with Ports.Forward) on to the accelerator.
	subImport
	// subExchangeRead: a read of the exchange memory (and the peer link).
	subExchangeRead
	// subStorageWrite: a storage write.
	subStorageWrite
	// subSignal: the completion message to the CPU.
	subSignal
	// subDelay: FPGA cycles of computation.
	subDelay
)

// subOp is an operation in flight.
type subOp struct {
	task  int32
	kind  subKind
	phase uint8
	write bool
	count int // subTable: accesses left
	addr  int64
	bytes int64
}

// pcieRequestBytes is a memory-read request TLP on the wire.
const pcieRequestBytes = 24

// opDeliver marks the event that hands a finished task's result to its
// requester; the sub-operations' events have op 0.
const opDeliver = 1

// start issues an operation for a task's current stage.
func (e *Engine) start(slot int32, op subOp) {
	op.task = slot
	e.tasks.At(int(slot)).pending++
	id := int64(e.subs.Put(op))
	e.step(id)
}

// Handle advances the operation whose completion the event reports.
func (e *Engine) Handle(ev sim.Event) {
	if ev.Op == opDeliver {
		e.deliver(int(ev.Arg))
		return
	}
	e.subs.At(int(ev.Arg)).phase++
	e.step(ev.Arg)
}

// step issues the current phase of an operation, or completes it.
func (e *Engine) step(id int64) {
	op := e.subs.At(int(id))
	next := sim.Event{Handler: e, Arg: id}
	p := &e.ports
	switch op.kind {
	case subHostRead:
		switch op.phase {
		case 0:
			p.ToHost.Transfer(pcieRequestBytes, next)
		case 1:
			p.HostMemory.Access(memory.Request{Addr: op.addr, Bytes: op.bytes, Done: next})
		case 2:
			p.FromHost.Transfer(op.bytes, next)
		default:
			e.complete(id)
		}
	case subHostWrite:
		switch op.phase {
		case 0:
			p.ToHost.Transfer(op.bytes, next)
		case 1:
			p.HostMemory.Access(memory.Request{Addr: op.addr, Bytes: op.bytes, Write: true, Done: next})
		default:
			e.complete(id)
		}
	case subTable:
		e.stepTable(id, op, next)
	case subImport:
		switch {
		case op.phase == 0:
			p.Storage.Access(memory.Request{Addr: op.addr, Bytes: op.bytes, Done: next})
		case op.phase == 1 && p.ExchangeLink != nil:
			p.ExchangeLink.Transfer(op.bytes, next)
		case op.phase <= 2:
			op.phase = 2
			p.Exchange.Access(memory.Request{Addr: e.exchangeAddr(op.bytes), Bytes: op.bytes, Write: true, Done: next})
		case op.phase == 3 && p.Forward != nil:
			p.Forward.Transfer(op.bytes, next)
		default:
			e.complete(id)
		}
	case subExchangeRead:
		switch {
		case op.phase == 0:
			p.Exchange.Access(memory.Request{Addr: e.exchangeAddr(op.bytes), Bytes: op.bytes, Done: next})
		case op.phase == 1 && p.ExchangeLink != nil:
			p.ExchangeLink.Transfer(op.bytes, next)
		default:
			e.complete(id)
		}
	case subStorageWrite:
		if op.phase == 0 {
			p.Storage.Access(memory.Request{Addr: op.addr, Bytes: op.bytes, Write: true, Done: next})
		} else {
			e.complete(id)
		}
	case subSignal:
		if op.phase == 0 {
			p.ToHost.Transfer(e.cfg.SignalBytes, next)
		} else {
			e.complete(id)
		}
	case subDelay:
		if op.phase == 0 {
			e.eng.Schedule(e.clock.After(e.eng.Now(), sim.Cycles(op.count)), next)
		} else {
			e.complete(id)
		}
	}
}

// stepTable runs one table access per round, in the tables' placement:
// host memory across PCIe (a read waits for the data; a posted write for
// the host-memory write), the card's HBM, or on-chip URAM.
func (e *Engine) stepTable(id int64, op *subOp, next sim.Event) {
	if op.count == 0 {
		e.complete(id)
		return
	}
	p := &e.ports
	switch {
	case e.cfg.Placement == PlaceHost && op.write:
		if op.phase%2 == 0 {
			p.ToHost.Transfer(op.bytes, next)
			return
		}
		p.HostMemory.Access(memory.Request{Addr: op.addr, Bytes: op.bytes, Write: true, Done: next})
	case e.cfg.Placement == PlaceHost:
		switch op.phase % 3 {
		case 0:
			p.ToHost.Transfer(pcieRequestBytes, next)
			return
		case 1:
			p.HostMemory.Access(memory.Request{Addr: op.addr, Bytes: op.bytes, Done: next})
			return
		}
		p.FromHost.Transfer(op.bytes, next)
	case e.cfg.Placement == PlaceHBM:
		p.Tables.Access(memory.Request{Addr: op.addr, Bytes: op.bytes, Write: op.write, Done: next})
	default:
		e.eng.Schedule(e.clock.After(e.eng.Now(), e.cfg.URAMCycles), next)
	}
	op.count-- // this was the access's last phase
}

// complete ends an operation; the stage ends with its last one.
func (e *Engine) complete(id int64) {
	op := e.subs.Take(int(id))
	t := e.tasks.At(int(op.task))
	t.pending--
	if t.pending == 0 {
		e.endStage(op.task)
		e.nextStage(op.task)
	}
}

// exchangeAddr places a transfer in the exchange memory: a ring buffer.
func (e *Engine) exchangeAddr(bytes int64) int64 {
	span := e.ports.exchangeSpan()
	if bytes >= span {
		return 0
	}
	addr := e.exchangeCursor % (span - bytes)
	e.exchangeCursor += bytes
	return addr
}
