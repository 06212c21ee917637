package fpga

import (
	"github.com/kvcosim/kvcosim/kvstore"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
)

func TestConfigRejects(t *testing.T) {
	base := DefaultConfig(goldenDirectory(kvstore.SchemePatent, kvstore.ExportFull))
	cases := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"zero region", func(c *Config) { c.Directory.RegionBytes = 0 }, "region_bytes = 0"},
		{"store below a region", func(c *Config) { c.Directory.StorageBytes = 1 << 20 }, "smaller than one"},
		{"no buckets", func(c *Config) { c.Directory.BucketsLog2 = 0 }, "buckets = 2^0"},
		{"tables too big for URAM", func(c *Config) { c.Placement = PlaceURAM }, "tables need"},
		{"no lanes", func(c *Config) { c.Hash.Lanes = 0 }, "lanes = 0"},
		{"no tasks", func(c *Config) { c.QueryTasks = 0 }, "query_tasks = 0"},
		{"bad shape", func(c *Config) { c.Directory.Shape.Layers = 0 }, "shape"},
		{"negative delay", func(c *Config) { c.Directory.FreeDelay = -1 }, "free_delay"},
	}
	for _, c := range cases {
		cfg := base
		c.mutate(&cfg)
		assert.ErrorContains(t, cfg.Validate(1<<40), c.want, c.name)
	}
	for _, n := range []int64{0, 1, 1000, -4} {
		_, err := kvstore.BucketsLog2(n)
		assert.ErrorContains(t, err, "must be a power of two", "%d buckets", n)
	}
	n, err := kvstore.BucketsLog2(1 << 20)
	require.NoError(t, err)
	assert.Equal(t, 20, n)
	_, err = Placements.Parse("disk")
	assert.ErrorContains(t, err, "(allowed: host, hbm, uram)")
	_, err = kvstore.Layouts.Parse("row-major")
	assert.ErrorContains(t, err, "(allowed: claim9, token-major, layer-major)")
}

func TestObjectLargerThanTheStoreFailsTheExport(t *testing.T) {
	cfg := DefaultConfig(goldenDirectory(kvstore.SchemePatent, kvstore.ExportFull))
	cfg.Directory.StorageBytes = 64 << 20 // 32 regions: 500 tokens of Llama-3-8B
	s := newTestSystem(t, cfg)
	r := s.export(ExportRequest{Session: 1, Key: kvstore.Key{Tokens: 1000, Hash: 1}, TokenBytes: 4000})
	assert.ErrorContains(t, r.Err, "larger than the whole store")
	assert.NoError(t, s.fpga.Failure(), "not an invariant violation")
	assert.NoError(t, s.fpga.Check())
}

func TestExhaustedStorageEvicts(t *testing.T) {
	cfg := DefaultConfig(goldenDirectory(kvstore.SchemePatent, kvstore.ExportFull))
	cfg.Directory.StorageBytes = 64 << 20
	s := newTestSystem(t, cfg)
	for i := range 5 {
		r := s.export(ExportRequest{Session: int64(i), Key: kvstore.Key{Tokens: 200, Hash: uint64(i)}, TokenBytes: 800})
		require.NoError(t, r.Err)
	}
	st := s.fpga.Directory().Stats()
	assert.Equal(t, int64(3), st.Evictions, "13 regions each, 32 in all: two fit")
	assert.Equal(t, 2, s.fpga.Directory().Links())
}

// TestQueryTasksQueue checks the engine's concurrency limit: with one task
// slot, queries run one after another.
func TestQueryTasksQueue(t *testing.T) {
	cfg := DefaultConfig(goldenDirectory(kvstore.SchemePatent, kvstore.ExportFull))
	cfg.QueryTasks = 1
	s := newTestSystem(t, cfg)
	results := collect{}
	for i := range 3 {
		s.fpga.Query(QueryRequest{Session: int64(i), Key: kvstore.Key{Tokens: 10, Hash: uint64(i)}, TokenBytes: 40, Reply: Reply{To: results, Arg: int64(i)}})
	}
	s.eng.Run()
	require.Len(t, results, 3)
	for i := int64(1); i < 3; i++ {
		assert.GreaterOrEqual(t, results[i].Start, results[i-1].End, "query %d waits for %d", i, i-1)
	}
}

