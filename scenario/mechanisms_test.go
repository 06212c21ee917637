package scenario

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/sim"
)

// evicting are settings under which every resumed turn comes from the
// store: the accelerator drops each session's KV when its turn ends.
var evicting = []string{"accelerator.retain=off", "workload.sessions=60"}

// resumed sums, over the turns that went through the store, their TTFT
// and their wait for KV, and counts them.
func resumed(res *Result) (n int, ttft, wait sim.Time) {
	for _, r := range res.Run.sys.Records() {
		if r.Decision == hostcpu.Query && r.Hit {
			n, ttft, wait = n+1, ttft+r.TTFT, wait+r.KVWait
		}
	}
	return n, ttft, wait
}

// TestLayerwiseLoadLowersResumedTTFT holds every storing design that can
// load layer by layer against itself loading whole objects: the resumed
// turns' TTFT and their wait for KV must both fall, and the hits stay.
// The fpga design's card imports at admission then, forwarding layer i
// while it reads layer i+1 (refused until 2026-11-27).
func TestLayerwiseLoadLowersResumedTTFT(t *testing.T) {
	for _, design := range []string{"cpu", "fpga", "lmcache", "cachedattention"} {
		t.Run(design, func(t *testing.T) {
			base := append([]string{"system.design=" + design, "store.prefetch=none", "store.preload=none"}, evicting...)
			whole := simulate(t, append(base, "store.load=whole")...)
			layer := simulate(t, append(base, "store.load=layerwise")...)
			nw, ttftW, waitW := resumed(whole)
			nl, ttftL, waitL := resumed(layer)
			require.Greater(t, nw, 20)
			assert.Equal(t, nw, nl, "the same turns hit")
			assert.Less(t, ttftL, ttftW, "layer-wise TTFT of resumed turns")
			assert.Less(t, waitL, waitW, "layer-wise wait for KV")
		})
	}
}

// TestImportsFromPageableMemoryRunAtTheStagingCopy: with the KV in
// pageable host memory an import runs no faster than store.pageable_gbps,
// below PCIe's rate (Gen5 x16, about 58 GB/s), where from pinned memory
// the same imports take less than that; the same turns hit.
func TestImportsFromPageableMemoryRunAtTheStagingCopy(t *testing.T) {
	imports := func(res *Result) (n int, took sim.Time, bytes int64) {
		for _, r := range res.Run.sys.Records() {
			if r.Decision == hostcpu.Query && r.Hit {
				n, took, bytes = n+1, took+r.Import, bytes+r.ImportBytes
			}
		}
		return n, took, bytes
	}
	for _, design := range []string{"cpu", "lmcache", "cachedattention"} {
		t.Run(design, func(t *testing.T) {
			base := append([]string{"system.design=" + design, "store.load=whole", "store.prefetch=none", "store.preload=none"}, evicting...)
			np, pinned, bytes := imports(simulate(t, base...))
			nq, pageable, _ := imports(simulate(t, append(base, "store.host_buffers=pageable", "store.pageable_gbps=5")...))
			require.Greater(t, np, 20)
			assert.Equal(t, np, nq, "the same turns hit")
			atStaging := sim.Bandwidth(5e9).TransferTime(bytes)
			assert.GreaterOrEqual(t, pageable, atStaging, "no import outruns the staging copy")
			assert.Less(t, pinned, atStaging, "from pinned memory PCIe sets the pace")
		})
	}
}

