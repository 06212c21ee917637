// Package hostcpu is the host CPU of each node: a coordinator of the
// session table, the claim-2 decision on every request, and the
// continuous-batching scheduler that admits requests while device KV
// memory allows. It lends the design's store (hostcpu/store) what a store
// may use of the host (host.go) and drives the store mechanisms
// (hostcpu/mech), each a type of its own: the export phases and async
// save, the layer-wise load, prefetch, look-ahead, pre-load and the
// context window's truncation.
package hostcpu

import (
	"fmt"
	"github.com/kvcosim/kvcosim/internal/names"
	"github.com/kvcosim/kvcosim/kvstore"
	"math"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/hostcpu/mech"
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"github.com/kvcosim/kvcosim/sim"
)

// ExportPolicy is when a session's KV cache is written to the store.
type ExportPolicy int

const (
	// AfterTurn writes through after every inference (the patent).
	AfterTurn ExportPolicy = iota
	// OnEvict writes back only when the device must drop the session's KV.
	OnEvict
)

// ExportPolicies names the values of ExportPolicy: Names lists them, Parse reads one.
var ExportPolicies = names.New("export policy", map[ExportPolicy]string{
	AfterTurn: "after_turn",
	OnEvict:   "on_evict",
})

// String returns the policy's name.
func (p ExportPolicy) String() string { return ExportPolicies.Name(p) }

// MaxBackgroundPPM is the most of a host other work may take: 0.95.
const MaxBackgroundPPM = 950_000

