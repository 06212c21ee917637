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
	// subStreamOut: a piece of a streamed export: (with Ports.Inbound)
	// over the peer link from the accelerator, a read of the exchange
	// memory (and the exchange link), then its storage write.
	subStreamOut
	// subSignal: the completion message to the CPU.
	subSignal
	// subDelay: FPGA cycles of computation.
	subDelay
)

// subOp is an operation in flight.
type subOp struct {
	task  int32
	kind  subKind
	write bool
	wired bool   // its phase under way is on a wire on the event path (walk.go)
	phase uint64 // a walk of 1.43e9 hops has 4.3e9 phases (a uint32 wrapped)
	count int    // subTable: accesses; subDelay: cycles
	addr  int64
	bytes int64
	// pulled: subStreamOut's bytes that cross Ports.Inbound
	pulled int64
}

// pcieRequestBytes is a memory-read request TLP on the wire.
const pcieRequestBytes = 24

// The engine's events: a phase's completion (op 0), a finished task's
// result on its way to the requester, the end of a closed-form operation
// (walk.go).
const (
	opPhaseDone = iota
	opDeliver
	opWalkEnd
)

// start issues an operation for a task's current stage.
func (e *Engine) start(slot int32, op subOp) {
	op.task = slot
	e.tasks.At(int(slot)).pending++
	id := int64(e.subs.Put(op))
	e.step(id)
}

// Handle advances the operation whose completion the event reports.
func (e *Engine) Handle(ev sim.Event) {
	switch ev.Op {
	case opDeliver:
		e.deliver(int(ev.Arg))
	case opWalkEnd:
		e.walkEnd(ev.Arg)
	default:
		op := e.subs.At(int(ev.Arg))
		e.unwire(op)
		op.phase++
		e.step(ev.Arg)
	}
}

// step issues the current phase of an operation, or completes it; an
// operation whose phases left all find the ports they use booked ahead
// runs them in closed form (walk.go).
func (e *Engine) step(id int64) {
	op := e.subs.At(int(id))
	if e.walk(id, op) {
		return
	}
	ph := e.phaseOf(op)
	if ph.port == portNone {
		e.complete(id)
		return
	}
	e.wire(op, ph)
	e.issue(ph, sim.Event{Handler: e, Op: opPhaseDone, Arg: id})
}

// port is what a phase uses: one of the Ports, or the FPGA's clock (a
// delay); portNone ends the operation.
type port uint8

const (
	portNone port = iota
	portToHost
	portFromHost
	portHostMemory
	portTables
	portExchange
	portExchangeLink
	portForward
	portInbound
	portStorage
	portClock
	portCount
)

// phase is one access or transfer of an operation: bytes (cycles for the
// clock) through a port.
type phase struct {
	port  port
	write bool
	addr  int64
	bytes int64
}

// phaseOf returns an operation's current phase; one its ports skip moves
// the operation on to the next (an import without an exchange link).
func (e *Engine) phaseOf(op *subOp) phase {
	p := &e.ports
	switch op.kind {
	case subHostRead:
		switch op.phase {
		case 0:
			return phase{port: portToHost, bytes: pcieRequestBytes}
		case 1:
			return phase{port: portHostMemory, addr: op.addr, bytes: op.bytes}
		case 2:
			return phase{port: portFromHost, bytes: op.bytes}
		}
	case subHostWrite:
		switch op.phase {
		case 0:
			return phase{port: portToHost, bytes: op.bytes}
		case 1:
			return phase{port: portHostMemory, addr: op.addr, bytes: op.bytes, write: true}
		}
	case subTable:
		return e.tablePhase(op)
	case subImport:
		switch {
		case op.phase == 0:
			return phase{port: portStorage, addr: op.addr, bytes: op.bytes}
		case op.phase == 1 && p.ExchangeLink != nil:
			return phase{port: portExchangeLink, bytes: op.bytes}
		case op.phase <= 2:
			op.phase = 2
			return phase{port: portExchange, bytes: op.bytes, write: true}
		case op.phase == 3 && p.Forward != nil:
			return phase{port: portForward, bytes: op.bytes}
		}
	case subExchangeRead:
		switch {
		case op.phase == 0:
			return phase{port: portExchange, bytes: op.bytes}
		case op.phase == 1 && p.ExchangeLink != nil:
			return phase{port: portExchangeLink, bytes: op.bytes}
		}
	case subStreamOut:
		return streamOutPhase(p, op)
	case subStorageWrite:
		if op.phase == 0 {
			return phase{port: portStorage, addr: op.addr, bytes: op.bytes, write: true}
		}
	case subSignal:
		if op.phase == 0 {
			return phase{port: portToHost, bytes: e.cfg.SignalBytes}
		}
	case subDelay:
		if op.phase == 0 {
			return phase{port: portClock, bytes: int64(op.count)}
		}
	}
	return phase{}
}