// backToBack is a sessions trace whose second turns arrive as the first
// ends, while the first turn's export is still being written.
func backToBack(t *testing.T) string {
	var b strings.Builder
	for i := range 8 {
		fmt.Fprintf(&b, `{"session": "s%d", "turn": 0, "arrival_s": %d, "new_tokens": 12000, "output_tokens": 4}`+"\n", i, 10*i)
		fmt.Fprintf(&b, `{"session": "s%d", "turn": 1, "arrival_s": %d, "new_tokens": 100, "output_tokens": 4}`+"\n", i, 10*i)
	}
	path := filepath.Join(t.TempDir(), "back-to-back.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// TestAsyncSaveTakesTheExportOffTheNextTurn: with a synchronous save a
// turn that follows at once waits for the last turn's export; with an
// asynchronous one it waits only for the copy into the buffer.
func TestAsyncSaveTakesTheExportOffTheNextTurn(t *testing.T) {
	trace := backToBack(t)
	parked := func(save string) (n int, total sim.Time) {
		res := simulate(t, "system.design=cpu", "accelerator.retain=off", "workload.kind=sessions", "workload.path="+trace, "store.save="+save)
		for _, r := range res.Run.sys.Records() {
			if r.Parked > 0 {
				n, total = n+1, total+r.Parked
			}
		}
		return n, total
	}
	nSync, waitSync := parked("sync")
	nAsync, waitAsync := parked("async")
	assert.Equal(t, 8, nSync, "every second turn waits for the first turn's export")
	assert.Greater(t, waitSync, 50*sim.Millisecond)
	assert.Less(t, waitAsync, waitSync/4, "async: only the copy into the buffer (%d turns)", nAsync)
}

// TestAsyncSaveFindsTheExportItOvertakes: when turns follow each other at
// once, an asynchronous save lets the next turn go while the last turn's
// export is still being written, and its lookup must find that export (a
// CPU-run store once looked before saving and recomputed every such turn)
// and read it from the buffer, not wait for its tier. So async reuses at
// least what sync reuses, and its resumed turns are no slower.
func TestAsyncSaveFindsTheExportItOvertakes(t *testing.T) {
	back := []string{"workload.sessions=20", "accelerator.retain=off", "workload.think_median_s=0.001",
		"workload.think_p90_s=0.002", "workload.interrupt_probability=0"}
	for _, c := range []struct {
		design  string
		minHits int64 // query hits with either save
	}{
		{"cpu", 40},
		{"lmcache", 40},
		{"cachedattention", 40},
		{"fpga", 40},
	} {
		t.Run(c.design, func(t *testing.T) {
			save := func(mode string) reports.Summary {
				return simulate(t, append([]string{"system.design=" + c.design, "store.save=" + mode}, back...)...).Summary()
			}
			sync, async := save("sync"), save("async")
			require.GreaterOrEqual(t, sync.Decisions["query_hits"], c.minHits)
			assert.GreaterOrEqual(t, async.Decisions["query_hits"], sync.Decisions["query_hits"], "query hits")
			assert.GreaterOrEqual(t, async.PrefillTokensReused, sync.PrefillTokensReused, "tokens reused")
			assert.LessOrEqual(t, async.ResumedTTFTms.Mean, sync.ResumedTTFTms.Mean, "resumed TTFT, ms")
		})
	}
}

// TestAsyncBufferFull counts what a small buffer does to the exports.
func TestAsyncBufferFull(t *testing.T) {
	for _, full := range []string{"block", "drop"} {
		t.Run(full, func(t *testing.T) {
			// One drive, so the exports queue behind it, and a buffer of
			// one session's object (llama-3-70b's 8,192-token window), so
			// an export that meets another still draining finds it full.
			res := simulate(t, "system.design=cpu", "store.save=async", "store.async_buffer=2.5GiB", "store.async_full="+full,
				"storage.drives=1", "accelerator.retain=off", "workload.sessions=120")
			s := res.Summary().Store
			assert.Positive(t, s["exports_"+map[string]string{"block": "blocked", "drop": "dropped"}[full]])
			if full == "block" {
				assert.Zero(t, s["exports_dropped"])
			}
		})
	}
}

// TestPrefetchIsCountedAndUsed: with a DRAM tier too small for every
// session, resumed turns find KV on the SSD; queue prefetch moves it to
// host memory while they wait, and every prefetch is used or late.
func TestPrefetchIsCountedAndUsed(t *testing.T) {
	run := func(prefetch string) (*Result, reports.Summary) {
		res := simulate(t, append([]string{"system.design=cachedattention", "store.dram_tier=16GiB", "store.prefetch=" + prefetch}, evicting...)...)
		return res, res.Summary()
	}
	_, none := run("none")
	res, queue := run("queue")
	assert.NotContains(t, none.Store, "prefetches")
	p := queue.Store
	require.Positive(t, p["prefetches"])
	assert.Equal(t, p["prefetches"], p["prefetch_used"]+p["prefetch_late"])
	_, _, waitQueue := resumed(res)
	assert.Positive(t, waitQueue)
}

// TestLookAheadRaisesHeldBackTurns: in a closed loop whose DRAM tier
// holds a few sessions, the look-ahead window raises the objects of the
// turns held back for a slot, so more hits come from DRAM and resumed
// turns wait less for KV than with the window shut; every raise is
// settled once.
func TestLookAheadRaisesHeldBackTurns(t *testing.T) {
	run := func(window string) (*Result, reports.Summary) {
		res := simulate(t, append([]string{"system.design=cachedattention", "store.dram_tier=16GiB", "workload.max_concurrency=2",
			"store.prefetch_window=" + window}, evicting...)...)
		return res, res.Summary()
	}
	shutRes, shut := run("0")
	openRes, open := run("4")
	assert.Zero(t, shut.Store["lookaheads"])
	l := open.Store
	require.Positive(t, l["lookaheads"])
	assert.Positive(t, l["lookahead_used"])
	assert.Equal(t, l["lookaheads"], l["lookahead_used"]+l["lookahead_wasted"])
	dramShare := func(s reports.Summary) float64 { return float64(s.Tiers[0].Hits) / float64(s.Decisions["query_hits"]) }
	assert.Greater(t, dramShare(open), dramShare(shut))
	_, _, waitShut := resumed(shutRes)
	_, _, waitOpen := resumed(openRes)
	assert.Less(t, waitOpen, waitShut)
}

// TestLookAheadSettlesEveryRaise: a raised session's next turn settles
// its raise whatever that turn needs (a lookup, none after a deep
// truncation, or the end of the session at its window), and a session
// resident on the accelerator is not raised at all; the run's
// conservation check fails on a raise left unsettled.
func TestLookAheadSettlesEveryRaise(t *testing.T) {
	base := []string{"system.design=cachedattention", "workload.max_concurrency=4", "store.dram_tier=16GiB", "workload.sessions=80"}
	for _, c := range []struct {
		name     string
		sets     []string
		noRaises bool
	}{
		{"resident", []string{"accelerator.retain=on", "accelerator.kv_capacity=auto"}, true},
		{"deep truncation", []string{"accelerator.retain=off", "workload.truncate_fill=0.5", "accelerator.max_model_len=2048"}, false},
		{"rejected at the window", []string{"accelerator.retain=off", "workload.context_policy=reject", "accelerator.max_model_len=2048"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := simulate(t, append(base, c.sets...)...).Summary().Store
			assert.Equal(t, l["lookaheads"], l["lookahead_used"]+l["lookahead_wasted"])
			if c.noRaises {
				assert.Zero(t, l["lookaheads"])
			} else {
				assert.Positive(t, l["lookahead_wasted"])
			}
		})
	}
}

// TestLookAheadWindowSizesItselfByTheTopTier: auto holds as many objects
// of the stored objects' mean size as the DRAM tier has room for beside
// the turns in flight (as sized at the end of the run, from the tiers'
// held bytes and objects).
func TestLookAheadWindowSizesItselfByTheTopTier(t *testing.T) {
	for _, c := range []struct {
		dram        string
		concurrency int
	}{{"16GiB", 2}, {"16GiB", 8}, {"64GiB", 8}} {
		s := simulate(t, "system.design=cachedattention", "accelerator.retain=off", "workload.sessions=20", "store.dram_tier="+c.dram,
			fmt.Sprintf("workload.max_concurrency=%d", c.concurrency)).Summary()
		var held, objects int64
		for _, tier := range s.Tiers {
			held, objects = held+tier.HeldBytes, objects+tier.Objects
		}
		require.Positive(t, objects)
		want := max(0, s.Tiers[0].CapacityBytes/(held/objects)-int64(c.concurrency))
		assert.Equal(t, want, s.Store["lookahead_window"], "%s, %d in flight", c.dram, c.concurrency)
		assert.Positive(t, want, "%s, %d in flight: the mean object is smaller than a whole window's", c.dram, c.concurrency)
	}
}

// TestPreloadTakesTheLoadOffTheTurn: with store.preload: queue a closed
// loop's held-back turns find their KV in the read buffer when they are
// let in: their wait for KV falls, and the pre-loads keep their counts
// (preloadOffOnTiny).
func TestPreloadTakesTheLoadOffTheTurn(t *testing.T) {
	closed := []string{"system.design=cachedattention", "store.dram_tier=16GiB", "workload.max_concurrency=4"}
	offRes, onRes := preloadOffOnTiny(t, "queue", closed...)
	_, _, waitOff := resumed(offRes)
	_, _, waitOn := resumed(onRes)
	assert.Less(t, waitOn, waitOff)
	for _, wait := range []string{"batch", "request"} { // a pre-load begun before the turn arrived is no wait of the turn's
		res := simulate(t, append(append(slices.Clone(closed), evicting...), "store.preload=queue", "store.load_wait="+wait)...)
		for _, r := range res.Run.sys.Records() {
			assert.LessOrEqual(t, r.KVWait, r.TTFT, "%s: request %d", wait, r.ID)
		}
	}
}

// preloadOffOnTiny runs the scenario (sets, then evicting) without
// pre-loading and with the policy, and checks the counts every pre-load
// keeps: none without it, each used or wasted with it, and none into a
// buffer smaller than any object.
func preloadOffOnTiny(t *testing.T, policy string, sets ...string) (off, on *Result) {
	run := func(extra ...string) *Result {
		return simulate(t, append(append(slices.Clone(sets), evicting...), extra...)...)
	}
	off, on = run("store.preload=none"), run("store.preload="+policy)
	tiny := run("store.preload="+policy, "store.preload_buffer=1MiB").Summary().Store
	offStore, onStore := off.Summary().Store, on.Summary().Store
	assert.NotContains(t, offStore, "preloads", "no pre-load counts without pre-loading")
	require.Positive(t, onStore["preloads"])
	assert.Positive(t, onStore["preload_used"])
	assert.Equal(t, onStore["preloads"], onStore["preload_used"]+onStore["preload_wasted"])
	assert.Zero(t, tiny["preloads"])
	return off, on
}

// TestAnOpenQueuePrefetchesOnlyItsWindow: an open loop past its capacity
// with a DRAM tier of a few objects defers the prefetches beyond its
// look-ahead window (counted prefetch_deferred) and stages less at its
// peak than a window over the whole queue, which defers none; every
// prefetch is used or late either way.
func TestAnOpenQueuePrefetchesOnlyItsWindow(t *testing.T) {
	run := func(window string) map[string]int64 {
		res := simulate(t, append([]string{"system.design=cachedattention", "workload.session_rate_per_s=20", "accelerator.max_batch=4",
			"store.dram_tier=2GiB", "store.prefetch_window=" + window}, evicting...)...)
		st := res.Summary().Store
		require.Equal(t, st["prefetches"], st["prefetch_used"]+st["prefetch_late"])
		return st
	}
	windowed, whole := run("auto"), run("1048576")
	assert.Positive(t, windowed["prefetch_deferred"])
	assert.Zero(t, whole["prefetch_deferred"])
	assert.Less(t, windowed["prefetch_staged_peak_bytes"], whole["prefetch_staged_peak_bytes"])
}

// TestLoadWaitRequestSitsOut: with store.load_wait: request a resumed
// turn joins no iteration before its KV has landed, so its wait for KV
// covers its whole load, while with batch the load overlaps the turn's own
// prefill and some turns wait less than their load took; no iteration
// waits in request mode, so decode steps are no slower.
func TestLoadWaitRequestSitsOut(t *testing.T) {
	run := func(wait string) *Result {
		return simulate(t, append([]string{"system.design=cachedattention", "store.dram_tier=16GiB", "store.load_wait=" + wait}, evicting...)...)
	}
	batch, request := run("batch"), run("request")
	overlapped := 0
	for _, r := range batch.Run.sys.Records() {
		if r.Hit && r.KVWait < r.Import {
			overlapped++
		}
	}
	assert.Positive(t, overlapped)
	n := 0
	for _, r := range request.Run.sys.Records() {
		if r.Hit {
			n++
			assert.GreaterOrEqual(t, r.KVWait, r.Import, "request %d", r.ID)
		}
	}
	require.Positive(t, n)
	assert.LessOrEqual(t, request.Summary().TPOTms.Mean, batch.Summary().TPOTms.Mean)
}

// TestNewDesignsAreDeterministic runs each new design twice on the same
// seed, on the synthetic default, on the Mooncake conversation trace and
// in a closed loop (cachedattention's look-ahead): the requests must come
// out the same, byte for byte.
func TestNewDesignsAreDeterministic(t *testing.T) {
	trace := []string{"workload.kind=mooncake", "workload.path=../workloads/testdata/mooncake_conversation_trace.jsonl.gz", "workload.limit=300", "fpga.block_tokens=512", longContext,
		"store.async_buffer=128GiB"}
	for _, design := range []string{"lmcache", "cachedattention"} {
		closed := append([]string{"workload.max_concurrency=2", "store.dram_tier=16GiB"}, evicting...) // a look-ahead window of 4
		for name, sets := range map[string][]string{"synthetic": evicting, "mooncake": trace, "closed loop": closed} {
			t.Run(design+"/"+name, func(t *testing.T) {
				rows := func() string {
					res := simulate(t, append([]string{"system.design=" + design}, sets...)...)
					var b strings.Builder
					require.NoError(t, reports.WriteRequestsCSV(&b, res.Rows()))
					return b.String()
				}
				first := rows()
				assert.Equal(t, first, rows())
				assert.Greater(t, strings.Count(first, "\n"), 100)
			})
		}
	}
}

// TestStoreKeysRefuseBadInput: each bad mechanism names its key and what
// is allowed.
func TestStoreKeysRefuseBadInput(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"store.load=streaming"}, `key store.load: "streaming" is not allowed (allowed: whole, layerwise)`},
		{[]string{"store.save=later"}, `key store.save: "later" is not allowed (allowed: sync, async)`},
		{[]string{"store.prefetch=all"}, `key store.prefetch: "all" is not allowed (allowed: none, queue)`},
		{[]string{"store.eviction=fifo"}, `key store.eviction: "fifo" is not allowed (allowed: lru, queue-aware)`},
		{[]string{"store.async_full=spill"}, `key store.async_full: "spill" is not allowed (allowed: block, drop)`},
		{[]string{"system.design=cpu", "store.load=layerwise", "fpga.layout=token-major"}, "key store.load: layerwise needs each layer's K and V apart"},
		{[]string{"system.design=cpu", "store.load=layerwise", "store.prefetch=queue"}, "key store.prefetch: queue needs a tier above"},
		{[]string{"system.design=cachedattention", "store.load=whole"}, "--set store.load=whole: key store.load: store.prefetch (the cachedattention design's own): queue needs store.load: layerwise"},
		{[]string{"system.design=cpu", "store.save=async", "store.async_buffer=0GiB"}, "key store.async_buffer"},
		{[]string{"store.chunk=-4MiB"}, "key store.chunk"},
		{[]string{"fpga.forward=cut-through"}, `key fpga.forward: "cut-through" is not allowed (allowed: stream, store-and-forward)`},
		{[]string{"store.chunk=1B"}, "--set store.chunk=1B: key store.chunk: must be at least 65536 B (64 KiB), or 0"},
		{[]string{"store.chunk=63KiB"}, "--set store.chunk=63KiB: key store.chunk: must be at least 65536 B"},
		{[]string{"system.design=cpu", "cpu.host_memory=ddr4-3200", "store.chunk=20GiB"}, "key store.chunk: 20GiB is more than cpu.host_memory's 17179869184 B"},
		{[]string{"system.design=cpu", "cpu.host_memory=ddr4-3200", "store.chunk=0", "accelerator.max_model_len=65536"},
			"key store.chunk: 0 moves a session's whole KV through host memory, and llama-3-70b's 65536-token window x 327680 B per token = 21474836480 B is more than cpu.host_memory's 17179869184 B"},
		{[]string{"system.design=lmcache", "cpu.host_memory=ddr4-3200", "store.chunk=0", "accelerator.max_model_len=65536"},
			"key store.chunk: 0 moves a session's whole KV through host memory, and llama-3-70b's 65536-token window"},
		{[]string{"store.preload=eager"}, `key store.preload: "eager" is not allowed (allowed: none, queue, waiting)`},
		{[]string{"system.design=cpu", "store.preload=waiting"}, "key store.preload: waiting needs store.load: layerwise"},
		{[]string{"system.design=fpga", "store.load=layerwise", "store.preload=waiting"}, "key store.preload: waiting pre-loads a CPU-run store's session objects (not the block scheme, the fpga design or a design that stores nothing)"},
		{[]string{"system.design=lmcache", "store.preload=waiting"}, "key store.preload: waiting pre-loads a CPU-run store's session objects (not the block scheme"},
		{[]string{"system.design=recompute", "store.preload=waiting"}, "or a design that stores nothing) (allowed here: none)"},
		{[]string{"system.design=cpu", "store.preload=queue"}, "key store.preload: queue needs store.load: layerwise"},
		{[]string{"system.design=cachedattention", "store.preload_buffer=0GiB"}, "key store.preload_buffer"},
		{[]string{"system.design=cachedattention", "workload.max_concurrency=4", "accelerator.kv_capacity=8GiB", "store.preload_buffer=12GiB"},
			"key store.preload_buffer: 12GiB leaves less than one KV block (5242880 B) of the accelerator's 8589934592 B for KV"},
		{[]string{"system.design=cachedattention", "workload.max_concurrency=4", "accelerator.kv_capacity=8GiB", "store.preload_buffer=8GiB"},
			"key store.preload_buffer: 8GiB leaves less than one KV block"},
		{[]string{"system.design=cachedattention", "store.preload=queue"}, "key store.preload: queue pre-loads for the turns a closed loop holds back (workload.max_concurrency > 0); an open loop's queue is its requests waiting for admission (allowed here: none, waiting)"},
		{[]string{"system.design=lmcache", "workload.max_concurrency=4", "store.preload=queue"}, "key store.preload: queue pre-loads a CPU-run store's session objects"},
		{[]string{"store.load_wait=later"}, `key store.load_wait: "later" is not allowed (allowed: batch, request)`},
		{[]string{"system.design=cpu", "store.load_wait=request"}, "key store.load_wait: request needs store.load: layerwise"},
		{[]string{"workload.closed_order=random"}, `key workload.closed_order: "random" is not allowed (allowed: trace, session)`},
		{[]string{"workload.truncate_fill=0"}, "key workload.truncate_fill"},
		{[]string{"workload.truncate_fill=0.5", "workload.context_policy=reject"}, "key workload.truncate_fill: 0.5: a truncation's depth, but workload.context_policy is reject"},
		{[]string{"workload.closed_order=session"}, "key workload.closed_order: session orders a closed loop's turns; this is an open loop"},
		{[]string{"cpu.gpu_links=0"}, "key cpu.gpu_links: 0 is out of range (allowed: 1 to 16)"},
		{[]string{"storage.drives=0"}, "key storage.drives: 0 is out of range (allowed: 1 to 64)"},
		{[]string{"storage.resolution=fluid"}, `key storage.resolution: "fluid" is not allowed (allowed: page, request)`},
		{[]string{"mode=functional", "storage.drives=2"}, "key storage.drives: functional mode keeps the stored bytes on one drive"},
		{[]string{twoTiers, "storage.drives=2"}, "key storage.drives: 2 drives stripe storage.device; with storage.tiers each tier is one device"},
		{[]string{"system.design=cachedattention", "store.prefetch_window=many"}, `key store.prefetch_window: "many": want auto or a whole number of turns`},
		{[]string{"system.design=cachedattention", "store.prefetch=none", "store.prefetch_window=4"}, "key store.prefetch_window: a look-ahead window needs store.prefetch: queue"},
		{[]string{"system.design=cpu", "workload.max_concurrency=4", "store.prefetch_window=4"}, "key store.prefetch_window: a look-ahead window needs"},
		{[]string{"system.design=lmcache", "store.prefetch=queue", "workload.max_concurrency=4", "store.prefetch_window=4"}, "key store.prefetch_window: in a closed loop the look-ahead raises session objects"},
		{[]string{"workload.follow_up_median_tokens=0"}, "key workload.follow_up_median_tokens: median 0: must be positive"},
		{[]string{"workload.output_p90_tokens=10"}, "key workload.output_p90_tokens: p90 10 (workload.output_p90_tokens) must be finite and at least the median 129 (workload.output_median_tokens)"},
		{[]string{"system.design=cachedattention", "store.async_buffer=2GiB"}, "key store.async_buffer: store.async_buffer's 2GiB is smaller than a session's object (llama-3-70b's 8192-token window x 327680 B per token = 2684354560 B)"},
		{[]string{"system.design=lmcache", "store.async_buffer=64MiB"}, "key store.async_buffer: store.async_buffer's 64MiB is smaller than one block (256 tokens x 327680 B per token = 83886080 B)"},
		{[]string{"system.design=cachedattention", "accelerator.max_model_len=262144"}, "--set accelerator.max_model_len=262144: key accelerator.max_model_len: store.async_buffer's 32GiB is smaller than a session's object (llama-3-70b's 262144-token window"},
		{[]string{"system.design=cachedattention", "storage.tiers=[{name: ssd, device: kioxia-cm6, capacity: 2TB}]"}, "key storage.tiers: store.prefetch (the cachedattention design's own): queue needs a tier above"},
		{[]string{"system.design=cpu", "storage.tiers=[{name: x, device: ddr5-4800, capacity: 1GB}, {name: '', device: kioxia-cm6, capacity: 2TB}]"}, "key storage.tiers[1].name: empty: every tier wants a name"},
		{[]string{"mode=functional", "accelerator.max_model_len=512"}, "key accelerator.max_model_len: functional mode checks every turn"},
		{[]string{"workload.context_policy=slide"}, `key workload.context_policy: "slide" is not allowed (allowed: truncate, reject)`},
		{[]string{"store.host_buffers=mapped"}, `key store.host_buffers: "mapped" is not allowed (allowed: pinned, pageable)`},
		{[]string{"system.design=fpga", "store.host_buffers=pageable"}, "key store.host_buffers: pageable: the fpga design keeps no host copy of the KV"},
		{[]string{"system.design=recompute", "store.host_buffers=pageable"}, "key store.host_buffers: pageable: the recompute design keeps no host copy"},
		{[]string{"system.design=lmcache", "store.pageable_gbps=0"}, "key store.pageable_gbps: 0 is out of range (allowed: 0.1 to 1000)"},
		{[]string{"model=custom", "custom_model.layers=2", "custom_model.hidden=64", "custom_model.heads=4", "custom_model.kv_heads=2",
			"custom_model.head_dim=16", "custom_model.intermediate=128", "custom_model.vocab=512", "custom_model.params_b=0.001",
			"custom_model.context_tokens=-1"}, "key custom_model.context_tokens"},
	} {
		_, err := Load("", c.sets)
		require.Error(t, err, c.sets)
		assert.Contains(t, err.Error(), c.want, c.sets)
	}
}

