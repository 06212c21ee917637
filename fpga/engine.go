package fpga

import (
	"fmt"
	"github.com/kvcosim/kvcosim/kvstore"
	"slices"

	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
)

// Memory is what the engine needs of a memory or storage device.
type Memory interface {
	Access(memory.Request)
}

// Ports are the memories and links the engine drives.
type Ports struct {
	// HostMemory holds the sessions' tokens and, with PlaceHost, the tables.
	HostMemory Memory
	// ToHost and FromHost are the PCIe link's two directions.
	ToHost, FromHost *sim.Link
	// Exchange is the memory between FPGA and accelerator. With ExchangeLink
	// set, it is the accelerator's HBM reached over that peer-to-peer link;
	// otherwise the FPGA card's own HBM.
	Exchange     Memory
	ExchangeLink *sim.Link
	// Forward, when set, carries each imported extent on from the exchange
	// memory to the accelerator as soon as it has landed (the
	// accelerator's pull over the peer link, overlapped with the import).
	Forward *sim.Link
	// Inbound, when set, carries a streamed export's pieces from the
	// accelerator into the exchange memory as the engine writes them on
	// (Config.ChunkBytes); unset, the accelerator's push is done before
	// the export task begins (store-and-forward), or the exchange memory
	// is the accelerator's own.
	Inbound *sim.Link
	// Tables holds the tables with PlaceHBM (the card's HBM).
	Tables Memory
	// Storage is the external store.
	Storage Memory
	// HostBytes, ExchangeBytes and TablesBytes are the capacities of host
	// memory, the exchange memory and the tables' HBM, for placing buffers.
	HostBytes, ExchangeBytes, TablesBytes int64
}

func (p *Ports) exchangeSpan() int64 { return p.ExchangeBytes }

// StageTime is one stage of a task: when it ran, its length in FPGA cycles
// and the bytes it moved.
type StageTime struct {
	Name       string
	Start, End sim.Time
	Cycles     sim.Cycles
	Bytes      int64
}

// Result is what a query or export task did.
type Result struct {
	// Hit: the queried version was stored (patent scheme).
	Hit bool
	// MatchedBlocks: the stored prefix, in blocks (block scheme).
	MatchedBlocks int
	// Hops are the chain links visited.
	Hops int
	// Bytes imported into, or exported from, the exchange memory.
	Bytes int64
	// Extents a deferred query found, for Import.
	Extents []kvstore.Extent
	// Export is the functional outcome of an export.
	Export     kvstore.ExportResult
	Stages     []StageTime
	Start, End sim.Time
	// Err is set when the store cannot hold the object.
	Err error
}

// Imported is when a query task began importing what it found, and
// whether it imported anything: the stages before decide, the import
// stage and those after it move the data.
func (r Result) Imported() (since sim.Time, ok bool) {
	for _, s := range r.Stages {
		if s.Name == StageImport && s.Bytes > 0 {
			return s.Start, true
		}
	}
	return 0, false
}

// QueryRequest asks for a session's stored cache. In the patent scheme Key
// is the (n-1 tokens, hash) key; in the block scheme Blocks are the
// prompt's block keys. TokenBytes are read from host memory and hashed
// (0 when the keys come from a trace).
type QueryRequest struct {
	Session    int64
	Key        kvstore.Key
	Blocks     []kvstore.Key
	TokenBytes int64
	// Defer leaves the import to Import (a layer-wise load starts at the
	// request's admission): the result carries the extents found.
	Defer bool
	Reply Reply
}

// ImportRequest imports extents a deferred query found, in the order of
// their addresses (claim 9's layout: every layer's K, then every
// layer's V), forwarding each piece as it is read (Config.ChunkBytes).
type ImportRequest struct {
	Session int64
	Extents []kvstore.Extent
	Reply   Reply
}

