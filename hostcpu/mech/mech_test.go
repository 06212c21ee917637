package mech

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvcosim/kvcosim/kvstore"
)

// layerwise are CachedAttention's mechanisms, valid over two tiers of a
// CPU-run store in a closed loop.
var layerwise = Mechanisms{Load: LoadLayerwise, Save: SaveAsync, Prefetch: PrefetchQueue, Preload: PreloadQueue, AsyncBufferBytes: 1,
	PreloadBufferBytes: 1, Layout: kvstore.LayoutLayerMajor}

var closedLoop = Run{Design: "cachedattention", CPUStore: true, ClosedLoop: true, Tiers: 2}

func TestCheckNamesTheKeyToBlame(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Mechanisms, *Run)
		want   string // "": valid
	}{
		{"valid", func(*Mechanisms, *Run) {}, ""},
		{"layerwise in functional mode", func(_ *Mechanisms, r *Run) { r.Functional = true }, "store.load,mode: "},
		{"a window without queue prefetch", func(m *Mechanisms, _ *Run) { m.Prefetch, m.PrefetchWindowTurns = PrefetchNone, 3 }, "store.prefetch_window,store.prefetch: "},
		{"a window in an open loop", func(m *Mechanisms, r *Run) { m.PrefetchWindowTurns, r.ClosedLoop = 3, false }, ""},
		{"a window over blocks in an open loop", func(m *Mechanisms, r *Run) { m.PrefetchWindowTurns, r.Blocks, r.ClosedLoop = 3, true, false }, ""},
		{"a window over blocks", func(m *Mechanisms, r *Run) { m.PrefetchWindowTurns, r.Blocks = 3, true }, "store.prefetch_window,fpga.hashing,system.design,workload.max_concurrency: "},
		{"layerwise over token-major", func(m *Mechanisms, _ *Run) { m.Layout = kvstore.LayoutTokenMajor }, "store.load,fpga.layout: layerwise needs"},
		{"load_wait request of a whole load", func(m *Mechanisms, _ *Run) { *m = Mechanisms{LoadWait: LoadWaitRequest} }, "store.load_wait,store.load: request needs"},
		{"prefetch over one tier", func(_ *Mechanisms, r *Run) { r.Tiers = 1 }, "store.prefetch,storage.tiers,"},
		{"prefetch of a whole load", func(m *Mechanisms, _ *Run) { m.Load, m.Preload = LoadWhole, PreloadNone }, "store.prefetch,store.load: queue needs store.load: layerwise"},
		{"async without a buffer", func(m *Mechanisms, _ *Run) { m.AsyncBufferBytes = 0 }, "store.async_buffer = 0 B"},
		{"preload of a whole load", func(m *Mechanisms, _ *Run) { m.Load, m.Prefetch = LoadWhole, PrefetchNone }, "store.preload,store.load: queue needs"},
		{"waiting preload of a whole load", func(m *Mechanisms, _ *Run) { m.Load, m.Prefetch, m.Preload = LoadWhole, PrefetchNone, PreloadWaiting }, "store.preload,store.load: waiting needs"},
		{"waiting preload without a buffer", func(m *Mechanisms, _ *Run) { m.Preload, m.PreloadBufferBytes = PreloadWaiting, 0 }, "store.preload_buffer = 0 B"},
		{"preload without a buffer", func(m *Mechanisms, _ *Run) { m.PreloadBufferBytes = 0 }, "store.preload_buffer = 0 B"},
		{"a negative window", func(m *Mechanisms, _ *Run) { m.PrefetchWindowTurns = -2 }, "store.prefetch_window = -2 turns"},
		{"a chunk of 4 KiB", func(m *Mechanisms, _ *Run) { m.ChunkBytes = 4 << 10 }, "store.chunk = 4096 B: must be at least 65536 B"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, r := layerwise, closedLoop
			c.mutate(&m, &r)
			err := m.Check(r)
			if c.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, c.want)
		})
	}
}

// TestPreloadAndLookAheadNeedAQueueOfSessionObjects: each condition of
// the pre-load and the look-ahead turns it off alone; the pre-load of the
// waiting requests runs in either loop.
func TestPreloadAndLookAheadNeedAQueueOfSessionObjects(t *testing.T) {
	cases := []struct {
		name               string
		mutate             func(*Mechanisms, *Run)
		preload, lookAhead bool
	}{
		{"cachedattention in a closed loop", func(*Mechanisms, *Run) {}, true, true},
		{"open loop", func(_ *Mechanisms, r *Run) { r.ClosedLoop = false }, false, false},
		{"blocks", func(_ *Mechanisms, r *Run) { r.Blocks = true }, false, false},
		{"the FPGA's store", func(_ *Mechanisms, r *Run) { r.CPUStore = false }, false, false},
		{"one tier", func(_ *Mechanisms, r *Run) { r.Tiers = 1 }, true, false},
		{"whole loads", func(m *Mechanisms, _ *Run) { m.Load = LoadWhole }, false, true},
		{"no preload", func(m *Mechanisms, _ *Run) { m.Preload = PreloadNone }, false, true},
		{"no prefetch", func(m *Mechanisms, _ *Run) { m.Prefetch = PrefetchNone }, true, false},
		{"waiting requests", func(m *Mechanisms, _ *Run) { m.Preload = PreloadWaiting }, true, true},
		{"waiting requests in an open loop", func(m *Mechanisms, r *Run) { m.Preload, r.ClosedLoop = PreloadWaiting, false }, true, false},
		{"waiting requests over blocks", func(m *Mechanisms, r *Run) { m.Preload, r.Blocks = PreloadWaiting, true }, false, false},
		{"waiting requests of the FPGA's store", func(m *Mechanisms, r *Run) { m.Preload, r.CPUStore = PreloadWaiting, false }, false, false},
		{"waiting requests, whole loads", func(m *Mechanisms, r *Run) { m.Preload, m.Load = PreloadWaiting, LoadWhole }, false, true},
	}
	for _, c := range cases {
		m, r := layerwise, closedLoop
		c.mutate(&m, &r)
		assert.Equal(t, c.preload, m.PreloadOn(r), c.name)
		assert.Equal(t, c.lookAhead, m.LookAheadOn(r), c.name)
	}
}

// TestFirstLayerShare: layer 0's K and V land after the first 1/L of a
// layer-major object, after half and 1/(2L) of a claim-9 one, and only
// with all of a token-major one.
func TestFirstLayerShare(t *testing.T) {
	for _, c := range []struct {
		layout   kvstore.Layout
		num, den int64
	}{
		{kvstore.LayoutLayerMajor, 1, 32},
		{kvstore.LayoutClaim9, 33, 64},
		{kvstore.LayoutTokenMajor, 1, 1},
	} {
		num, den := FirstLayerShare(c.layout, 32)
		assert.Equal(t, [2]int64{c.num, c.den}, [2]int64{num, den}, c.layout.String())
	}
}

func TestNamesRoundTrip(t *testing.T) {
	for _, n := range LoadModes.Names() {
		v, err := LoadModes.Parse(n)
		assert.NoError(t, err)
		assert.Equal(t, n, v.String())
	}
	assert.Equal(t, "async", SaveAsync.String())
	assert.Equal(t, "request", LoadWaitRequest.String())
	assert.Equal(t, "drop", FullDrop.String())
	assert.Equal(t, "queue", PrefetchQueue.String())
	assert.Equal(t, "queue", PreloadQueue.String())
	assert.Equal(t, "waiting", PreloadWaiting.String())
	assert.Equal(t, "queue-aware", EvictQueueAware.String())
}