// TestMechanismCombinationsRunOrAreRefused draws the store mechanisms,
// replay modes, links and drives together: each draw is refused by Load
// with an error naming a key, or runs to its end with every count
// conserved (the run's own check) and every request accounted for.
func TestMechanismCombinationsRunOrAreRefused(t *testing.T) {
	draws := 160
	if testing.Short() {
		draws = 12
	}
	rng := rand.New(rand.NewPCG(17, 25))
	pick := func(values ...string) string { return values[rng.IntN(len(values))] }
	ran := 0
	for range draws {
		sets := []string{
			"model=llama-3-8b", "accelerator.tp=1", "workload.sessions=16", "workload.turns_mean=4",
			"system.design=" + pick("cpu", "lmcache", "cachedattention"),
			"store.load=" + pick("whole", "layerwise"), "store.load_wait=" + pick("batch", "request"),
			"store.save=" + pick("sync", "async"), "store.prefetch=" + pick("none", "queue"),
			"store.eviction=" + pick("lru", "queue-aware"), "store.dram_tier=" + pick("2GiB", "16GiB"),
			"workload.max_concurrency=" + pick("0", "1", "4"), "workload.closed_order=" + pick("trace", "session"),
			"store.prefetch_window=" + pick("auto", "0", "3", "50"), "storage.drives=" + pick("1", "2", "3"),
			"store.preload=" + pick("none", "queue"), "store.preload_buffer=" + pick("1GiB", "12GiB"),
			"cpu.gpu_links=" + pick("1", "2"), "workload.truncate_fill=" + pick("1", "0.5"),
			"accelerator.max_model_len=" + pick("0", "2048"), "accelerator.retain=" + pick("on", "off"),
		}
		l, err := Load("", sets)
		if err != nil {
			var e *Error
			require.ErrorAs(t, err, &e, "%v", sets)
			assert.NotEmpty(t, e.Key, "%v: %v", sets, err)
			continue
		}
		r, err := Build(l)
		require.NoError(t, err, "%v", sets)
		res, err := r.Execute()
		require.NoError(t, err, "%v", sets)
		s := res.Summary()
		assert.Equal(t, s.Conservation["requests"], int64(s.RequestsCompleted)+s.RequestsRejected, "%v", sets)
		ran++
	}
	t.Logf("%d of %d draws ran", ran, draws)
	assert.Positive(t, ran)
}

