package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/fpga"
	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
)

// fakeHost is a Host without a System: it runs the engine the node's FPGA
// runs on, ends a move or a core's work as soon as it is asked for, and
// keeps everything a store reported.
type fakeHost struct {
	eng   *sim.Engine
	pool  *kvstore.Pool
	node  Node
	found map[Ticket]kvstore.Found
	// importing: when a store said it began moving a lookup's data
	importing map[Ticket]sim.Time
	saved     map[Ticket]Outcome
	// ends counts each ticket's ends; moved its bytes moved, hops the
	// paths they took
	ends  map[Ticket]int
	moved map[Ticket]int64
	hops  map[Ticket][][]Hop
	fails []error
}

func (h *fakeHost) Now() sim.Time       { return h.eng.Now() }
func (h *fakeHost) Pool() *kvstore.Pool { return h.pool }
func (h *fakeHost) Node(i int) *Node {
	if i != 0 {
		panic("fakeHost: one node")
	}
	return &h.node
}
func (h *fakeHost) Move(t Ticket, hops []Hop, bytes int64) {
	h.moved[t] += bytes
	h.hops[t] = append(h.hops[t], hops)
	h.ends[t]++
}
func (h *fakeHost) Compute(node int, service sim.Time, t Ticket) {
	if node != 0 || service < 0 {
		h.fails = append(h.fails, assert.AnError)
	}
	h.ends[t]++
}
func (h *fakeHost) Found(t Ticket, f kvstore.Found)    { h.found[t] = f }
func (h *fakeHost) Saved(t Ticket, o Outcome)          { h.saved[t] = o }
func (h *fakeHost) Importing(t Ticket, since sim.Time) { h.importing[t] = since }
func (h *fakeHost) End(t Ticket)                       { h.ends[t]++ }
func (h *fakeHost) Later(t Ticket)                     { h.eng.Schedule(h.eng.Now(), sim.Event{Handler: h, Arg: int64(t)}) }
func (h *fakeHost) Handle(ev sim.Event)                { h.ends[Ticket(ev.Arg)]++ }
func (h *fakeHost) Fail(err error)                     { h.fails = append(h.fails, err) }

// shape is a small model's KV: 2 layers of 64-wide K and V in 2-byte
// elements, 512 B a token.
var shape = kvstore.KVShape{Layers: 2, KWidth: 64, VWidth: 64, ElemBytes: 2}

// contractDirectory is a store of 256 KiB in 4 KiB regions.
func contractDirectory(scheme kvstore.Scheme) kvstore.DirectoryConfig {
	return kvstore.DirectoryConfig{Scheme: scheme, BlockTokens: 8, BucketsLog2: 8, RegionBytes: 4 << 10, StorageBytes: 256 << 10,
		Policy: kvstore.FIFO1First, DeleteSuperseded: true, Layout: kvstore.LayoutLayerMajor, Shape: shape, CheckInvariants: true}
}

// newFakeHost builds one node for design d: a pool of a 16 KiB top tier
// above the directory's 256 KiB for a CPU-run store, an FPGA over the
// directory for a design with a card.
func newFakeHost(t *testing.T, d Design, scheme kvstore.Scheme) *fakeHost {
	eng := sim.NewEngine(0)
	flat := func(name string) *memory.FlatMemory {
		m, err := memory.NewFlatMemory(eng, name, 10*sim.GBps, sim.Microsecond)
		require.NoError(t, err)
		return m
	}
	link := func(name string) *sim.Link {
		l, err := sim.NewLink(eng, name, sim.LinkConfig{Bandwidth: 10 * sim.GBps, Latency: sim.Microsecond})
		require.NoError(t, err)
		return l
	}
	h := &fakeHost{eng: eng, found: map[Ticket]kvstore.Found{}, importing: map[Ticket]sim.Time{}, saved: map[Ticket]Outcome{}, ends: map[Ticket]int{},
		moved: map[Ticket]int64{}, hops: map[Ticket][][]Hop{}}
	h.node = Node{HostMemory: flat("host"), HostMemoryBytes: 1 << 30, ToGPU: link("to-gpu"), FromGPU: link("from-gpu"),
		Tiers: []memory.Device{flat("dram"), flat("ssd")}}
	dir := contractDirectory(scheme)
	switch {
	case d.Card:
		ports := fpga.Ports{HostMemory: h.node.HostMemory, ToHost: link("card-to-host"), FromHost: link("host-to-card"), Exchange: flat("hbm"),
			Tables: flat("tables"), Storage: h.node.Tiers[1], HostBytes: 1 << 30, ExchangeBytes: 1 << 30, TablesBytes: 1 << 30}
		h.node.P2PToGPU, h.node.P2PFromGPU = link("p2p-to"), link("p2p-from")
		engine, err := fpga.NewEngine(eng, fpga.DefaultConfig(dir), ports, ports.HostBytes)
		require.NoError(t, err)
		h.node.FPGA = engine
	case d.Stores:
		pool, err := kvstore.NewPool(dir, []kvstore.Tier{{Name: "dram", Bytes: 16 << 10}, {Name: "ssd", Bytes: dir.StorageBytes}})
		require.NoError(t, err)
		h.pool = pool
	}
	return h
}

