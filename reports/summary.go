// Package reports holds a run's result records and renders them: the
// summary as JSON, the requests as CSV, and (later) plots and traces.
package reports

import (
	"encoding/json"
	"io"
	"sort"
)

// Percentiles summarises a latency in milliseconds.
type Percentiles struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
}

// NewPercentiles computes exact nearest-rank percentiles of values.
func NewPercentiles(values []float64) Percentiles {
	if len(values) == 0 {
		return Percentiles{}
	}
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	rank := func(q float64) float64 {
		i := int(q*float64(len(s))+0.999999999) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return Percentiles{Mean: sum / float64(len(s)), P50: rank(0.5), P90: rank(0.9), P99: rank(0.99)}
}

// Summary is a run's headline figures (summary.json).
type Summary struct {
	Design            string `json:"design"`
	Seed              uint64 `json:"seed"`
	RequestsCompleted int    `json:"requests_completed"`
	RequestsRejected  int64  `json:"requests_rejected"`
	// RequestsRejectedByReason counts RequestsRejected by why each was
	// refused, every reason named (hostcpu.RejectReasons): context_window
	// (past the model's context window, with workload.context_policy
	// reject), kv_memory (prompt and output need more than the device's
	// KV memory).
	RequestsRejectedByReason map[string]int64 `json:"requests_rejected_by_reason"`
	// RequestsTruncated lost their oldest tokens to the model's context
	// window; RequestsContextRejected passed it and were refused (counted
	// in RequestsRejected too, and as context_window by reason).
	RequestsTruncated       int64   `json:"requests_truncated"`
	RequestsContextRejected int64   `json:"requests_context_rejected"`
	SkippedTraceLines       int     `json:"skipped_trace_lines"`
	Sessions                int     `json:"sessions"`
	SimTimeS                float64 `json:"sim_time_s"`
	Events                  uint64  `json:"events"`
	// Saturated is set when the run could not keep up with its offered
	// load (Load.Why says how it fell behind).
	Saturated bool        `json:"saturated"`
	Load      Load        `json:"load"`
	TTFTms    Percentiles `json:"ttft_ms"`
	TPOTms    Percentiles `json:"tpot_ms"`
	E2Ems     Percentiles `json:"e2e_ms"`
	// ResumedTTFTms and KVWaitMs are over the resumed turns whose KV was
	// no longer on the accelerator (looked up, or recomputed) and the
	// requests whose lookup hit the store (a one-turn trace's first turns
	// among them): their TTFT, and their wait for the KV.
	ResumedTTFTms Percentiles `json:"resumed_ttft_ms"`
	// ResumedTurns is how many resumed turns ResumedTTFTms is over.
	ResumedTurns         int         `json:"resumed_turns"`
	KVWaitMs             Percentiles `json:"kv_wait_ms"`
	ThroughputTokensPerS float64     `json:"throughput_tokens_per_s"`
	// SustainedOutputTokensPerS is the output throughput of the load kept
	// up for good: the output tokens the run served per session, times the
	// sessions per second it delivered while they arrived
	// (Load.DeliveredSessionsPerS, over Load's window). It falls once a
	// design cannot keep up; ThroughputTokensPerS divides the same tokens
	// by the whole run, its idle tail included, and stays at the offered
	// rate. Absent for a run whose load is not judged.
	SustainedOutputTokensPerS float64            `json:"sustained_output_tokens_per_s,omitempty"`
	PromptTokens              int64              `json:"prompt_tokens"`
	PrefillTokensComputed     int64              `json:"prefill_tokens_computed"`
	PrefillTokensReused       int64              `json:"prefill_tokens_reused"`
	PrefillTokensResident     int64              `json:"prefill_tokens_resident"`
	HitRatioTokens            float64            `json:"hit_ratio_tokens"`
	Decisions                 map[string]int64   `json:"decisions"`
	Bytes                     map[string]int64   `json:"bytes"`
	Utilization               map[string]float64 `json:"utilization"`
	Evictions                 map[string]int64   `json:"evictions"`
	InvariantChecks           int64              `json:"invariant_checks"`
	// Conservation holds the counts the run checked add up: requests and
	// their claim-2 decisions, queries and their hits and misses, exports
	// started and those ended or dropped.
	Conservation map[string]int64 `json:"conservation"`
	Store        map[string]int64 `json:"store"`
	// Tiers are the storage pool's tiers, fastest first (storing designs).
	Tiers []TierSummary `json:"tiers,omitempty"`
	// Functional holds functional mode's data-integrity counters.
	Functional map[string]int64 `json:"functional,omitempty"`
	// Host is what the store's work cost the hosts; Energy and Cost the
	// run's energy and its cost per output token (docs/hostcpu.md, "Host
	// cost, energy and cost").
	Host   HostSummary   `json:"host"`
	Energy EnergySummary `json:"energy"`
	Cost   CostSummary   `json:"cost"`
	// Engine is the incremental engine's allocation and preemption
	// (accelerator.kv_alloc: incremental); absent under reserve, which
	// never preempts.
	Engine *EngineSummary `json:"engine,omitempty"`
	// Goodput is what the run served within its objectives; absent when
	// the scenario sets none (slo.*).
	Goodput *Goodput `json:"goodput,omitempty"`
	// AfterWarmup is the run's figures over the turns after its warm-up
	// (workload.warmup_turns); absent without one.
	AfterWarmup *WarmupSummary `json:"after_warmup,omitempty"`
}

// WarmupSummary is a run's figures over the turns that arrived after its
// first WarmupTurns (the store's warm-up, which CachedAttention's paper
// leaves out of its figures): how many completed, their TTFT, their TTFT
// from admission, their prompt tokens and those reused from the store,
// and the share reused. The TTFT from admission runs from a turn's first
// admission into the accelerator's batch to its first token
// (requests.csv's prefill_ms; a preemption before the first token stays
// inside it): it leaves out the wait in the engine's queue, which in an
// open loop past its capacity runs to minutes and would be all a mean
// TTFT shows. It leaves out whatever a design does before admission too:
// a whole load (the fpga and cpu designs import before the turn queues)
// is not in it, a layer-wise load is, and a closed loop's pre-load only in
// part, so designs that load differently compare on it only with that
// said (docs/scenario.md).
type WarmupSummary struct {
	WarmupTurns         int         `json:"warmup_turns"`
	Turns               int         `json:"turns"`
	TTFTms              Percentiles `json:"ttft_ms"`
	TTFTFromAdmissionMs Percentiles `json:"ttft_from_admission_ms"`
	PromptTokens        int64       `json:"prompt_tokens"`
	ReusedTokens        int64       `json:"reused_tokens"`
	HitRatioTokens      float64     `json:"hit_ratio_tokens"`
}

// EngineSummary is the incremental engine's KV allocation and preemption
// (docs/hostcpu.md, "The engine step by step"): its mode, the running
// requests preempted for want of a free block, the KV tokens they
// recomputed or the bytes they swapped to host memory or stored (each
// moved out and back), the most requests a node ran at once, and the
// sequences an iteration ran on average.
type EngineSummary struct {
	KVAlloc                   string  `json:"kv_alloc"`
	Preemption                string  `json:"preemption"`
	Preemptions               int64   `json:"preemptions"`
	PreemptedTokensRecomputed int64   `json:"preempted_tokens_recomputed"`
	PreemptedBytesSwapped     int64   `json:"preempted_bytes_swapped"`
	PreemptedBytesStored      int64   `json:"preempted_bytes_stored"`
	PeakRunning               int64   `json:"peak_running"`
	MeanBatch                 float64 `json:"mean_batch"`
}

// HostSummary is what the store's work cost the hosts, every node
// together: the core-seconds of its hashing and lookups (timed) and of its
// I/O submissions, DMA set-ups and staging copies (priced per operation or
// byte), by kind in CPUCoreSBy; the host-DRAM bytes read and written (host
// memory and any host-DRAM tier), and the most the store's moves put
// through host memory in one 100 ms window, as a rate; the bytes through
// the hosts' PCIe root complexes; and the host's cores and the share of
// them (and of its memory bandwidth) other work took.
type HostSummary struct {
	CPUCoreS       float64            `json:"cpu_core_s"`
	CPUCoreSBy     map[string]float64 `json:"cpu_core_s_by"`
	DRAMReadBytes  int64              `json:"dram_read_bytes"`
	DRAMWriteBytes int64              `json:"dram_write_bytes"`
	DRAMPeakGBps   float64            `json:"dram_peak_gbps"`
	PCIeRootBytes  int64              `json:"pcie_root_bytes"`
	Cores          int                `json:"cores"`
	Background     float64            `json:"background"`
}

// EnergySummary is the run's energy in joules, per output token and by
// component (accelerator, host_cpu, host_dram, drives, fpga, links).
type EnergySummary struct {
	Joules               float64            `json:"joules"`
	JoulesPerOutputToken float64            `json:"joules_per_output_token"`
	JoulesBy             map[string]float64 `json:"joules_by"`
}

// CostSummary is the run's cost: its hardware's capital paid off over
// the run's time, its energy's price, and both per million output tokens.
type CostSummary struct {
	CapitalUSD                float64 `json:"capital_usd"`
	EnergyUSD                 float64 `json:"energy_usd"`
	USDPerMillionOutputTokens float64 `json:"usd_per_million_output_tokens"`
}

// WriteJSON writes the summary, indented, with sorted map keys.
func (s *Summary) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// TierSummary is one storage tier's figures in a run: its device and
// capacity, the lookups it answered, the bytes its device read and wrote,
// the objects moved into and out of it (demoted down a tier, promoted to
// the top), those dropped for good, those its TTL deleted, and what it
// holds at the end.
type TierSummary struct {
	Name          string `json:"name"`
	Device        string `json:"device"`
	CapacityBytes int64  `json:"capacity_bytes"`
	Lookups       int64  `json:"lookups"`
	Hits          int64  `json:"hits"`
	BytesRead     int64  `json:"bytes_read"`
	BytesWritten  int64  `json:"bytes_written"`
	DemotedIn     int64  `json:"demoted_in"`
	DemotedOut    int64  `json:"demoted_out"`
	Promoted      int64  `json:"promoted"`
	Evictions     int64  `json:"evictions"`
	Expirations   int64  `json:"expirations"`
	Objects       int64  `json:"objects"`
	HeldBytes     int64  `json:"held_bytes"`
	// Drives, DriveBytesPerDay, DriveWritesPerDay and RatedDWPD are for a
	// tier of SSDs: the drives its bytes stripe over, the bytes written per
	// drive over the run scaled to a day of the same traffic, the drive
	// writes per day they make (over the capacity of the drive as sold, not
	// the share of the store the run gives it), and the maker's
	// rating.
	Drives            int     `json:"drives,omitempty"`
	DriveBytesPerDay  float64 `json:"drive_bytes_per_day,omitempty"`
	DriveWritesPerDay float64 `json:"drive_writes_per_day,omitempty"`
	RatedDWPD         float64 `json:"rated_dwpd,omitempty"`
	// SustainedDriveWritesPerDay is the drive writes per day of the load
	// kept up for good: the bytes the run wrote to each drive per session,
	// times the sessions per second it delivered while they arrived
	// (Summary.Load), for a day. It is what a drive serving this load
	// around the clock sees; DriveWritesPerDay spreads the run's bytes over
	// its idle tail too. Absent for a run whose load is not judged.
	SustainedDriveWritesPerDay float64 `json:"sustained_drive_writes_per_day,omitempty"`
}