// A CPU-run store streams a session object larger than host memory through
// it (an 87,169-token prompt of Llama-3-70B is 28.6 GB against DDR4's 16
// GiB): its chunks wrap round host memory. They ran past it, and the
// cycle-level host memory refused them with a panic.
func TestCPUStoreStreamsObjectsLargerThanHostMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("4 s of cycle-level host memory")
	}
	path := filepath.Join("..", "workloads", "testdata", "mooncake_conversation_trace.jsonl.gz")
	res := simulate(t, "workload.kind=mooncake", "workload.path="+path, "workload.limit=15", "accelerator.max_model_len=262144",
		"system.design=cpu", "cpu.host_memory=ddr4-3200", "cpu.host_memory_model=cycle", "accelerator.retain=off")
	s := res.Summary()
	assert.Equal(t, 15, s.RequestsCompleted)
	largest := int64(0)
	for _, r := range res.Run.sys.Records() {
		largest = max(largest, r.ExportBytes)
	}
	assert.Greater(t, largest, int64(16<<30), "one export larger than host memory went through it")
}

// TestSyncSaveHoldsNoAsyncBuffer: a synchronous save copies nothing into
// the asynchronous buffer, so the run ends with the buffer empty and every
// export started ended (the conservation check holds both). Every export
// added its bytes to the buffer's count and only an asynchronous one took
// them off: 40 sessions' 133 exports left 100.7 GB in a buffer the save
// never used.
func TestSyncSaveHoldsNoAsyncBuffer(t *testing.T) {
	for _, design := range []string{"cpu", "fpga"} {
		t.Run(design, func(t *testing.T) {
			res, err := built(t, []string{"system.design=" + design, "store.save=sync", "workload.sessions=40"}).Execute()
			require.NoError(t, err, "the conservation check")
			c := res.Summary().Conservation
			require.Positive(t, c["exports_started"])
			assert.Equal(t, c["exports_started"], c["exports_ended"]+c["exports_dropped"])
		})
	}
}

