package hostcpu

import (
	"cmp"
	"fmt"
	"github.com/kvcosim/kvcosim/hostcpu/mech"
	"github.com/kvcosim/kvcosim/kvstore"
	"slices"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/accel/tinylm"
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"github.com/kvcosim/kvcosim/sim"
	"github.com/kvcosim/kvcosim/workloads"
)

// session is a row of the session table, its state split by concern:
// its tokens, where it runs (claim 2 and the scheduler), what the store
// holds of it (the export phases), its look-ahead raise and its pre-load.
type session struct {
	id    int64
	index int64 // position in System.sessions
	plan  workloads.Session
	turn  int // the next turn to run
	sessionTokens
	placement
	stored
	raiseState
	// preload is the KV of the session's next turn (held back, or waiting
	// for admission) on its way into, or in, a read buffer (preload.go)
	preload preload
	// kv is functional mode's cache at the end of the last turn: what a
	// continuation reuses and an export stores (never changed once made)
	kv *tinylm.Cache
}

// sessionTokens are a session's history (tokens.go).
type sessionTokens struct {
	history []uint32 // computed tokens, in order (nil when tokenless)
	// historyLen counts the history's tokens; tokenless sessions come from
	// traces that give counts, not ids.
	historyLen int64
	tokenless  bool
	// cut counts the tokens truncation has dropped from the history's front.
	cut int64
	// keyed hashes the history for its patent key as it grows.
	keyed kvstore.HistoryKeys
}

// placement is where a session runs: what claim 2, the scheduler and the
// closed loop know of it.
type placement struct {
	// holdsSlot: a closed-loop slot is held until the turn and its export
	// end; dropped: a rejected turn ends the session.
	holdsSlot, dropped bool
	// resident is the node whose accelerator holds the session's KV, or -1.
	resident int
	lastUse  sim.Time
	running  bool
	// lastNode and lastRecord are the node and record of its last turn.
	lastNode   int
	lastRecord int
}

// stored is what the store holds of a session and the export on its way
// there (export.go).
type stored struct {
	// exporting is set while an export is in flight; a request that needs
	// the store waits in parked.
	exporting bool
	parked    int
	// buffered: the export in flight is in the asynchronous buffer, so a
	// request need not wait for it; saving are the extents that export is
	// still writing from the buffer (a CPU-run store's), nil once it ends
	buffered bool
	saving   []kvstore.Extent
	// exportAgain: a turn ended while an export was in flight; export the
	// newer history when it ends.
	exportAgain bool
	// exported is the last stored patent key; heldBlocks the block keys
	// the session has stored; storedTokens the tokens of that version,
	// from its key's token storedFrom on (kvstore.Object.From).
	exported     *kvstore.Key
	heldBlocks   int
	storedTokens int64
	storedFrom   int64
}

// raiseState is a session's look-ahead raise (lookahead.go).
type raiseState struct {
	// raising counts the parts of a raise still moving; raised: raisedKey
	// was raised and no lookup has met it since; waiter is the slot of a
	// request waiting for the raise to land, or -1.
	raising   int
	raised    bool
	raisedKey kvstore.Key
	waiter    int
}

// request is one turn in flight, its state split by concern: the
// scheduler's, the store's lookup and import, a layer-wise load and its
// prefetch, and functional mode's.
type request struct {
	rec        Record
	sess       *session
	node       int
	prompt     []uint32 // history and new tokens (nil when tokenless)
	promptLen  int64
	blockKeys  []kvstore.Key
	stageStart sim.Time
	parkedAt   sim.Time
	record     int // index in System.records
	progress
	lookup
	loading
	// kv is functional mode's imported cache; gen the turn's generation
	kv  *tinylm.Cache
	gen *accel.Generation
}

// progress is a request's way through the scheduler (scheduler.go).
type progress struct {
	prefillLeft int64
	outputLeft  int64
	context     int64
	admitted    sim.Time
	firstToken  sim.Time
	// blockTokens is how many tokens the session's blocks hold at least
	// (incremental allocation grows them when a step needs more); moving:
	// a preempted request's KV is on its way out or back in, since
	// preemptedAt
	blockTokens int64
	moving      bool
	preemptedAt sim.Time
	// away: its KV was swapped or stored, not on the device
	away bool
}

