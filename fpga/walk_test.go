package fpga

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
)

// walkCase is a card whose host memory and HBM are flat (as in the
// scenario's runs), so that its operations may run in closed form.
type walkCase struct {
	name      string
	placement Placement
	scheme    kvstore.Scheme
	peer      bool // the exchange memory is reached over a peer link
	// chunk streams imports and exports in chunks (Config.ChunkBytes),
	// forwarded on to the accelerator, and pulled from it, over links of
	// their own (Ports.Forward, Ports.Inbound)
	chunk int64
}

// walkOutcome is everything a run leaves that the closed form could move.
type walkOutcome struct {
	Results              map[int64]Result
	End                  sim.Time
	ToHost, FromHost     sim.LinkStats
	Host, Exchange       memory.Traffic
	Peer, Forward        sim.LinkStats
	Inbound              sim.LinkStats
	Drive                memory.SSDStats
	Directory            kvstore.DirectoryStats
	RivalArrivals        []sim.Time
	Splits, Events, Ends int64
}

// walkDirectory is the walk tests' store: short blocks in few buckets
// make long chains; 8 KiB a token keeps the drive's share of a run small.
func walkDirectory(scheme kvstore.Scheme) kvstore.DirectoryConfig {
	dir := goldenDirectory(scheme, kvstore.ExportDelta)
	dir.BlockTokens, dir.BucketsLog2, dir.StorageBytes = 16, 3, 1<<36
	dir.Shape = kvstore.KVShape{Layers: 4, KWidth: 512, VWidth: 512, ElemBytes: 2}
	return dir
}

// sessionDriver makes the walk tests' queries and exports: each session's
// prompt grows by a turn at every export, which stores it in the scheme's
// keys (the blocks it already holds, or the previous version).
type sessionDriver struct {
	scheme      kvstore.Scheme
	blockTokens int
	tokens      map[int64][]uint32
	held        map[int64]int
	prev        map[int64]*kvstore.Key
}

func newSessionDriver(scheme kvstore.Scheme, blockTokens int64) *sessionDriver {
	return &sessionDriver{scheme: scheme, blockTokens: int(blockTokens), tokens: map[int64][]uint32{},
		held: map[int64]int{}, prev: map[int64]*kvstore.Key{}}
}

// query asks for the session's prompt as it stands.
func (d *sessionDriver) query(session int64, reply Reply) QueryRequest {
	tokens := d.tokens[session]
	q := QueryRequest{Session: session, TokenBytes: int64(len(tokens) * 4), Reply: reply}
	if d.scheme == kvstore.SchemeBlock {
		q.Blocks = kvstore.BlockKeys(uint64(session), tokens, d.blockTokens)
	} else {
		q.Key = kvstore.PatentKey(uint64(session), tokens)
	}
	return q
}

// export grows the session's prompt by 1-48 random tokens and stores it.
func (d *sessionDriver) export(rng *rand.Rand, session int64, reply Reply) ExportRequest {
	for range 1 + rng.IntN(48) {
		d.tokens[session] = append(d.tokens[session], rng.Uint32())
	}
	tokens := d.tokens[session]
	x := ExportRequest{Session: session, TokenBytes: int64(len(tokens) * 4), Reply: reply}
	if d.scheme == kvstore.SchemeBlock {
		x.Blocks, x.HeldBlocks = kvstore.BlockKeys(uint64(session), tokens, d.blockTokens), d.held[session]
		d.held[session] = len(x.Blocks)
	} else {
		key := kvstore.PatentKey(uint64(session), tokens)
		x.Key, x.Prev = key, d.prev[session]
		d.prev[session] = &key
	}
	return x
}

// rival asks the card's PCIe link and host memory for transfers of its
// own at random times, as the host's other traffic would: each splits
// the walks holding them.
type rival struct {
	eng      *sim.Engine
	ports    *Ports
	arrivals []sim.Time
}

func (r *rival) Handle(ev sim.Event) {
	switch ev.Op {
	case 0:
		r.arrivals = append(r.arrivals, r.ports.ToHost.Transfer(ev.Arg, sim.Event{}))
	case 1:
		r.arrivals = append(r.arrivals, r.ports.FromHost.Transfer(ev.Arg, sim.Event{}))
	case 2:
		r.ports.HostMemory.Access(memory.Request{Addr: 4096, Bytes: ev.Arg, Done: sim.Event{Handler: r, Op: 3}})
	case 3:
		r.arrivals = append(r.arrivals, r.eng.Now())
	}
}