// streamOutPhase is a phase of a streamed export's piece: the peer link
// in (if the engine pulls it), the exchange memory read, the exchange
// link (if any), the storage write; a phase its ports skip moves it on.
func streamOutPhase(p *Ports, op *subOp) phase {
	switch {
	case op.phase == 0 && p.Inbound != nil && op.pulled > 0:
		return phase{port: portInbound, bytes: op.pulled}
	case op.phase <= 1:
		op.phase = 1
		return phase{port: portExchange, bytes: op.bytes}
	case op.phase == 2 && p.ExchangeLink != nil:
		return phase{port: portExchangeLink, bytes: op.bytes}
	case op.phase <= 3:
		op.phase = 3
		return phase{port: portStorage, addr: op.addr, bytes: op.bytes, write: true}
	}
	return phase{}
}

// tablePhase is a phase of count table accesses one after another, in the
// tables' placement: host memory across PCIe (a read waits for the data
// after its request; a posted write for the host-memory write), the card's
// HBM, or on-chip URAM.
func (e *Engine) tablePhase(op *subOp) phase {
	perAccess := uint64(1)
	if e.cfg.Placement == PlaceHost {
		perAccess = 3
		if op.write {
			perAccess = 2
		}
	}
	if op.phase/perAccess >= uint64(op.count) {
		return phase{}
	}
	switch {
	case e.cfg.Placement == PlaceHost && op.write:
		if op.phase%2 == 0 {
			return phase{port: portToHost, bytes: op.bytes}
		}
		return phase{port: portHostMemory, addr: op.addr, bytes: op.bytes, write: true}
	case e.cfg.Placement == PlaceHost:
		switch op.phase % 3 {
		case 0:
			return phase{port: portToHost, bytes: pcieRequestBytes}
		case 1:
			return phase{port: portHostMemory, addr: op.addr, bytes: op.bytes}
		}
		return phase{port: portFromHost, bytes: op.bytes}
	case e.cfg.Placement == PlaceHBM:
		return phase{port: portTables, addr: op.addr, bytes: op.bytes, write: op.write}
	}
	return phase{port: portClock, bytes: int64(e.cfg.URAMCycles)}
}

// issue starts a phase now; next is raised when it is done.
func (e *Engine) issue(ph phase, next sim.Event) {
	p := &e.ports
	switch ph.port {
	case portToHost:
		p.ToHost.Transfer(ph.bytes, next)
	case portFromHost:
		p.FromHost.Transfer(ph.bytes, next)
	case portExchangeLink:
		p.ExchangeLink.Transfer(ph.bytes, next)
	case portForward:
		p.Forward.Transfer(ph.bytes, next)
	case portInbound:
		p.Inbound.Transfer(ph.bytes, next)
	case portClock:
		e.eng.Schedule(e.clock.After(e.eng.Now(), sim.Cycles(ph.bytes)), next)
	default:
		e.memory(ph.port).Access(e.request(ph, next))
	}
}

// memory returns the memory behind a port.
func (e *Engine) memory(pt port) Memory {
	switch pt {
	case portHostMemory:
		return e.ports.HostMemory
	case portTables:
		return e.ports.Tables
	case portExchange:
		return e.ports.Exchange
	}
	return e.ports.Storage
}

// request is a memory phase's request; the exchange memory places it in
// its ring.
func (e *Engine) request(ph phase, done sim.Event) memory.Request {
	if ph.port == portExchange {
		ph.addr = e.exchangeAddr(ph.bytes)
	}
	return memory.Request{Addr: ph.addr, Bytes: ph.bytes, Write: ph.write, Done: done}
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