// lookup is a request's store lookup and import (store.go).
type lookup struct {
	// found is the store lookup's outcome (and, a CPU-run store, the
	// extents to read; the FPGA imports them itself)
	found kvstore.Found
	// importing: the store reported (store.Host.Importing) that it has
	// been moving the found data since importSince, within its lookup
	importing     bool
	importSince   sim.Time
	pendingImport int
	kept          bool // its keys count in System.waiting
}

// loading is a layer-wise load's state and times, and the prefetch
// before it (layerwise.go).
type loading struct {
	load               loadState
	loadStart, loadEnd sim.Time
	prefetch           prefetchState
	prefetchParts      int
	// staged is the KV an open loop's prefetch of it holds in its node's
	// host memory until the load that reads it lands (0: none)
	staged int64
}

// System is the CPUs of all nodes and the session table.
type System struct {
	eng      *sim.Engine
	cfg      Config
	nodes    []*nodeState
	pool     *kvstore.Pool // the store's tiers and index (design cpu; the FPGAs share their directory)
	store    store.Store
	keys     keys
	router   router
	sessions []*session
	reqs     sim.Slots[request]
	moves    *mover
	work     HostWork // what the stores asked of the hosts
	records  []Record
	counts   Counts
	rejected Rejections // requests refused, by reason
	failure  error
	closed   *closedLoop // nil: open loop
	// openings are the sessions in order of their first arrival; only the
	// next is in the event queue (a long trace would fill it otherwise).
	openings []int64
	fn       *functional // nil in timing mode
	// waiting counts, per stored key, the looked-up requests not yet
	// admitted that need it (store.eviction: queue-aware)
	waiting map[kvstore.Key]int
	// the mechanisms
	window   truncation
	pages    pager
	runs     decodeRuns
	export   exporter
	loads    layerwise
	fetch    prefetcher
	ahead    lookAheads
	preloads preloader
}

// The System's events.
const (
	opNone = iota // a background move between tiers has landed (store.Background)
	opTurn
	opDecide
	opQueried
	opImported
	opIteration
	opExportStep
	opAdmit
	opOpen
	opPrefetched
	opRaised
	opPreloaded
	opPreemptedOut
	opPreemptedIn
)

// NewSystem builds the CPU side over the nodes' hardware. pool is the
// store's tiers and index for design cpu (nil otherwise).
func NewSystem(eng *sim.Engine, cfg Config, nodes []Node, pool *kvstore.Pool, w *workloads.Workload, streams sim.Streams) (*System, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("system.nodes: at least one node")
	}
	if err := cfg.Mech.Check(cfg.Run(len(nodes[0].Tiers))); err != nil && cfg.Design.Stores {
		return nil, err
	}
	s := &System{eng: eng, cfg: cfg, pool: pool, router: router{migrate: cfg.MigrateFraction, rng: streams.Stream("hostcpu/routing")},
		counts: Counts{Decisions: map[string]int64{}}}
	s.keys = keysOf(cfg)
	s.pages, s.runs = pager{s}, decodeRuns{s}
	s.window, s.export, s.loads, s.fetch, s.ahead, s.preloads = truncation{s}, exporter{s: s}, layerwise{s}, prefetcher{s}, lookAheads{s: s}, preloader{s: s}
	s.moves = &mover{owner: s, chunk: cfg.Mech.ChunkBytes}
	s.store = cfg.Design.New(host{s}, store.Params{Scheme: cfg.Scheme, CPUHashBandwidth: cfg.CPUHashBandwidth, HostAccessLatency: cfg.HostAccessLatency,
		DeferImport: cfg.Mech.Load == mech.LoadLayerwise})
	if cfg.Mech.Eviction == mech.EvictQueueAware && pool != nil {
		s.waiting = map[kvstore.Key]int{}
		pool.SetKeep(func(k kvstore.Key) bool { return s.waiting[k] > 0 })
	}
	for i, n := range nodes {
		cpu, err := sim.NewServer(eng, fmt.Sprintf("node%d.cpu", i), cfg.CPUCores)
		if err != nil {
			return nil, err
		}
		runner, _ := n.Exec.(DecodeRunner) // nil: every step on its own
		s.nodes = append(s.nodes, &nodeState{Node: n, index: i, cpu: cpu, residents: newResidents(), runner: runner})
	}
	s.router.nodes = len(s.nodes)
	turns := 0
	for _, plan := range w.Sessions {
		if len(plan.Turns) == 0 {
			continue
		}
		turns += len(plan.Turns)
		sess := &session{id: plan.ID, index: int64(len(s.sessions)), plan: plan, sessionTokens: sessionTokens{tokenless: plan.Turns[0].NewTokens == nil},
			placement: placement{resident: -1, lastNode: -1, lastRecord: -1}, stored: stored{parked: -1}, raiseState: raiseState{waiter: -1}}
		for i, turn := range plan.Turns {
			if (turn.NewTokens == nil) != sess.tokenless {
				return nil, fmt.Errorf("workload: session %d: turn %d gives its new tokens as %s, turn 0 as %s: a session gives ids on every turn or on none",
					plan.ID, i, idsOrCount(turn), idsOrCount(plan.Turns[0]))
			}
		}
		s.sessions = append(s.sessions, sess)
	}
	if turns > 0 {
		s.records = make([]Record, 0, turns) // a record a turn at most: a million copied as they grew cost seconds
	}
	run := cfg.Run(0)
	if pool != nil {
		run.Tiers = pool.Tiers()
	}
	run.CPUStore = run.CPUStore && pool != nil
	s.ahead.on, s.preloads.on = cfg.Mech.LookAheadOn(run), cfg.Mech.PreloadOn(run)
	if cfg.MaxConcurrency == 0 {
		s.scheduleOpenings()
	} else {
		s.closed = newClosedLoop(cfg.MaxConcurrency, cfg.ClosedOrder, s.sessions)
		if s.ahead.on && cfg.Mech.PrefetchWindowTurns == mech.AutoWindow {
			s.ahead.firstWindow = firstWindow(cfg, pool)
		}
		eng.Schedule(0, sim.Event{Handler: s, Op: opAdmit})
	}
	return s, nil
}

