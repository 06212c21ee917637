// Package mech holds the store mechanisms a storing design uses (how KV
// is loaded, saved, prefetched, pre-loaded and evicted, and how transfers
// stream), their scenario names, and the one statement of what each needs
// of the others and of the run.
package mech

import (
	"fmt"

	"github.com/kvcosim/kvcosim/internal/names"
	"github.com/kvcosim/kvcosim/kvstore"
)

// LoadMode is when an imported object's KV may be used by the prefill.
type LoadMode int

const (
	// LoadWhole imports the whole object into the accelerator before the
	// request queues for it (the patent).
	LoadWhole LoadMode = iota
	// LoadLayerwise starts the import when the request is admitted and lets
	// each layer of the prefill start once its own KV has landed
	// (CachedAttention's layer-wise pre-loading, LMCache's layer-wise
	// retrieval).
	LoadLayerwise
)

// LoadModes names the values of LoadMode.
var LoadModes = names.New("load mode", map[LoadMode]string{LoadWhole: "whole", LoadLayerwise: "layerwise"})

// String returns the mode's name.
func (m LoadMode) String() string { return LoadModes.Name(m) }

// LoadWait is who waits for a layer-wise load slower than the prefill it
// overlaps.
type LoadWait int

const (
	// LoadWaitBatch joins the request to the next iteration at once and
	// holds the iteration, the whole batch with it, until each layer's KV
	// has landed (a layer-synchronous engine).
	LoadWaitBatch LoadWait = iota
	// LoadWaitRequest keeps the request out of the iterations until its KV
	// has landed while the batch goes on without it (CachedAttention
	// pre-loads a job's KV while the jobs before it run; vLLM keeps a
	// request whose KV is being received out of the batch).
	LoadWaitRequest
)

// LoadWaits names the values of LoadWait.
var LoadWaits = names.New("load wait", map[LoadWait]string{
	LoadWaitBatch:   "batch",
	LoadWaitRequest: "request",
})

// String returns the value's name.
func (w LoadWait) String() string { return LoadWaits.Name(w) }

// SaveMode is whether a later turn waits for the export of the last.
type SaveMode int

const (
	// SaveSync is the patent's write-through: a turn that needs the store
	// waits until the previous turn's export is stored.
	SaveSync SaveMode = iota
	// SaveAsync copies the export into a bounded buffer in host memory
	// (the card's memory for the FPGA) and stores it from there in the
	// background; a turn that resumes meanwhile finds the version being
	// saved, and a CPU-run store copies the bytes not yet written to
	// their tier from the buffer (the FPGA reads them from storage).
	SaveAsync
)

// SaveModes names the values of SaveMode.
var SaveModes = names.New("save mode", map[SaveMode]string{SaveSync: "sync", SaveAsync: "async"})

// String returns the mode's name.
func (m SaveMode) String() string { return SaveModes.Name(m) }

// FullPolicy is what an asynchronous export does when its buffer is full.
type FullPolicy int

const (
	// FullBlock waits for room: the export (and a turn parked behind it)
	// waits as a synchronous one would.
	FullBlock FullPolicy = iota
	// FullDrop skips the export: the store keeps the session's older
	// version (counted).
	FullDrop
)

// FullPolicies names the values of FullPolicy.
var FullPolicies = names.New("async buffer policy", map[FullPolicy]string{
	FullBlock: "block",
	FullDrop:  "drop",
})

// String returns the policy's name.
func (p FullPolicy) String() string { return FullPolicies.Name(p) }

// PrefetchPolicy is whether a queued request's KV moves up the tiers
// while it waits.
type PrefetchPolicy int

const (
	// PrefetchNone reads the KV from wherever it is when the load starts.
	PrefetchNone PrefetchPolicy = iota
	// PrefetchQueue moves the KV of a request found below the top tier into
	// host memory as soon as the lookup ends, while the request waits for
	// the accelerator, and in a closed loop raises the session objects of
	// the turns held back for a slot into the top tier before they are let
	// in (CachedAttention's scheduler-aware fetching and its look-ahead
	// window).
	PrefetchQueue
)

// PrefetchPolicies names the values of PrefetchPolicy.
var PrefetchPolicies = names.New("prefetch policy", map[PrefetchPolicy]string{
	PrefetchNone:  "none",
	PrefetchQueue: "queue",
})

// String returns the policy's name.
func (p PrefetchPolicy) String() string { return PrefetchPolicies.Name(p) }

// PreloadPolicy is whether a held-back turn's KV moves into the
// accelerator before the turn is let in.
type PreloadPolicy int