// history is a session's patent key of n tokens.
func history(session int64, n int64) kvstore.Key {
	return kvstore.Key{Tokens: n, Hash: uint64(session)<<32 | uint64(n)}
}

// exportOf is session's export of its n-token history.
func exportOf(session, n int64) Export {
	return Export{Session: session, Bytes: n * shape.BytesPerToken(), Object: kvstore.Object{Key: history(session, n)}, HistoryTokens: n}
}

// lookupOf is a lookup of session's n-token history.
func lookupOf(session, n int64) Lookup {
	return Lookup{Session: session, Object: kvstore.Object{Key: history(session, n)}, HistoryTokens: n, PromptTokens: n + 4}
}

// save stores x under ticket t and checks the save's parts all ended.
func (h *fakeHost) save(t *testing.T, st Store, tk Ticket, x Export) Outcome {
	parts := st.Save(tk, x)
	h.eng.Run()
	assert.Equal(t, parts, h.ends[tk], "each of the save's parts ends its ticket once")
	return h.saved[tk]
}

// query looks l up under ticket tk and checks it ended once.
func (h *fakeHost) query(t *testing.T, st Store, tk Ticket, l Lookup) kvstore.Found {
	st.Query(tk, l)
	h.eng.Run()
	assert.Equal(t, 1, h.ends[tk], "a lookup ends its ticket once")
	return h.found[tk]
}

// TestStoreContract runs every design of the design table against a fake
// host: a miss on an empty store, a save and the hit and import after it,
// an offload, a save that cannot fit, and (a CPU-run store's pool) the
// moves between tiers, imports from the asynchronous buffer and from host
// memory after a prefetch.
func TestStoreContract(t *testing.T) {
	for _, d := range designs {
		t.Run(d.Name, func(t *testing.T) {
			h := newFakeHost(t, d, kvstore.SchemePatent)
			st := d.New(h, Params{Scheme: kvstore.SchemePatent, CPUHashBandwidth: sim.GBps, HostAccessLatency: 100 * sim.Nanosecond})
			assert.Contains(t, []string{PartCPU, PartFPGA}, st.Part())

			miss := h.query(t, st, 1, lookupOf(7, 16))
			assert.False(t, miss.Hit, "an empty store misses")

			x := exportOf(7, 16)
			st.Offload(2, x)
			h.eng.Run()
			assert.Equal(t, 1, h.ends[2], "an offload ends its ticket once")

			out := h.save(t, st, 3, x)
			require.NoError(t, out.Err)
			hit := h.query(t, st, 4, lookupOf(7, 16))
			assert.Equal(t, d.Stores, hit.Hit, "a storing design finds what it saved")
			_, missMoved := h.importing[1]
			assert.False(t, missMoved, "a miss moves no data within its lookup")
			if since, ok := h.importing[4]; ok {
				assert.True(t, d.Card, "only a card imports within its lookup")
				assert.Less(t, since, h.eng.Now(), "the card's import takes time after its decision")
			} else {
				assert.False(t, d.Card && d.Stores, "a card's hit says when its import began, so the host books it as import")
			}

			in := Import{Bytes: x.Bytes, Extents: hit.Extents}
			parts := st.Import(5, in)
			h.eng.Run()
			assert.Equal(t, parts, h.ends[5], "each of the import's parts ends its ticket once")
			if d.Stores {
				assert.Equal(t, x.Bytes, h.moved[5], "an import moves every byte reused")
				assert.Equal(t, x.Bytes, h.moved[2], "an offload moves every byte exported")
			}

			huge := exportOf(8, 1<<20) // 512 MiB: more than the store
			failed := h.save(t, st, 6, huge)
			assert.Equal(t, d.Stores, failed.Err != nil, "a save that cannot fit reports its error")
			assert.Empty(t, h.fails, "a failed save is not a broken invariant")
		})
	}
}