// Config is the CPU side of every node.
type Config struct {
	Design store.Design
	Export ExportPolicy
	Scheme kvstore.Scheme
	// ExportMode is full or delta (what crosses to the store per export).
	ExportMode kvstore.ExportMode
	// BlockTokens is the block size of the block scheme; HashSeed seeds
	// XXH64.
	BlockTokens int64
	HashSeed    uint64
	// MigrateFraction of resumed turns go to another node.
	MigrateFraction float64
	// CPUCores serve the per-request overhead, the decision and (design
	// cpu) hashing and table walks.
	CPUCores         int
	RequestOverhead  sim.Time
	DecisionOverhead sim.Time
	// CPUHashBandwidth is software XXH64 on one core; HostAccessLatency an
	// idle host-memory access (a table read by the CPU).
	CPUHashBandwidth  sim.Bandwidth
	HostAccessLatency sim.Time
	// BackgroundPPM is the share of the host's cores, in parts per
	// million, that other work takes (cpu.background): every job on a
	// node's cores takes 1/(1 - share) as long.
	BackgroundPPM int64
	// MaxBatch and TokenBudget bound each iteration (also the executor's).
	MaxBatch    int
	TokenBudget int64
	// StepByStep gives every iteration an event of its own, where a run
	// of decode steps otherwise takes one (decoderun.go): the same run,
	// more slowly, for the tests that hold the two byte-identical.
	StepByStep bool
	// Engine is how the scheduler allocates device KV memory, preempts
	// and chunks prefills (engine.go).
	Engine Engine
	// KVBytesPerToken is the model's KV cache per token.
	KVBytesPerToken int64
	// DropAfterTurn releases a session's device KV at the end of each turn
	// (counted as a device eviction; write-back exports it then), as the
	// papers' recompute baseline does; otherwise it stays until evicted
	// (vLLM's prefix caching).
	DropAfterTurn bool
	// Mech are the store's mechanisms (load, save, prefetch, eviction,
	// streaming); Layers is the model's, for a layer-wise load.
	Mech   mech.Mechanisms
	Layers int64
	// ContextTokens is the model's context window (0: none); ContextPolicy
	// what a request that passes it gets.
	ContextTokens int64
	ContextPolicy ContextPolicy
	// TruncateFillPermille is the share of the window, in thousandths,
	// that a truncated request's prompt and output fill (1000: cut no
	// more than needed).
	TruncateFillPermille int64
	// MaxConcurrency > 0 replays closed loop: at most this many requests
	// (with their exports) in flight, in trace order. 0 is open loop.
	MaxConcurrency int
	// ClosedOrder is whether a closed loop's waiting turn holds back the
	// turns behind it.
	ClosedOrder ClosedOrder
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case !(c.MigrateFraction >= 0 && c.MigrateFraction <= 1) || math.IsNaN(c.MigrateFraction):
		return fmt.Errorf("system.migrate_fraction = %v: must be in [0, 1]", c.MigrateFraction)
	case c.CPUCores < 1:
		return fmt.Errorf("cpu.cores = %d: must be at least 1", c.CPUCores)
	case c.RequestOverhead < 0 || c.DecisionOverhead < 0 || c.HostAccessLatency < 0:
		return fmt.Errorf("cpu overheads must not be negative")
	case c.BackgroundPPM < 0 || c.BackgroundPPM > MaxBackgroundPPM:
		return fmt.Errorf("cpu.background = %v: must be in [0, 0.95]", float64(c.BackgroundPPM)/1e6)
	case c.CPUHashBandwidth <= 0:
		return fmt.Errorf("cpu.hash_gbps must be positive")
	case c.MaxConcurrency < 0:
		return fmt.Errorf("workload.max_concurrency = %d: must not be negative", c.MaxConcurrency)
	case c.MaxBatch < 1 || c.TokenBudget < 1:
		return fmt.Errorf("accelerator.max_batch = %d and token_budget = %d: must be at least 1", c.MaxBatch, c.TokenBudget)
	case c.Engine.PrefillChunkTokens < 0:
		return fmt.Errorf("accelerator.prefill_chunk_tokens = %d: must not be negative", c.Engine.PrefillChunkTokens)
	case c.Scheme == kvstore.SchemeBlock && c.BlockTokens < 1:
		return fmt.Errorf("fpga.block_tokens = %d: must be positive", c.BlockTokens)
	case c.TruncateFillPermille < 1 || c.TruncateFillPermille > 1000:
		return fmt.Errorf("workload.truncate_fill = %v: must be in (0, 1]", float64(c.TruncateFillPermille)/1000)
	case c.ContextTokens < 0:
		return fmt.Errorf("context window %d: must not be negative", c.ContextTokens)
	case c.KVBytesPerToken < 1:
		return fmt.Errorf("kv bytes per token must be positive")
	case c.Mech.Load == mech.LoadLayerwise && c.Layers < 1:
		return fmt.Errorf("store.load: layerwise needs the model's layers")
	}
	return nil
}

// Run is what the mechanisms' preconditions (mech.Mechanisms.Check) read
// of this configuration over a store of tiers tiers.
func (c Config) Run(tiers int) mech.Run {
	return mech.Run{Design: c.Design.Name, CPUStore: c.Design.Stores && !c.Design.Card,
		ClosedLoop: c.MaxConcurrency > 0, Blocks: c.Scheme == kvstore.SchemeBlock, Tiers: tiers}
}

// Executor runs a node's iterations: the accelerator (accel.Executor), or
// a fake in tests. Run prices an iteration and raises done when it ends;
// the iteration's slices are the scheduler's, reused after Run returns.
type Executor interface {
	Run(it accel.Iteration, done sim.Event) accel.Cost
}

// DecodeRunner is an Executor that also runs decode steps in a row, one
// event for all of them (accel.Executor; decoderun.go): RunDecodes starts
// steps and returns when they end, Cut ends them at the first step to end
// from at on, returning how many it took back and the new end. An
// Executor without it runs every step on its own.
type DecodeRunner interface {
	RunDecodes(it accel.Iteration, steps int, done sim.Event) sim.Time
	Cut(at sim.Time) (back int, end sim.Time)
}

// Node is one node's hardware, assembled by the scenario: the
// accelerator's side, and what the store reaches (store.Node).
type Node struct {
	Exec Executor
	KV   *accel.KVMemory
	store.Node
}