// ExportRequest stores a session's updated cache: Key with Prev (patent
// scheme), holding its tokens from From on (kvstore.Object.From), or
// Blocks of which the first HeldBlocks are already the session's (block
// scheme). TokenBytes are the computed tokens read and hashed. KVBytes,
// when set, are the bytes of the stored object that come from the
// accelerator (the rest, claim 9's token ids, the card reads from host
// memory): a streamed export pulls only those over Ports.Inbound (0: all
// of it).
type ExportRequest struct {
	Session    int64
	Key        kvstore.Key
	Prev       *kvstore.Key
	Blocks     []kvstore.Key
	HeldBlocks int
	From       int64
	TokenBytes int64
	KVBytes    int64
	Reply      Reply
}

// Receiver takes a finished task's result.
type Receiver interface {
	Receive(arg int64, r Result)
}

// Reply says where a task's result goes when it ends: To receives it with
// Arg, the requester's own id. The result travels with the completion, so
// nothing of the requester's is written while the task runs (its tables
// may move). A nil To drops the result.
type Reply struct {
	To  Receiver
	Arg int64
}

// task is one running query or export.
type task struct {
	export  bool
	query   QueryRequest
	exp     ExportRequest
	out     Result
	reply   Reply
	stages  []stage
	current int
	pending int
	started sim.Time
	// functional outcome, for the stages that follow it
	hops, bucketReads int
	reads, writes     []kvstore.Extent
	regions, freed    int
}

// stage issues a stage's operations; it returns the bytes it moves.
type stage struct {
	name string
	run  func(e *Engine, t *task, slot int32) int64
}

// Engine is the FPGA's query and export engines.
type Engine struct {
	eng     *sim.Engine
	cfg     Config
	clock   sim.Clock
	dir     *kvstore.Directory
	ports   Ports
	tasks   sim.Slots[task]
	subs    sim.Slots[subOp]
	replies sim.Slots[delivery]
	waiting [2]sim.FIFO[int32] // queued query (0) and export (1) tasks
	running [2]int
	failure error
	// exchangeCursor places imported and exported data in the exchange
	// memory as a ring.
	exchangeCursor int64
	// wires are the ports operations book ahead in closed form, wireOf
	// each port's (-1: none); walks are the closed-form operations' records
	// (walk.go)
	wires     []wire
	wireOf    [portCount]int8
	walks     []*walkRun
	freeWalks []int32
	splits    int64 // walks split by another request (for the agreement test)
	booked    int64 // phases booked in closed form, again after splits too (for the tests)
	onWires   int   // operations' phases on wires event by event

	queries, exports sim.Counter
}

// NewEngine validates cfg against the placement's capacity and builds the
// engine and its directory.
func NewEngine(eng *sim.Engine, cfg Config, ports Ports, placementBytes int64) (*Engine, error) {
	dir, err := kvstore.NewDirectory(cfg.Directory)
	if err != nil {
		return nil, err
	}
	return NewSharedEngine(eng, cfg, ports, placementBytes, dir)
}

// NewSharedEngine builds an engine over an existing directory: the index of
// a storage pool that the FPGAs of several nodes share.
func NewSharedEngine(eng *sim.Engine, cfg Config, ports Ports, placementBytes int64, dir *kvstore.Directory) (*Engine, error) {
	if err := cfg.Validate(placementBytes); err != nil {
		return nil, err
	}
	clock, err := sim.NewClock(cfg.ClockHz)
	if err != nil {
		return nil, err
	}
	e := &Engine{eng: eng, cfg: cfg, clock: clock, dir: dir, ports: ports}
	e.wires, e.wireOf = ports.wires()
	return e, nil
}

// Directory returns the functional state, for inspection.
func (e *Engine) Directory() *kvstore.Directory { return e.dir }

// Clock returns the FPGA clock.
func (e *Engine) Clock() sim.Clock { return e.clock }

// Failure returns the invariant violation that stopped the simulation.
func (e *Engine) Failure() error { return e.failure }

// Query starts a query task.
func (e *Engine) Query(q QueryRequest) {
	e.queries.Add(1)
	stages := e.queryStages()
	if q.Defer {
		stages = slices.DeleteFunc(stages, func(s stage) bool { return s.name == StageImport })
	}
	e.submit(task{query: q, reply: q.Reply, stages: stages})
}