// flatCard is a card's ports whose host memory and HBM (the exchange
// memory and the tables) are flat, over a U55C's PCIe and a CM6 drive.
func flatCard(t *testing.T, eng *sim.Engine) (Ports, *memory.FlatMemory, *memory.FlatMemory, *memory.SSD) {
	host, err := memory.FlatFromDRAM(eng, "host", memory.HostMemoryConfig())
	require.NoError(t, err)
	hbm, err := memory.NewFlatMemory(eng, "hbm", memory.HBM2U55CStreamBandwidth, memory.HBM2U55CIdleLatency)
	require.NoError(t, err)
	pcie, err := memory.NewPCIe(eng, memory.AlveoU55CXDMA())
	require.NoError(t, err)
	drive, err := memory.NewSSD(eng, memory.KioxiaCM6())
	require.NoError(t, err)
	return Ports{HostMemory: host, ToHost: pcie.CardToHost, FromHost: pcie.HostToCard, Exchange: hbm, Tables: hbm,
		Storage: drive, HostBytes: memory.HostMemoryConfig().CapacityBytes(), ExchangeBytes: 16 << 30, TablesBytes: 16 << 30}, host, hbm, drive
}

// runWalkCase runs sessions that export growing prompts and query them
// back, tasks overlapping, with the rival's traffic between, and returns
// what they leave.
func runWalkCase(t *testing.T, c walkCase, seed uint64, eventByEvent bool) walkOutcome {
	eng := sim.NewEngine(0)
	ports, host, hbm, drive := flatCard(t, eng)
	var peer *sim.Link
	var err error
	if c.peer {
		peer, err = sim.NewLink(eng, "p2p", sim.LinkConfig{Bandwidth: 25 * sim.GBps, Latency: 600 * sim.Nanosecond})
		require.NoError(t, err)
		ports.ExchangeLink = peer
	}
	var forward, inbound *sim.Link
	if c.chunk > 0 {
		forward, err = sim.NewLink(eng, "forward", sim.LinkConfig{Bandwidth: 12 * sim.GBps, Latency: 600 * sim.Nanosecond})
		require.NoError(t, err)
		inbound, err = sim.NewLink(eng, "inbound", sim.LinkConfig{Bandwidth: 12 * sim.GBps, Latency: 600 * sim.Nanosecond})
		require.NoError(t, err)
		ports.Forward, ports.Inbound = forward, inbound
	}
	dir := walkDirectory(c.scheme)
	cfg := DefaultConfig(dir)
	cfg.Placement, cfg.EventByEvent, cfg.QueryTasks, cfg.ExportTasks = c.placement, eventByEvent, 2, 2
	cfg.ChunkBytes = c.chunk
	placement := ports.HostBytes
	if c.placement == PlaceHBM {
		placement = ports.TablesBytes
	}
	if c.placement == PlaceURAM {
		cfg.Directory.StorageBytes = 1 << 34
	}
	f, err := NewEngine(eng, cfg, ports, placement)
	require.NoError(t, err)

	rng := rand.New(rand.NewPCG(seed, 7))
	got := collect{}
	riv := &rival{eng: eng, ports: &ports}
	sessions := newSessionDriver(c.scheme, dir.BlockTokens)
	for i := range int64(300) {
		eng.RunUntil(eng.Now() + sim.Time(rng.Int64N(int64(40*sim.Microsecond))))
		session := rng.Int64N(12)
		switch rng.IntN(4) {
		case 0: // the rival's traffic
			eng.Schedule(eng.Now()+sim.Time(rng.Int64N(int64(sim.Microsecond))), sim.Event{Handler: riv, Op: int32(rng.IntN(3)), Arg: 64 + rng.Int64N(8192)})
		case 1: // a query of the session's prompt
			f.Query(sessions.query(session, Reply{To: got, Arg: i}))
		default: // an export of the prompt grown by a turn
			f.Export(sessions.export(rng, session, Reply{To: got, Arg: i}))
		}
	}
	eng.Run()
	require.NoError(t, f.Failure())
	require.NoError(t, f.Check())
	out := walkOutcome{Results: got, End: eng.Now(), ToHost: ports.ToHost.Stats(), FromHost: ports.FromHost.Stats(),
		Host: host.Traffic(), Exchange: hbm.Traffic(), Drive: drive.Stats(), Directory: f.Directory().Stats(),
		RivalArrivals: riv.arrivals, Splits: f.splits, Events: int64(eng.Handled())}
	if peer != nil {
		out.Peer = peer.Stats()
	}
	if forward != nil {
		out.Forward, out.Inbound = forward.Stats(), inbound.Stats()
	}
	return out
}