const (
	// PreloadNone starts a layer-wise load when the request is admitted.
	PreloadNone PreloadPolicy = iota
	// PreloadQueue moves the top-tier objects of a closed loop's
	// held-back turns, in queue order, into a read buffer in the
	// accelerator's memory before they are let in (CachedAttention's
	// layer-wise pre-loading, hostcpu/preload.go).
	PreloadQueue
	// PreloadWaiting moves the KV that the requests waiting for admission
	// found, in queue order, into that read buffer before they are
	// admitted: the pre-loading over the job queue an open loop forms
	// after the lookups (CachedAttention's jobs queue for the GPU there).
	PreloadWaiting
)

// PreloadPolicies names the values of PreloadPolicy.
var PreloadPolicies = names.New("preload policy", map[PreloadPolicy]string{
	PreloadNone:    "none",
	PreloadQueue:   "queue",
	PreloadWaiting: "waiting",
})

// String returns the policy's name.
func (p PreloadPolicy) String() string { return PreloadPolicies.Name(p) }

// EvictionPolicy is how the store's tiers choose what to demote or drop.
type EvictionPolicy int

const (
	// EvictLRU takes the least recently used object.
	EvictLRU EvictionPolicy = iota
	// EvictQueueAware passes over objects whose sessions have a request
	// waiting, as if they had just been used (CachedAttention's
	// scheduler-aware eviction).
	EvictQueueAware
)

// EvictionPolicies names the values of EvictionPolicy.
var EvictionPolicies = names.New("eviction policy", map[EvictionPolicy]string{
	EvictLRU:        "lru",
	EvictQueueAware: "queue-aware",
})

// String returns the policy's name.
func (p EvictionPolicy) String() string { return EvictionPolicies.Name(p) }

// Mechanisms are how a storing design moves KV: each is a scenario key
// under store:, and each design has its defaults.
type Mechanisms struct {
	Load     LoadMode
	LoadWait LoadWait
	Save     SaveMode
	Prefetch PrefetchPolicy
	// PrefetchWindowTurns is how many of a closed loop's held-back turns
	// PrefetchQueue looks ahead into (0: none), or in an open loop how many
	// requests waiting on a node it prefetches for beyond the next
	// accelerator.max_batch (0: those only); AutoWindow sizes the window by
	// the top tier and the objects stored, or in an open loop by the top
	// tier and the bytes the waiting requests stage (hostcpu/lookahead.go,
	// layerwise.go).
	PrefetchWindowTurns int
	// Preload and PreloadBufferBytes: whether queued turns' KV is
	// pre-loaded (a closed loop's held-back turns, or the requests waiting
	// for admission), into a read buffer of how many bytes per node.
	Preload            PreloadPolicy
	PreloadBufferBytes int64
	Eviction           EvictionPolicy
	// AsyncBufferBytes bound the exports copied but not yet stored
	// (SaveAsync); AsyncFull says what happens past it.
	AsyncBufferBytes int64
	AsyncFull        FullPolicy
	// ChunkBytes is the piece a transfer of several hops streams in: hop
	// h+1 moves chunk i while hop h moves chunk i+1, as DMA engines do.
	// 0 moves the whole extent through one hop after another. At least
	// MinChunkBytes: each chunk is an event on each hop, and a chunk of a
	// few bytes makes a gigabyte's transfer a billion of them.
	ChunkBytes int64
	// Layout is the stored objects' layout: it says when a layer-wise load
	// has each layer's K and V.
	Layout kvstore.Layout
}

// Run is what the mechanisms' preconditions read of the run beside the
// mechanisms themselves.
type Run struct {
	// Design is the design's name; Card: it runs the store on the FPGA
	// card; CPUStore: the host's CPU runs it (a storing design without a
	// card).
	Design   string
	CPUStore bool
	// ClosedLoop: workload.max_concurrency > 0; Blocks: the store keys
	// blocks (the block scheme), not session objects; Functional: the run
	// moves real bytes.
	ClosedLoop, Blocks, Functional bool
	// Tiers counts the store's tiers.
	Tiers int
}