// TestCPURunStoreContract holds what the CPU-run stores do with the pool's
// tiers: demotions move in the background, an import takes the bytes an
// asynchronous export is still writing from its buffer, and after a
// prefetch the lower tier's bytes only cross PCIe.
func TestCPURunStoreContract(t *testing.T) {
	forEachCPURunStore(t, nil, func(t *testing.T, _ Design, h *fakeHost, st Store) {
		first := h.save(t, st, 1, exportOf(1, 24)) // 12 KiB: the top tier's 16 KiB hold one
		require.NoError(t, first.Err)
		require.NoError(t, h.save(t, st, 2, exportOf(2, 24)).Err)
		assert.Positive(t, h.moved[Background], "the first object is demoted in the background")

		found := h.query(t, st, 3, lookupOf(1, 24))
		require.True(t, found.Hit)
		require.NotEmpty(t, found.Extents)
		assert.Positive(t, found.Extents[0].Tier, "the demoted object is found below the top tier")

		bytes := int64(24) * shape.BytesPerToken()
		st.Import(4, Import{Bytes: bytes, Extents: found.Extents, Staged: true})
		for _, hops := range h.hops[4] {
			assert.Equal(t, []Hop{{Link: h.node.ToGPU}}, hops, "a prefetched extent only crosses PCIe")
		}

		st.Import(5, Import{Bytes: bytes, Extents: found.Extents, Saving: found.Extents})
		assert.Equal(t, bytes, h.moved[5])
		for _, hops := range h.hops[5] {
			assert.Equal(t, []Hop{{Link: h.node.ToGPU}}, hops, "bytes still being saved come from the buffer")
		}

		st.Import(6, Import{Bytes: bytes, Extents: found.Extents})
		for _, hops := range h.hops[6] {
			assert.Len(t, hops, 3, "storage, host memory, PCIe")
		}
		assert.Empty(t, h.fails)
	})
}

// TestStoreContractBlocks: in the block scheme every storing design finds
// the blocks it saved, by their prefix.
func TestStoreContractBlocks(t *testing.T) {
	for _, d := range designs {
		t.Run(d.Name, func(t *testing.T) {
			h := newFakeHost(t, d, kvstore.SchemeBlock)
			st := d.New(h, Params{Scheme: kvstore.SchemeBlock, CPUHashBandwidth: sim.GBps, HostAccessLatency: 100 * sim.Nanosecond})
			ids := make([]uint32, 32)
			for i := range ids {
				ids[i] = uint32(i)
			}
			blocks := kvstore.BlockKeys(1, ids, 8)
			x := Export{Session: 1, Bytes: 32 * shape.BytesPerToken(), Object: kvstore.Object{Blocks: blocks}, HistoryTokens: 32}
			require.NoError(t, h.save(t, st, 1, x).Err)
			for i, given := range []bool{false, true} {
				tk := Ticket(2 + i)
				found := h.query(t, st, tk, Lookup{Session: 2, Object: kvstore.Object{Blocks: blocks[:3]}, HistoryTokens: 0, PromptTokens: 24, KeysGiven: given})
				if d.Stores {
					assert.Equal(t, 3, found.MatchedBlocks, "another session's prefix is found")
				} else {
					assert.Zero(t, found.MatchedBlocks)
				}
			}
			assert.Empty(t, h.fails)
		})
	}
}