// TestWalkMatchesEventByEvent runs the same overlapping queries, exports
// and rival traffic with operations in closed form and event by event: every
// task's stages, every port's totals, the rival's transfers and the
// directory must be the same; only the events differ, and the rival must
// have split walks.
func TestWalkMatchesEventByEvent(t *testing.T) {
	cases := []walkCase{
		{"tables in host memory, block scheme", PlaceHost, kvstore.SchemeBlock, false, 0},
		{"tables in host memory, patent scheme, peer link", PlaceHost, kvstore.SchemePatent, true, 0},
		{"tables in HBM, the exchange memory too", PlaceHBM, kvstore.SchemeBlock, false, 0},
		{"tables in URAM", PlaceURAM, kvstore.SchemePatent, true, 0},
		{"streamed imports and exports, tables in host memory, patent scheme", PlaceHost, kvstore.SchemePatent, false, 16 << 10},
		{"streamed imports and exports over a peer link, block scheme", PlaceHost, kvstore.SchemeBlock, true, 16 << 10},
		{"streamed imports and exports, tables in HBM", PlaceHBM, kvstore.SchemePatent, false, 16 << 10},
	}
	seeds := uint64(3)
	if testing.Short() {
		seeds = 1
	}
	for _, c := range cases {
		for seed := range seeds {
			t.Run(fmt.Sprintf("%s/seed %d", c.name, seed), func(t *testing.T) {
				events := runWalkCase(t, c, seed, true)
				closed := runWalkCase(t, c, seed, false)
				require.NotEmpty(t, events.Results)
				assert.Zero(t, events.Splits, "the event path books nothing ahead")
				t.Logf("events %d -> %d, splits %d", events.Events, closed.Events, closed.Splits)
				assert.Less(t, closed.Events, events.Events, "the closed form raises fewer events")
				if c.placement == PlaceHost {
					assert.Positive(t, closed.Splits, "the rival's traffic split walks")
				}
				events.Events, events.Splits, closed.Events, closed.Splits = 0, 0, 0, 0
				assert.Equal(t, events, closed)
			})
		}
	}
}

// hostTablesCard is a card whose tables, exchange memory and storage are
// all a flat host memory, with the blocks of a prompt of n 512-token blocks
// stored, so that a query of keys reads every block's bucket.
func hostTablesCard(t *testing.T, n int, eventByEvent bool) (*sim.Engine, *Engine, *memory.FlatMemory, []kvstore.Key) {
	eng := sim.NewEngine(0)
	host, err := memory.FlatFromDRAM(eng, "host", memory.HostMemoryConfig())
	require.NoError(t, err)
	pcie, err := memory.NewPCIe(eng, memory.AlveoU55CXDMA())
	require.NoError(t, err)
	ports := Ports{HostMemory: host, ToHost: pcie.CardToHost, FromHost: pcie.HostToCard, Exchange: host, Tables: host,
		Storage: host, HostBytes: memory.HostMemoryConfig().CapacityBytes(), ExchangeBytes: 1 << 30}
	cfg := DefaultConfig(goldenDirectory(kvstore.SchemeBlock, kvstore.ExportFull))
	cfg.EventByEvent = eventByEvent
	f, err := NewEngine(eng, cfg, ports, ports.HostBytes)
	require.NoError(t, err)
	keys := kvstore.BlockKeys(1, tokenRange(n*512, 1), 512)
	_, err = f.Directory().ExportBlocks(0, keys, 0)
	require.NoError(t, err)
	return eng, f, host, keys
}

// TestLongTableWalkCountsEveryAccess reads 300 bucket heads one after
// another (a query of 300 stored blocks), on idle ports: the stage takes 300 times one read, each a
// request, a host-memory read and the data back. (The phase counter was a
// byte until 2026-11-26: past 85 reads it wrapped and sent a second request
// instead of a read.)
func TestLongTableWalkCountsEveryAccess(t *testing.T) {
	took := map[int]sim.Time{}
	for _, blocks := range []int{1, 300} {
		for _, eventByEvent := range []bool{true, false} {
			eng, f, _, keys := hostTablesCard(t, blocks, eventByEvent)
			got := collect{}
			f.Query(QueryRequest{Session: 1, Blocks: keys, Reply: Reply{To: got}})
			eng.Run()
			st := got[0].Stages[2]
			require.Equal(t, StageBucketRead, st.Name)
			require.Equal(t, int64(blocks)*f.cfg.BucketBytes, st.Bytes)
			if d, ok := took[blocks]; ok {
				assert.Equal(t, d, st.End-st.Start, "closed form as events, %d blocks", blocks)
			}
			took[blocks] = st.End - st.Start
		}
	}
	assert.Equal(t, 300*took[1], took[300])
}