// TestDeltaExportsInClaim9AreWarned: a delta of a patent key in the
// claim-9 layout is a write in every V column of every layer (81,920 an
// export); it runs, right but hundreds of times slower than full exports,
// and the loaded scenario says so, pointing at the layer-major layout.
// Nothing else is warned of.
func TestDeltaExportsInClaim9AreWarned(t *testing.T) {
	for _, c := range []struct {
		sets []string
		warn bool
	}{
		{[]string{"fpga.export_mode=delta"}, true},
		{[]string{"fpga.export_mode=delta", "system.design=cpu"}, true},
		{[]string{"fpga.export_mode=delta", "fpga.layout=layer-major"}, false},
		{[]string{"fpga.export_mode=delta", "fpga.hashing=block"}, false},
		{[]string{"fpga.export_mode=delta", "system.design=recompute"}, false},
		{nil, false},
	} {
		t.Run(strings.Join(c.sets, ","), func(t *testing.T) {
			l, err := Load("", c.sets)
			require.NoError(t, err)
			if !c.warn {
				assert.Empty(t, l.Warnings())
				return
			}
			require.Len(t, l.Warnings(), 1)
			w := l.Warnings()[0]
			assert.Contains(t, w, "--set fpga.export_mode=delta: key fpga.export_mode: delta exports in the claim9 layout")
			assert.Contains(t, w, "81920 writes an export (80 layers x V width 1024)")
			assert.Contains(t, w, "fpga.layout=layer-major")
		})
	}
}