// idsOrCount says how a turn gives its new tokens.
func idsOrCount(turn workloads.Turn) string {
	if turn.NewTokens == nil {
		return "a count"
	}
	return "ids"
}

// scheduleOpenings orders the sessions by first arrival (ties in session
// order) and schedules the first.
func (s *System) scheduleOpenings() {
	for _, sess := range s.sessions {
		s.openings = append(s.openings, sess.index)
	}
	first := func(i int64) sim.Time { p := s.sessions[i].plan; return p.Start + p.Turns[0].Gap }
	slices.SortStableFunc(s.openings, func(a, b int64) int { return cmp.Compare(first(a), first(b)) })
	if len(s.openings) > 0 {
		s.eng.Schedule(first(s.openings[0]), sim.Event{Handler: s, Op: opOpen, Arg: 0})
	}
}

// open starts the i-th session to arrive and schedules the next.
func (s *System) open(i int) {
	if next := i + 1; next < len(s.openings) {
		p := s.sessions[s.openings[next]].plan
		s.eng.Schedule(p.Start+p.Turns[0].Gap, sim.Event{Handler: s, Op: opOpen, Arg: int64(next)})
	}
	s.arrive(s.sessions[s.openings[i]])
}

// Records returns every request's record, in order of arrival.
func (s *System) Records() []Record { return s.records }

// Counts returns the decision, query and eviction counters.
func (s *System) Counts() Counts {
	c := s.counts
	c.Finished = int64(len(s.records) - s.reqs.Len())
	return c
}

// Rejected returns the requests refused, counted by reason.
func (s *System) Rejected() Rejections { return s.rejected }

// Rejections count the requests refused, by reason.
type Rejections [rejectReasons]int64

// Total counts the requests refused for any reason.
func (r Rejections) Total() int64 {
	var n int64
	for _, c := range r {
		n += c
	}
	return n
}

// For counts the requests refused for the reason why.
func (r Rejections) For(why RejectReason) int64 { return r[why] }

// ByReason counts the requests refused under every reason's name
// (RejectReasons), zeros included.
func (r Rejections) ByReason() map[string]int64 {
	by := make(map[string]int64, len(r))
	for why, n := range r {
		by[RejectReason(why).String()] = n
	}
	return by
}

// CPUStats returns node i's CPU statistics up to now.
func (s *System) CPUStats(i int, now sim.Time) sim.ServerStats { return s.nodes[i].cpu.Stats(now) }

// Failure is the first error that stopped the run (an invariant).
func (s *System) Failure() error { return s.failure }

