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

// stressRival asks every port for transfers and looks at every port's
// state at random times, recording what it sees.
type stressRival struct {
	eng   *sim.Engine
	ports *Ports
	host  *memory.FlatMemory
	hbm   *memory.FlatMemory
	seen  []any
}

func (r *stressRival) links() []*sim.Link {
	ls := []*sim.Link{r.ports.ToHost, r.ports.FromHost}
	if r.ports.ExchangeLink != nil {
		ls = append(ls, r.ports.ExchangeLink)
	}
	if r.ports.Forward != nil {
		ls = append(ls, r.ports.Forward)
	}
	return ls
}

func (r *stressRival) Handle(ev sim.Event) {
	ls := r.links()
	switch ev.Op {
	case 0: // a transfer on a link
		l := ls[int(ev.Arg)%len(ls)]
		r.seen = append(r.seen, l.Transfer(64+ev.Arg%4096, sim.Event{}))
	case 1: // an access to host memory
		r.host.Access(memory.Request{Addr: 4096, Bytes: 64 + ev.Arg%4096, Done: sim.Event{Handler: r, Op: 9}})
	case 2: // an access to the HBM
		r.hbm.Access(memory.Request{Addr: 4096, Bytes: 64 + ev.Arg%4096, Write: ev.Arg%2 == 0, Done: sim.Event{Handler: r, Op: 9}})
	case 3: // a look at a link's totals
		r.seen = append(r.seen, ls[int(ev.Arg)%len(ls)].Stats())
	case 4: // a look at a link's free time
		r.seen = append(r.seen, ls[int(ev.Arg)%len(ls)].FreeAt())
	case 5: // a look at the memories' traffic
		r.seen = append(r.seen, r.host.Traffic(), r.hbm.Traffic(), r.hbm.Stats())
	case 9:
		r.seen = append(r.seen, r.eng.Now())
	}
}

type stressCase struct {
	placement     Placement
	scheme        kvstore.Scheme
	peer, forward bool
	engines       int
	storageIsHost bool
}

type stressOutcome struct {
	Results          []map[int64]Result
	End              sim.Time
	ToHost, FromHost sim.LinkStats
	Host, HBM        memory.Traffic
	Peer, Fwd        sim.LinkStats
	Seen             []any
	Dirs             []kvstore.DirectoryStats
}