// Check is the one statement of what each mechanism needs of the others
// and of the run; the scenario's resolver and the System both ask it.
// Each error begins with the key to blame (or the keys, comma-separated:
// the first of them the user set is blamed).
func (m Mechanisms) Check(r Run) error {
	switch {
	case m.Load == LoadLayerwise && r.Functional:
		return fmt.Errorf("store.load,mode: layerwise is for timing mode: functional mode imports whole objects (allowed: whole)")
	case m.PrefetchWindowTurns > 0 && m.Prefetch != PrefetchQueue:
		return fmt.Errorf("store.prefetch_window,store.prefetch: a look-ahead window needs store.prefetch: queue, whose queue it looks into (allowed here: auto, 0)")
	case m.PrefetchWindowTurns > 0 && r.Blocks && r.ClosedLoop:
		return fmt.Errorf("store.prefetch_window,fpga.hashing,system.design,workload.max_concurrency: in a closed loop the look-ahead raises session objects; the block scheme's chunks are prefetched at their lookup only (allowed here: auto, 0)")
	case m.Load == LoadLayerwise && m.Layout == kvstore.LayoutTokenMajor:
		return fmt.Errorf("store.load,fpga.layout: layerwise needs each layer's K and V apart from the others' (fpga.layout: claim9 or layer-major), not token-major")
	case m.LoadWait == LoadWaitRequest && m.Load == LoadWhole:
		return fmt.Errorf("store.load_wait,store.load: request needs store.load: layerwise (a whole load ends before the request queues); allowed here: batch")
	case m.Prefetch == PrefetchQueue && r.Tiers < 2:
		return fmt.Errorf("store.prefetch,storage.tiers,store.dram_tier,system.design: queue needs a tier above the one the KV is stored in (storage.tiers, or a design with a DRAM tier); allowed here: none")
	case m.Prefetch == PrefetchQueue && m.Load == LoadWhole:
		return fmt.Errorf("store.prefetch,store.load: queue needs store.load: layerwise (a whole load starts when the lookup ends: there is no wait to prefetch in); allowed here: none")
	case m.Save == SaveAsync && m.AsyncBufferBytes < 1:
		return fmt.Errorf("store.async_buffer = %d B: must be positive", m.AsyncBufferBytes)
	case m.Preload != PreloadNone && m.Load == LoadWhole:
		return fmt.Errorf("store.preload,store.load: %s needs store.load: layerwise (a pre-load is the layer-wise load begun early); allowed here: none", m.Preload)
	case m.Preload != PreloadNone && m.PreloadBufferBytes < 1:
		return fmt.Errorf("store.preload_buffer = %d B: must be positive", m.PreloadBufferBytes)
	case m.PrefetchWindowTurns < AutoWindow:
		return fmt.Errorf("store.prefetch_window = %d turns: must not be negative (0: none)", m.PrefetchWindowTurns)
	case m.ChunkBytes != 0 && m.ChunkBytes < MinChunkBytes:
		return fmt.Errorf("store.chunk = %d B: must be at least %d B (64 KiB), or 0 (whole extents hop by hop)", m.ChunkBytes, MinChunkBytes)
	}
	return nil
}

// PreloadOn reports whether a run pre-loads, and so sets a read buffer
// aside in each accelerator's memory: store.preload: queue in a closed
// loop or waiting in either, for a design whose CPU runs a store of
// session objects and loads them layer by layer.
func (m Mechanisms) PreloadOn(r Run) bool {
	queued := m.Preload == PreloadWaiting || m.Preload == PreloadQueue && r.ClosedLoop
	return queued && m.Load == LoadLayerwise && !r.Blocks && r.CPUStore
}

// LookAheadOn reports whether the closed loop looks ahead: queue prefetch
// of session objects by a CPU-run store over two tiers or more.
func (m Mechanisms) LookAheadOn(r Run) bool {
	return m.Prefetch == PrefetchQueue && r.ClosedLoop && !r.Blocks && r.CPUStore && r.Tiers >= 2
}

// MinChunkBytes is the smallest store.chunk: 64 KiB, a sixteenth of the
// smallest chunk a serving system streams in (LMCache's 256-token chunks
// are megabytes of KV; docs/scenario.md). Below it a run makes an event per
// chunk per hop for no finding: 4 KiB chunks took 15 times the wall time
// of 64 KiB on 40 sessions, 1 B ones would take hours.
const MinChunkBytes = 64 << 10

// AutoWindow as PrefetchWindowTurns sizes the look-ahead window by the
// top tier.
const AutoWindow = -1

// FirstLayerShare is the share of a whole-object read, in address order,
// after which layer 0's K and V have landed: with layer-major objects the
// first 1/L, with claim 9's (every layer's K, then every layer's V) half
// and 1/(2L), with token-major ones all of it.
func FirstLayerShare(l kvstore.Layout, layers int64) (num, den int64) {
	switch l {
	case kvstore.LayoutLayerMajor:
		return 1, layers
	case kvstore.LayoutClaim9:
		return layers + 1, 2 * layers
	}
	return 1, 1
}