// TestStoreAndForwardIgnoresTheChunk: fpga.forward: store-and-forward is
// the card's import and export as they were before streaming, whole extents one hop
// after another, whatever store.chunk; streaming in 4 MiB chunks makes
// the resumed turns' wait for their KV shorter on the same workload.
func TestStoreAndForwardIgnoresTheChunk(t *testing.T) {
	run := func(sets ...string) reports.Summary {
		return simulate(t, append([]string{"system.design=fpga"}, append(sets, evicting...)...)...).Summary()
	}
	whole := run("fpga.forward=store-and-forward", "store.chunk=0")
	assert.Equal(t, whole, run("fpga.forward=store-and-forward", "store.chunk=4MiB"), "store-and-forward takes no chunk")
	assert.Equal(t, whole, run("fpga.forward=stream", "store.chunk=0"), "a stream of whole extents is store-and-forward")
	streamed := run("fpga.forward=stream", "store.chunk=4MiB")
	assert.Less(t, streamed.KVWaitMs.Mean, whole.KVWaitMs.Mean, "the streamed import overlaps its hops")
	assert.Equal(t, whole.Bytes["p2p_from_gpu"], streamed.Bytes["p2p_from_gpu"], "the streamed export pulls the same KV over the peer link")
	assert.Equal(t, whole.Tiers[0].BytesWritten, streamed.Tiers[0].BytesWritten)
}

