package hostcpu

import (
	"fmt"
	"github.com/kvcosim/kvcosim/hostcpu/mech"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/fpga"
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
	"github.com/kvcosim/kvcosim/workloads"
)

// rigShape is tinylm's KV (2 layers, KV width 32, float32): 512 B a token.
var rigShape = kvstore.KVShape{Layers: 2, KWidth: 32, VWidth: 32, ElemBytes: 4}

// rig is a storing design's System over real memories, links, a storage
// pool (or the FPGAs' directory) and fake executors: what the scenario
// builds, small enough to reason about.
type rig struct {
	s    *System
	eng  *sim.Engine
	pool *kvstore.Pool
	dir  *kvstore.Directory
}

// rigSpec is what a rig is built from.
type rigSpec struct {
	cfg Config
	// kvTokens is each accelerator's KV memory; tiers the pool's tiers
	// (if none, 8 MiB, below 1 MiB of DRAM for a design with a DRAM tier)
	kvTokens int64
	tiers    []kvstore.Tier
	nodes    int
	sessions []workloads.Session
}

// rigConfig is design's configuration with its own mechanisms (an
// automatic look-ahead window), 512 B of KV a token, 2 layers, an
// asynchronous buffer of 4 MiB and a read buffer of 1 MiB.
func rigConfig(t *testing.T, design string) Config {
	d, err := store.ParseDesign(design)
	require.NoError(t, err)
	cfg := validConfig()
	cfg.Design, cfg.Mech, cfg.Layers, cfg.KVBytesPerToken = d, d.Mech, 2, rigShape.BytesPerToken()
	cfg.Mech.AsyncBufferBytes, cfg.Mech.PreloadBufferBytes = 4<<20, 1<<20
	cfg.Mech.PrefetchWindowTurns = mech.AutoWindow
	cfg.HostAccessLatency = 100 * sim.Nanosecond
	if d.ChunkTokens > 0 {
		cfg.Scheme, cfg.BlockTokens = kvstore.SchemeBlock, 16
	}
	return cfg
}

func newRig(t *testing.T, spec rigSpec) *rig {
	t.Helper()
	eng := sim.NewEngine(64)
	r := &rig{eng: eng}
	cfg := spec.cfg
	switch {
	case spec.tiers != nil:
	case cfg.Design.DRAMTier:
		spec.tiers = []kvstore.Tier{{Name: "dram", Bytes: 1 << 20}, {Name: "ssd", Bytes: 8 << 20}}
	default:
		spec.tiers = []kvstore.Tier{{Name: "ssd", Bytes: 8 << 20}}
	}
	if spec.nodes == 0 {
		spec.nodes = 1
	}
	dirCfg := kvstore.DirectoryConfig{Scheme: cfg.Scheme, BlockTokens: cfg.BlockTokens, BucketsLog2: 10, RegionBytes: 16 << 10,
		StorageBytes: spec.tiers[len(spec.tiers)-1].Bytes, Policy: kvstore.FIFO1First, DeleteSuperseded: true,
		Layout: kvstore.LayoutLayerMajor, Mode: cfg.ExportMode, Shape: rigShape, CheckInvariants: true}
	flat := func(name string) *memory.FlatMemory {
		m, err := memory.NewFlatMemory(eng, name, 10*sim.GBps, sim.Microsecond)
		require.NoError(t, err)
		return m
	}
	link := func(name string) *sim.Link {
		l, err := sim.NewLink(eng, name, sim.LinkConfig{Bandwidth: 16 * sim.GBps, Latency: sim.Microsecond})
		require.NoError(t, err)
		return l
	}
	var devs []memory.Device
	for _, tier := range spec.tiers {
		devs = append(devs, flat(tier.Name))
	}
	if cfg.Design.Stores && !cfg.Design.Card {
		var err error
		r.pool, err = kvstore.NewPool(dirCfg, spec.tiers)
		require.NoError(t, err)
		r.dir = r.pool.Tier(0)
	} else if cfg.Design.Card {
		var err error
		r.dir, err = kvstore.NewDirectory(dirCfg)
		require.NoError(t, err)
	}
	var nodes []Node
	for i := range spec.nodes {
		name := func(s string) string { return fmt.Sprintf("node%d.%s", i, s) }
		exec := &fakeExecutor{eng: eng, took: sim.Millisecond}
		kv, err := accel.NewKVMemory(spec.kvTokens*cfg.KVBytesPerToken, cfg.KVBytesPerToken, 16)
		require.NoError(t, err)
		n := Node{Exec: exec, KV: kv, Node: store.Node{HostMemory: flat(name("host")), HostMemoryBytes: 1 << 30,
			ToGPU: link(name("to-gpu")), FromGPU: link(name("from-gpu")), Tiers: devs}}
		if cfg.Design.Card {
			ports := fpga.Ports{HostMemory: n.HostMemory, ToHost: link(name("card-to-host")), FromHost: link(name("host-to-card")),
				Exchange: flat(name("hbm")), Tables: flat(name("tables")), Storage: devs[0], HostBytes: 1 << 30, ExchangeBytes: 1 << 30, TablesBytes: 1 << 30}
			n.P2PToGPU, n.P2PFromGPU = link(name("p2p-to")), link(name("p2p-from"))
			n.FPGA, err = fpga.NewSharedEngine(eng, fpga.DefaultConfig(dirCfg), ports, ports.HostBytes, r.dir)
			require.NoError(t, err)
		}
		nodes = append(nodes, n)
	}
	s, err := NewSystem(eng, cfg, nodes, r.pool, &workloads.Workload{Sessions: spec.sessions}, sim.NewStreams(1))
	require.NoError(t, err)
	r.s = s
	return r
}

// run runs the rig to its end and checks the run's counts add up.
func (r *rig) run(t *testing.T) Counts {
	t.Helper()
	r.eng.Run()
	require.NoError(t, r.s.Failure())
	_, err := r.s.Conservation()
	require.NoError(t, err)
	return r.s.Counts()
}

// chats are n sessions of turns turns each: a prompt of first new tokens,
// then follow-ups of 20 new tokens, 10 outputs each, gapMs apart, the
// sessions starting 1 ms apart; with ids, if ids.
func chats(n, turns int, first int64, gapMs int64, ids bool) []workloads.Session {
	var out []workloads.Session
	for id := range n {
		sess := workloads.Session{ID: int64(id), Start: sim.Time(id) * sim.Millisecond}
		for k := range turns {
			newTokens := int64(20)
			if k == 0 {
				newTokens = first
			}
			tr := turn(newTokens, 10, gapMs)
			if ids {
				tr = idTurn(uint32(1000*id+100*k+1), newTokens, 10, false)
				tr.Gap = sim.Time(gapMs) * sim.Millisecond
			}
			sess.Turns = append(sess.Turns, tr)
		}
		out = append(out, sess)
	}
	return out
}

// byTurn indexes records by session and turn.
func byTurn(recs []Record) map[[2]int64]Record {
	m := map[[2]int64]Record{}
	for _, r := range recs {
		m[[2]int64{r.Session, int64(r.Turn)}] = r
	}
	return m
}