// TestCardDefersItsImport: for a layer-wise load the card's query finds
// the extents and leaves them to Import, which the card then reads and
// forwards (store.load: layerwise was refused for the card until
// 2026-11-27).
func TestCardDefersItsImport(t *testing.T) {
	d, err := ParseDesign("fpga")
	require.NoError(t, err)
	h := newFakeHost(t, d, kvstore.SchemePatent)
	st := d.New(h, Params{Scheme: kvstore.SchemePatent, DeferImport: true})
	x := exportOf(7, 16)
	require.NoError(t, h.save(t, st, 1, x).Err)
	found := h.query(t, st, 2, lookupOf(7, 16))
	require.True(t, found.Hit)
	assert.Empty(t, h.importing, "the query moves no data")
	var bytes int64
	for _, e := range found.Extents {
		bytes += e.Bytes
	}
	assert.Equal(t, x.Bytes, bytes, "the query hands back every extent it found")

	before := h.eng.Now()
	parts := st.Import(3, Import{Session: 7, Bytes: x.Bytes, Extents: found.Extents})
	h.eng.Run()
	assert.Equal(t, 1, parts)
	assert.Equal(t, 1, h.ends[3], "the import ends its ticket once")
	assert.Greater(t, h.eng.Now(), before, "the card reads and forwards the extents")
	assert.Zero(t, h.moved[3], "the card moves them, not the host")
}

// TestImportsTakeTheNodesCopies: on a node whose host copy is pageable
// every CPU-run store's import passes the driver's staging copy before
// PCIe, from its tier, from a prefetch and from the async buffer alike;
// a design whose connector lands KV in a buffer of its own (lmcache, whose
// node has the paged-copy link, as the scenario builds it) then copies it
// into the paged blocks, the others end at PCIe.
func TestImportsTakeTheNodesCopies(t *testing.T) {
	copies := func(t *testing.T, h *fakeHost) {
		link := func(name string) *sim.Link {
			l, err := sim.NewLink(h.eng, name, sim.LinkConfig{Bandwidth: sim.GBps})
			require.NoError(t, err)
			return l
		}
		h.node.Pageable, h.node.PagedCopy = link("pageable"), link("paged-copy")
	}
	forEachCPURunStore(t, copies, func(t *testing.T, d Design, h *fakeHost, st Store) {
		if !d.PagedCopy {
			h.node.PagedCopy = nil
		}
		require.NoError(t, h.save(t, st, 1, exportOf(1, 24)).Err)
		require.NoError(t, h.save(t, st, 2, exportOf(2, 24)).Err) // demotes the first
		found := h.query(t, st, 3, lookupOf(1, 24))
		require.True(t, found.Hit)

		tail := []Hop{{Link: h.node.Pageable}, {Link: h.node.ToGPU}}
		if d.PagedCopy {
			tail = append(tail, Hop{Link: h.node.PagedCopy})
		}
		bytes := int64(24) * shape.BytesPerToken()
		for tk, in := range map[Ticket]Import{
			4: {Bytes: bytes, Extents: found.Extents},
			5: {Bytes: bytes, Extents: found.Extents, Staged: true},
			6: {Bytes: bytes, Extents: found.Extents, Saving: found.Extents},
		} {
			st.Import(tk, in)
			require.NotEmpty(t, h.hops[tk])
			for _, hops := range h.hops[tk] {
				require.GreaterOrEqual(t, len(hops), len(tail))
				assert.Equal(t, tail, hops[len(hops)-len(tail):], "import %d", tk)
			}
		}
		h.eng.Run()
		assert.Empty(t, h.fails)
		for _, x := range found.Extents { // a pre-load takes the import's way (Node.ImportHops)
			for _, staged := range []bool{false, true} {
				hops := h.node.ImportHops(x, staged)
				assert.Equal(t, tail, hops[len(hops)-len(tail):], "a pre-load, staged %v", staged)
			}
		}
	})
}

// forEachCPURunStore runs check, as a subtest, on each CPU-run design's
// store over a fresh fake host in the patent scheme, its node first
// changed by ready (nil: as built).
func forEachCPURunStore(t *testing.T, ready func(*testing.T, *fakeHost), check func(*testing.T, Design, *fakeHost, Store)) {
	for _, d := range designs {
		if !d.Stores || d.Card {
			continue
		}
		t.Run(d.Name, func(t *testing.T) {
			h := newFakeHost(t, d, kvstore.SchemePatent)
			if ready != nil {
				ready(t, h)
			}
			check(t, d, h, d.New(h, Params{Scheme: kvstore.SchemePatent, CPUHashBandwidth: sim.GBps, HostAccessLatency: 100 * sim.Nanosecond}))
		})
	}
}