func runStress(t *testing.T, c stressCase, seed uint64, eventByEvent bool) (stressOutcome, int64, int) {
	eng := sim.NewEngine(0)
	host, err := memory.FlatFromDRAM(eng, "host", memory.HostMemoryConfig())
	require.NoError(t, err)
	hbm, err := memory.NewFlatMemory(eng, "hbm", memory.HBM2U55CStreamBandwidth, memory.HBM2U55CIdleLatency)
	require.NoError(t, err)
	pcie, err := memory.NewPCIe(eng, memory.AlveoU55CXDMA())
	require.NoError(t, err)
	var storage Memory = host
	if !c.storageIsHost {
		drive, err := memory.NewSSD(eng, memory.KioxiaCM6())
		require.NoError(t, err)
		storage = drive
	}
	ports := Ports{HostMemory: host, ToHost: pcie.CardToHost, FromHost: pcie.HostToCard, Exchange: hbm, Tables: hbm,
		Storage: storage, HostBytes: memory.HostMemoryConfig().CapacityBytes(), ExchangeBytes: 16 << 30, TablesBytes: 16 << 30}
	if c.peer {
		ports.ExchangeLink, err = sim.NewLink(eng, "p2p", sim.LinkConfig{Bandwidth: 25 * sim.GBps, Latency: 600 * sim.Nanosecond})
		require.NoError(t, err)
	}
	if c.forward {
		ports.Forward, err = sim.NewLink(eng, "fwd", sim.LinkConfig{Bandwidth: 12 * sim.GBps, Latency: 500 * sim.Nanosecond})
		require.NoError(t, err)
	}
	dir := walkDirectory(c.scheme)
	if c.placement == PlaceURAM {
		dir.StorageBytes = 1 << 34
	}
	placement := ports.HostBytes
	if c.placement == PlaceHBM {
		placement = ports.TablesBytes
	}
	var engines []*Engine
	for i := range c.engines {
		cfg := DefaultConfig(dir)
		cfg.Name = fmt.Sprintf("fpga%d", i)
		cfg.Placement, cfg.EventByEvent, cfg.QueryTasks, cfg.ExportTasks = c.placement, eventByEvent, 3, 3
		f, err := NewEngine(eng, cfg, ports, placement)
		require.NoError(t, err)
		engines = append(engines, f)
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	got := make([]collect, c.engines)
	for i := range got {
		got[i] = collect{}
	}
	riv := &stressRival{eng: eng, ports: &ports, host: host, hbm: hbm}
	sessions := newSessionDriver(c.scheme, dir.BlockTokens)
	for i := range int64(400) {
		eng.RunUntil(eng.Now() + sim.Time(rng.Int64N(int64(30*sim.Microsecond))))
		e := rng.IntN(c.engines)
		f := engines[e]
		session := rng.Int64N(10)*int64(c.engines) + int64(e)
		switch rng.IntN(5) {
		case 0, 1:
			for range 1 + rng.IntN(4) {
				eng.Schedule(eng.Now()+sim.Time(rng.Int64N(int64(20*sim.Microsecond))), sim.Event{Handler: riv, Op: int32(rng.IntN(6)), Arg: rng.Int64N(1 << 20)})
			}
		case 2:
			f.Query(sessions.query(session, Reply{To: got[e], Arg: i}))
		default:
			f.Export(sessions.export(rng, session, Reply{To: got[e], Arg: i}))
		}
	}
	eng.Run()
	out := stressOutcome{End: eng.Now(), ToHost: ports.ToHost.Stats(), FromHost: ports.FromHost.Stats(),
		Host: host.Traffic(), HBM: hbm.Traffic(), Seen: riv.seen}
	if ports.ExchangeLink != nil {
		out.Peer = ports.ExchangeLink.Stats()
	}
	if ports.Forward != nil {
		out.Fwd = ports.Forward.Stats()
	}
	splits, onWires := int64(0), 0
	for i, f := range engines {
		require.NoError(t, f.Failure())
		require.NoError(t, f.Check())
		out.Results = append(out.Results, got[i])
		out.Dirs = append(out.Dirs, f.Directory().Stats())
		splits += f.splits
		onWires += f.onWires
	}
	return out, splits, onWires
}

// TestWalkStressMatchesEventByEvent is TestWalkMatchesEventByEvent with a
// rival on every port that also looks at their state (Stats, FreeAt,
// Traffic), one or two engines on the same ports, and storage in host
// memory: the rival sees the same, and every engine's onWires is 0 at the
// end.
func TestWalkStressMatchesEventByEvent(t *testing.T) {
	var cases []stressCase
	for _, pl := range []Placement{PlaceHost, PlaceHBM, PlaceURAM} {
		for _, sc := range []kvstore.Scheme{kvstore.SchemeBlock, kvstore.SchemePatent} {
			for _, n := range []int{1, 2} {
				for _, pf := range []bool{false, true} {
					cases = append(cases, stressCase{placement: pl, scheme: sc, peer: pf, forward: !pf, engines: n, storageIsHost: n == 2 && pf})
				}
			}
		}
	}
	seeds := uint64(3)
	if testing.Short() { // the race run: one seed, host tables (the default)
		seeds = 1
	}
	for _, c := range cases {
		if testing.Short() && c.placement != PlaceHost {
			continue
		}
		for seed := range seeds {
			t.Run(fmt.Sprintf("%+v/%d", c, seed), func(t *testing.T) {
				events, _, ow := runStress(t, c, seed, true)
				require.Zero(t, ow)
				closed, splits, ow := runStress(t, c, seed, false)
				assert.Zero(t, ow, "onWires back to 0")
				t.Logf("splits %d", splits)
				assert.Equal(t, events, closed)
			})
		}
	}
}