// Import starts an import task: what a deferred query found, read and
// forwarded; it takes one of the query tasks (the query engine imports).
func (e *Engine) Import(in ImportRequest) {
	e.submit(task{query: QueryRequest{Session: in.Session}, reads: in.Extents, reply: in.Reply, stages: importStages})
}

// Export starts an export task.
func (e *Engine) Export(x ExportRequest) {
	e.exports.Add(1)
	e.submit(task{export: true, exp: x, reply: x.Reply, stages: e.exportStages()})
}

func (e *Engine) submit(t task) {
	kind, limit := 0, e.cfg.QueryTasks
	if t.export {
		kind, limit = 1, e.cfg.ExportTasks
	}
	slot := int32(e.tasks.Put(t))
	if e.running[kind] < limit {
		e.begin(slot)
		return
	}
	e.waiting[kind].Push(slot)
}

func (e *Engine) begin(slot int32) {
	t := e.tasks.At(int(slot))
	if t.export {
		e.running[1]++
	} else {
		e.running[0]++
	}
	t.started = e.eng.Now()
	t.out = Result{Start: t.started, Stages: make([]StageTime, 0, len(t.stages))}
	e.nextStage(slot)
}

// nextStage runs stages until one has operations in flight.
func (e *Engine) nextStage(slot int32) {
	for {
		t := e.tasks.At(int(slot))
		if t.current == len(t.stages) {
			e.finish(slot)
			return
		}
		st := t.stages[t.current]
		start := e.eng.Now()
		t.out.Stages = append(t.out.Stages, StageTime{Name: st.name, Start: start})
		bytes := st.run(e, t, slot)
		t.out.Stages[len(t.out.Stages)-1].Bytes = bytes
		if t.pending > 0 {
			return
		}
		e.endStage(slot)
	}
}

// endStage closes the current stage and records it.
func (e *Engine) endStage(slot int32) {
	t := e.tasks.At(int(slot))
	s := &t.out.Stages[len(t.out.Stages)-1]
	s.End = e.eng.Now()
	s.Cycles = e.clock.FirstEdgeAtOrAfter(s.End) - e.clock.FirstEdgeAtOrAfter(s.Start)
	if tr := e.eng.Trace(); tr.Enabled() {
		task, id := TaskQuery, t.query.Session
		if t.export {
			task, id = TaskExport, t.exp.Session
		}
		tr.Emit(sim.Span{Component: e.cfg.Name, Operation: task + "/" + s.Name, ID: id, Start: s.Start, End: s.End, Bytes: s.Bytes,
			Part: Part, Node: e.cfg.Node, Task: task, Stage: s.Name, Clocked: true, Cycles: s.Cycles})
	}
	t.current++
}

func (e *Engine) finish(slot int32) {
	t := e.tasks.Take(int(slot))
	t.out.End = e.eng.Now()
	kind := 0
	if t.export {
		kind = 1
	}
	e.running[kind]--
	if e.waiting[kind].Len() > 0 {
		e.begin(e.waiting[kind].Pop())
	}
	if t.reply.To != nil {
		d := e.replies.Put(delivery{reply: t.reply, result: t.out})
		e.eng.Schedule(e.eng.Now(), sim.Event{Handler: e, Op: opDeliver, Arg: int64(d)})
	}
}

// delivery is a finished task's result on its way to the requester.
type delivery struct {
	reply  Reply
	result Result
}

// deliver hands a finished task's result to its requester.
func (e *Engine) deliver(d int) {
	x := e.replies.Take(d)
	x.reply.To.Receive(x.reply.Arg, x.result)
}

// fail records an invariant violation and stops the simulation.
func (e *Engine) fail(err error) {
	if e.failure == nil {
		e.failure = err
	}
	e.eng.Stop()
}

// Check runs the directory's invariant check now.
func (e *Engine) Check() error { return e.dir.Check(e.eng.Now(), "check") }

// String describes the engine for messages.
func (e *Engine) String() string {
	return fmt.Sprintf("fpga(%v, %d links)", e.clock, e.dir.Links())
}