// TestStreamedExportOverlapsItsHops: with fpga.forward: stream the card
// pulls each piece of an export over the peer link while the drives write
// the last, so an export takes less time than the push and then the
// writes of store-and-forward.
func TestStreamedExportOverlapsItsHops(t *testing.T) {
	meanExport := func(forward string) sim.Time {
		res := simulate(t, append([]string{"system.design=fpga", "fpga.forward=" + forward}, evicting...)...)
		var sum sim.Time
		n := 0
		for _, r := range res.Run.sys.Records() {
			if r.Export > 0 {
				sum += r.Export
				n++
			}
		}
		require.Positive(t, n)
		return sum / sim.Time(n)
	}
	whole, streamed := meanExport("store-and-forward"), meanExport("stream")
	t.Logf("mean export: store-and-forward %v, streamed %v", whole, streamed)
	assert.Less(t, streamed, whole*3/4)
}

// TestCardPullsOnlyASynchronousSave: a streamed export is the card's pull,
// which the host does not set up; with store.save: async the next turn
// goes once the KV is off the accelerator, so the host has it pushed into
// the card's HBM first, as store-and-forward does.
func TestCardPullsOnlyASynchronousSave(t *testing.T) {
	setups := func(sets ...string) float64 {
		s := simulate(t, append([]string{"system.design=fpga", "workload.sessions=20"}, sets...)...).Summary()
		return s.Host.CPUCoreSBy["dma_setup"]
	}
	assert.Zero(t, setups("fpga.forward=stream"), "the card pulls its streamed exports")
	assert.Positive(t, setups("fpga.forward=store-and-forward"), "the host pushes each export")
	assert.Positive(t, setups("fpga.forward=stream", "store.save=async"), "an asynchronous save is pushed into the card's HBM")
}