func TestStagesEmitSpans(t *testing.T) {
	s := newTestSystem(t, DefaultConfig(goldenDirectory(kvstore.SchemePatent, kvstore.ExportFull)))
	rec := &sim.SpanRecorder{}
	s.eng.Trace().AddSink(rec)
	s.query(QueryRequest{Session: 9, Key: kvstore.Key{Tokens: 100, Hash: 3}, TokenBytes: 400})
	var names []string
	for _, sp := range rec.Spans {
		if sp.Component == "fpga" {
			names = append(names, sp.Operation)
			assert.Equal(t, int64(9), sp.ID)
		}
	}
	assert.Equal(t, []string{"query/dma-tokens", "query/hash", "query/bucket-read", "query/chain-walk", "query/import", "query/signal-cpu"}, names)
}

// TestInvariantViolationStopsTheSimulation corrupts the directory and
// checks that the next operation stops the run with an error naming the
// time, the operation and the region.
func TestInvariantViolationStopsTheSimulation(t *testing.T) {
	s := newTestSystem(t, DefaultConfig(goldenDirectory(kvstore.SchemePatent, kvstore.ExportFull)))
	d := s.fpga.Directory()
	_, err := d.Export(0, kvstore.Key{Tokens: 5, Hash: 5}, nil)
	require.NoError(t, err)
	d.InjectStateFault(0) // region 0 holds the object
	s.query(QueryRequest{Session: 1, Key: kvstore.Key{Tokens: 5, Hash: 5}})
	require.Error(t, s.fpga.Failure())
	assert.Regexp(t, `fpga invariant violated at \d.*after lookup: region 0 found in segment 0 but marked state 1`, s.fpga.Failure().Error())
}

// The tables lie in the upper half of host memory (the lower holds the
// sessions' token arrays), so they must fit that half: they were held
// against all of it, and tables of more than half ran past the device.
func TestHostTablesFitTheUpperHalfOfHostMemory(t *testing.T) {
	cfg := DefaultConfig(goldenDirectory(kvstore.SchemePatent, kvstore.ExportFull))
	need := cfg.TableBytes()
	for _, c := range []struct {
		host int64
		fits bool
	}{{2 * need, true}, {2*need - 1, true}, {2*need - 2, false}, {need, false}} {
		err := cfg.Validate(c.host)
		if c.fits {
			assert.NoError(t, err, "host memory of %d B", c.host)
		} else {
			assert.ErrorContains(t, err, "but their placement holds", "host memory of %d B", c.host)
		}
	}
}

// An unlimited store's 2^31-1 regions have MaxLinks links: the link and
// FIFO addresses stay in the tables TableBytes sizes. They spread over
// every region and ran past host memory, which the cycle-level host model
// refused with a panic.
func TestUnlimitedStoreTablesStayInHostMemory(t *testing.T) {
	cfg := DefaultConfig(goldenDirectory(kvstore.SchemePatent, kvstore.ExportFull))
	cfg.Directory.StorageBytes, cfg.MaxLinks = (1<<31-1)*cfg.Directory.RegionBytes, 1<<24
	s := newTestSystem(t, cfg)
	for i := range 8 {
		hash := uint64(i) * 0x9e3779b97f4a7c15 // spread over all 64 bits
		require.NoError(t, s.export(ExportRequest{Session: int64(i), Key: kvstore.Key{Tokens: 100, Hash: hash}, TokenBytes: 400}).Err)
		assert.True(t, s.query(QueryRequest{Session: int64(i), Key: kvstore.Key{Tokens: 100, Hash: hash}, TokenBytes: 400}).Hit)
	}
	end := s.fpga.tableBase() + cfg.TableBytes()
	assert.LessOrEqual(t, end, memory.HostMemoryConfig().CapacityBytes())
}

// streamCard is a flatCard with peer links of 12 GB/s to and from the
// accelerator (or none), streaming imports and exports in chunks of chunk
// bytes (0: store-and-forward).
func streamCard(t *testing.T, chunk int64, forward bool) *testSystem {
	eng := sim.NewEngine(0)
	ports, _, _, _ := flatCard(t, eng)
	var err error
	if forward {
		link := sim.LinkConfig{Bandwidth: 12 * sim.GBps, Latency: 600 * sim.Nanosecond}
		ports.Forward, err = sim.NewLink(eng, "p2p", link)
		require.NoError(t, err)
		if chunk > 0 { // a store-and-forward export's push is the host's
			ports.Inbound, err = sim.NewLink(eng, "p2p-in", link)
			require.NoError(t, err)
		}
	}
	cfg := DefaultConfig(goldenDirectory(kvstore.SchemePatent, kvstore.ExportFull))
	cfg.ChunkBytes = chunk
	f, err := NewEngine(eng, cfg, ports, ports.HostBytes)
	require.NoError(t, err)
	return &testSystem{eng: eng, fpga: f, ports: ports}
}