// TestTableWalkPastTwoTo32Phases: a table walk of count accesses ends
// after exactly its count x the phases of an access, however many. With
// two buckets and one-token blocks a block-scheme export of 80,000 tokens
// walks 1.6e9 links (4.8e9 phases with the tables in host memory): the
// phase counter, 32 bits until now, wrapped, and the walk went on for
// ever; uint32(count) cut a count past 2^32, and such a walk ended early.
func TestTableWalkPastTwoTo32Phases(t *testing.T) {
	const step = 100_000_000
	for _, c := range []struct {
		name      string
		placement Placement
		write     bool
		count     int
		end       int // the phases: count x the phases of an access
	}{
		{"host reads", PlaceHost, false, 1_500_000_000, 4_500_000_000},
		{"host writes", PlaceHost, true, 2_200_000_000, 4_400_000_000},
		{"hbm", PlaceHBM, false, 5_000_000_000, 5_000_000_000},
		{"uram", PlaceURAM, false, 5_000_000_000, 5_000_000_000},
		{"within 2^32", PlaceHost, false, 1_000_000_000, 3_000_000_000},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := &Engine{cfg: Config{Placement: c.placement, URAMCycles: 2}}
			op := subOp{kind: subTable, write: c.write, count: c.count, bytes: 8}
			for range c.end / step / 2 {
				op.phase += step
			}
			assert.NotEqual(t, portNone, e.phaseOf(&op).port, "halfway")
			for range c.end/step - c.end/step/2 {
				op.phase += step
			}
			assert.Equal(t, portNone, e.phaseOf(&op).port, "after the last phase")
			op.phase--
			assert.NotEqual(t, portNone, e.phaseOf(&op).port, "the last phase")
		})
	}
}

// hostTicker reads host memory every period until stop, as the host's own
// traffic would: each read splits a walk holding host memory.
type hostTicker struct {
	eng          *sim.Engine
	host         *memory.FlatMemory
	period, stop sim.Time
}

func (k *hostTicker) Handle(sim.Event) {
	k.host.Access(memory.Request{Addr: 4096, Bytes: 64})
	if k.eng.Now()+k.period < k.stop {
		k.eng.Schedule(k.eng.Now()+k.period, sim.Event{Handler: k})
	}
}

// TestSplitLongWalkBooksLittle reads 4,000 bucket heads from host tables
// (12,000 phases) while the host reads host memory every 5 us, splitting
// the walk about 1,000 times: the stage takes what it takes event by event,
// and the closed form books each phase a bounded number of times. (Until
// 2026-11-26 a walk booked every phase left at once: each split took them
// back and the next walk booked them all again, 6 million bookings here,
// 100 times the events' wall time at 8,000 reads.)
func TestSplitLongWalkBooksLittle(t *testing.T) {
	const blocks = 4000
	took := map[bool]sim.Time{}
	for _, eventByEvent := range []bool{true, false} {
		eng, f, host, keys := hostTablesCard(t, blocks, eventByEvent)
		eng.Schedule(sim.Microsecond, sim.Event{Handler: &hostTicker{eng: eng, host: host, period: 5 * sim.Microsecond, stop: 6 * sim.Millisecond}})
		got := collect{}
		f.Query(QueryRequest{Session: 1, Blocks: keys, Reply: Reply{To: got}})
		eng.Run()
		require.Equal(t, blocks, got[0].MatchedBlocks)
		st := got[0].Stages[2]
		require.Equal(t, StageBucketRead, st.Name)
		took[eventByEvent] = st.End - st.Start
		if !eventByEvent {
			assert.Greater(t, f.splits, int64(500), "the host's reads split the walk")
			assert.Less(t, f.booked, int64(20*3*blocks), "bookings, %d splits", f.splits)
		}
	}
	assert.Equal(t, took[true], took[false])
}