// Handle dispatches the System's events.
func (s *System) Handle(ev sim.Event) {
	switch ev.Op {
	case opTurn:
		s.arrive(s.sessions[ev.Arg])
	case opDecide:
		s.decide(int(ev.Arg))
	case opQueried:
		s.queried(int(ev.Arg))
	case opImported:
		s.imported(int(ev.Arg))
	case opIteration:
		s.iterationDone(s.nodes[ev.Arg])
	case opExportStep:
		s.export.exportStep(int(ev.Arg))
	case opAdmit:
		s.admitQueued()
	case opOpen:
		s.open(int(ev.Arg))
	case opPrefetched:
		s.fetch.prefetched(int(ev.Arg))
	case opRaised:
		s.ahead.raisedPart(ev.Arg)
	case opPreloaded:
		s.preloads.preloadedPart(ev.Arg)
	case opPreemptedOut:
		s.pages.movedOut(int(ev.Arg))
	case opPreemptedIn:
		s.pages.movedIn(int(ev.Arg))
	}
}

// arrive creates the request of a session's next turn, routes it and has
// a CPU core take it in.
func (s *System) arrive(sess *session) {
	now := s.eng.Now()
	turn := sess.plan.Turns[sess.turn]
	node := s.routeTo(sess, turn)
	prompt, promptLen := sess.promptOf(turn)
	r := request{sess: sess, node: node, prompt: prompt, promptLen: promptLen, stageStart: now, record: len(s.records)}
	r.rec = Record{ID: int64(len(s.records)), Session: sess.id, Turn: sess.turn, Node: node, Arrival: now,
		PromptTokens: promptLen, OutputTokens: turn.OutputCount}
	if s.cfg.Scheme == kvstore.SchemeBlock {
		r.blockKeys = s.keys.blockKeys(sess, prompt, promptLen)
	}
	s.records = append(s.records, Record{})
	sess.running = true
	slot := s.reqs.Put(r)
	s.onCore(node, s.cfg.RequestOverhead+s.cfg.DecisionOverhead, sim.Event{Handler: s, Op: opDecide, Arg: int64(slot)})
}

// routeTo sends a turn to its node and counts migrations.
func (s *System) routeTo(sess *session, turn workloads.Turn) int {
	node, moved := s.router.route(sess.id, sess.lastNode, turn.Node)
	if moved {
		s.counts.Migrations++
	}
	return node
}

// decide is claim 2: first tokens or a continuation of the history still
// resident here go straight to the accelerator; anything else is a query
// (or, without a store, a full recomputation). In the block scheme a first
// request queries too: its prefix may be another session's.
func (s *System) decide(slot int) {
	r := s.reqs.At(slot)
	sess := r.sess
	if sess.resident >= 0 && sess.resident != r.node {
		s.evict(s.nodes[sess.resident], sess) // it moved: the old node lets go
	}
	v, fits := s.window.fitWindow(slot, s.verdict(r))
	if !fits {
		s.ahead.settleRaise(sess, false) // the session ends
		s.preloads.settlePreload(sess)
		return
	}
	if v.action == park {
		sess.parked = slot // the store must hold the latest version first
		r.parkedAt = s.eng.Now()
		return
	}
	if r.parkedAt > 0 {
		r.rec.Parked = s.eng.Now() - r.parkedAt
	}
	s.decided(r, v.decision)
	if v.decision == Continuation {
		r.rec.ResidentTokens = sess.historyLen
	}
	if v.action == lookUp {
		s.query(slot)
		return
	}
	s.ahead.settleRaise(sess, false) // no lookup will meet it
	s.preloads.settlePreload(sess)
	s.enqueue(slot)
}

// verdict is claim 2's outcome for the request as the session stands.
func (s *System) verdict(r *request) verdict {
	sess := r.sess
	return claim2(situation{first: sess.historyLen == 0, residentHere: sess.resident == r.node, stores: s.cfg.Design.Stores,
		blocks: s.cfg.Scheme == kvstore.SchemeBlock, exporting: sess.exporting && !sess.buffered})
}

func (s *System) decided(r *request, d Decision) {
	s.span(r.node, PartCPU, TaskDecide, d.String(), r.sess.id, r.rec.Turn, r.rec.Arrival, 0)
	r.rec.Decision = d
	s.counts.Decisions[d.String()]++
}