// importTime is the import stage of a hit on 4,096 tokens (512 MiB of
// Llama-3-8B KV) on a card.
func importTime(t *testing.T, s *testSystem) sim.Time {
	key := kvstore.PatentKey(0, tokenRange(4096, 1))
	_, err := s.fpga.Directory().Export(0, key, nil)
	require.NoError(t, err)
	r := s.query(QueryRequest{Session: 1, Key: key, TokenBytes: 4096 * 4})
	require.True(t, r.Hit)
	require.Equal(t, int64(4096)*llama3_8b.BytesPerToken(), r.Bytes)
	since, ok := r.Imported()
	require.True(t, ok)
	for _, st := range r.Stages {
		if st.Name == StageImport {
			require.Equal(t, since, st.Start)
			return st.End - st.Start
		}
	}
	panic("no import stage")
}

// TestStreamedImportOverlapsItsHops: store-and-forward reads the whole
// object and then forwards it (the drive's time plus the link's); a
// streamed import forwards each chunk while it reads the next, so it takes
// about the slower hop's time, never less than the drive's.
func TestStreamedImportOverlapsItsHops(t *testing.T) {
	read := importTime(t, streamCard(t, 0, false)) // the drive and the HBM only
	forward := (12 * sim.GBps).TransferTime(4096 * llama3_8b.BytesPerToken())
	whole := importTime(t, streamCard(t, 0, true))
	assert.GreaterOrEqual(t, whole, read+forward, "store-and-forward: one hop after another")
	for _, chunk := range []int64{1 << 20, 4 << 20} {
		streamed := importTime(t, streamCard(t, chunk, true))
		t.Logf("chunk %d: read %v, forward %v, store-and-forward %v, streamed %v", chunk, read, forward, whole, streamed)
		assert.GreaterOrEqual(t, streamed, forward, "no faster than the link")
		// the drive is asked for the object in chunks rather than as one
		// read, which its model serves within a few per cent
		assert.InDelta(t, float64(read), float64(streamed), 0.05*float64(read), "about the drive's time: the link's hidden behind it")
	}
}

// exportStages is an export of 4,096 tokens (512 MiB of Llama-3-8B KV) on
// a card: its stages' times by name, and what crossed the peer link in.
func exportStages(t *testing.T, s *testSystem) (map[string]sim.Time, int64) {
	kv := 4096 * (llama3_8b.BytesPerToken() - kvstore.TokenIDBytes)
	r := s.export(ExportRequest{Session: 1, Key: kvstore.PatentKey(0, tokenRange(4096, 1)), TokenBytes: 4096 * 4, KVBytes: kv})
	require.NoError(t, r.Err)
	require.Equal(t, int64(4096)*llama3_8b.BytesPerToken(), r.Bytes)
	took := map[string]sim.Time{}
	for _, st := range r.Stages {
		took[st.Name] = st.End - st.Start
	}
	pulled := int64(0)
	if s.ports.Inbound != nil {
		pulled = s.ports.Inbound.Stats().Bytes
	}
	return took, pulled
}

// TestStreamedExportOverlapsItsHops: store-and-forward has the KV pushed
// over the peer link (by the host, before the task), read from the
// exchange memory and then written (the link's time plus the drive's); a
// streamed export pulls each piece over the link while the drive writes
// the last, so its data stage takes about the drive's time, never less
// than the link's, and pulls exactly the KV bytes (the token ids of the
// layout come from host memory).
func TestStreamedExportOverlapsItsHops(t *testing.T) {
	kv := 4096 * (llama3_8b.BytesPerToken() - kvstore.TokenIDBytes)
	push := (12 * sim.GBps).TransferTime(kv)
	whole, pulled := exportStages(t, streamCard(t, 0, true))
	assert.Zero(t, pulled, "store-and-forward pulls nothing itself")
	assert.NotContains(t, whole, StageStreamOut)
	write := whole[StageStorageWrite]
	for _, chunk := range []int64{4 << 20, 16 << 20} { // 16 pieces of 32 MiB either way (maxExportPieces)
		streamed, pulled := exportStages(t, streamCard(t, chunk, true))
		t.Logf("chunk %d: push %v, exchange read %v, write %v, streamed %v", chunk, push, whole[StageExchangeRead], write, streamed[StageStreamOut])
		assert.NotContains(t, streamed, StageExchangeRead, "the exchange reads are the stream's")
		assert.Equal(t, kv, pulled, "the peer link carries the KV once")
		assert.GreaterOrEqual(t, streamed[StageStreamOut], push, "no faster than the link")
		assert.Less(t, streamed[StageStreamOut], push+whole[StageExchangeRead]+write, "faster than one hop after another")
		assert.InDelta(t, float64(write), float64(streamed[StageStreamOut]), 0.05*float64(write), "about the drive's time: the link's hidden behind it")
	}
}