// TestPreloadWaitingTakesTheLoadOffTheAdmittedRequest: with store.preload:
// waiting an open loop past its capacity moves the KV its queued requests
// found into the read buffer before they are admitted: every pre-load is
// used or wasted, the resumed turns' time from admission to their first
// token falls, and a buffer smaller than any object pre-loads nothing.
func TestPreloadWaitingTakesTheLoadOffTheAdmittedRequest(t *testing.T) {
	offRes, onRes := preloadOffOnTiny(t, "waiting", "system.design=cachedattention", "workload.session_rate_per_s=20", "accelerator.max_batch=4",
		"store.dram_tier=16GiB", "store.load_wait=request")
	fromAdmission := func(res *Result) (mean sim.Time) {
		n := 0
		for _, r := range res.Run.sys.Records() {
			if r.Decision == hostcpu.Query && r.Hit {
				n, mean = n+1, mean+r.Prefill
			}
		}
		require.Positive(t, n)
		return mean / sim.Time(n)
	}
	on := onRes.Summary().Store
	assert.Equal(t, on["prefetches"], on["prefetch_used"]+on["prefetch_late"], "a pre-load from a landed prefetch uses it")
	assert.Less(t, fromAdmission(onRes), fromAdmission(offRes))
	for _, r := range onRes.Run.sys.Records() {
		assert.LessOrEqual(t, r.KVWait, r.TTFT, "request %d", r.ID)
	}
}
