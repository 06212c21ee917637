// Package scenario reads a scenario file (YAML, every parameter with its
// unit in the key), validates it with errors that name the file, line and
// key, assembles the system it describes and runs it.
package scenario

// Scenario is a whole run. Each field's doc gives its unit; the embedded
// default.yaml gives the defaults and docs/scenario.md the ranges.
type Scenario struct {
	Seed        uint64      `yaml:"seed"`
	Mode        string      `yaml:"mode"`
	System      System      `yaml:"system"`
	Model       string      `yaml:"model"`
	CustomModel CustomModel `yaml:"custom_model"`
	Accelerator Accelerator `yaml:"accelerator"`
	CPU         CPU         `yaml:"cpu"`
	FPGA        FPGA        `yaml:"fpga"`
	Storage     Storage     `yaml:"storage"`
	Store       Store       `yaml:"store"`
	Workload    Workload    `yaml:"workload"`
	SLO         SLO         `yaml:"slo,omitempty"`
	Functional  Functional  `yaml:"functional"`
	Power       Power       `yaml:"power"`
	Cost        Cost        `yaml:"cost"`
	Study       Study       `yaml:"study"`
}

// Study is what the default study (simrun with no command) reads; a run
// or a sweep point does not.
type Study struct {
	// Seeds is how many seeds the study runs each headline and load point
	// over: the scenario's seed and the next Seeds-1.
	Seeds int `yaml:"seeds"`
}

// System is the overall design.
type System struct {
	Design          string  `yaml:"design"`
	Nodes           int     `yaml:"nodes"`
	Export          string  `yaml:"export"`
	Routing         string  `yaml:"routing"`
	MigrateFraction float64 `yaml:"migrate_fraction"`
	NetworkGbps     float64 `yaml:"network_gbps"`
	NetworkLatency  string  `yaml:"network_latency"`
}

// CustomModel is the shape of model: custom.
type CustomModel struct {
	Layers       int     `yaml:"layers"`
	Hidden       int     `yaml:"hidden"`
	Heads        int     `yaml:"heads"`
	KVHeads      int     `yaml:"kv_heads"`
	HeadDim      int     `yaml:"head_dim"`
	Intermediate int     `yaml:"intermediate"`
	Vocab        int     `yaml:"vocab"`
	ParamsB      float64 `yaml:"params_b"`
	// ContextTokens is the context window (0: none).
	ContextTokens int64 `yaml:"context_tokens"`
}

// Accelerator is each node's accelerator.
type Accelerator struct {
	Device        string  `yaml:"device"`
	DeviceFile    string  `yaml:"device_file"` // a device in YAML over a preset (simrun calibrate --fit writes one)
	Engine        string  `yaml:"engine"`      // the serving engine around the GPU's work
	Retain        string  `yaml:"retain"`      // on: a session's KV stays in device memory between turns; off: dropped
	TP            int     `yaml:"tp"`
	WeightDType   string  `yaml:"weight_dtype"`
	KVDType       string  `yaml:"kv_dtype"`
	ReserveGB     float64 `yaml:"reserve_gb"`
	KVBlockTokens int     `yaml:"kv_block_tokens"`
	KVCapacity    string  `yaml:"kv_capacity"`   // auto, or a size per node
	MaxModelLen   int64   `yaml:"max_model_len"` // the context window requests must fit; 0: the model's
	MaxBatch      int     `yaml:"max_batch"`
	TokenBudget   int     `yaml:"token_budget"`
	// KVAlloc is when KV blocks are taken (reserve | incremental);
	// Preemption what a preempted request's KV becomes (recompute | swap |
	// store); ChunkedPrefill on or off, PrefillChunkTokens a chunk's cap.
	KVAlloc            string   `yaml:"kv_alloc"`
	Preemption         string   `yaml:"preemption"`
	ChunkedPrefill     string   `yaml:"chunked_prefill"`
	PrefillChunkTokens int64    `yaml:"prefill_chunk_tokens"`
	Decoding           Decoding `yaml:"decoding"`
}

// Decoding is the decoding kernel charged per decode step: the fused
// TopK-TopP-Sample operator, or beam search with its KV-cache reorder.
type Decoding struct {
	Kernel string `yaml:"kernel"` // sample or beam
	TopK   int    `yaml:"top_k"`
	TopP   bool   `yaml:"top_p"`
	Beams  int    `yaml:"beams"`
}

// CPU is each node's host.
type CPU struct {
	Cores            int     `yaml:"cores"`
	RequestOverhead  string  `yaml:"request_overhead"`
	DecisionOverhead string  `yaml:"decision_overhead"`
	HashGBps         float64 `yaml:"hash_gbps"`
	HostMemory       string  `yaml:"host_memory"`
	HostMemoryModel  string  `yaml:"host_memory_model"`
	HostAccess       string  `yaml:"host_access"`
	GPULink          string  `yaml:"gpu_link"`
	GPULinks         int     `yaml:"gpu_links"`
	// Background is the share of the host's cores and memory bandwidth
	// other work takes (0 to 0.95).
	Background float64 `yaml:"background"`
	// IOSubmit, DMASetup and CopyGBps price the host's store work the
	// run does not time: a core's time per storage command (or command to
	// the card), per DMA it sets up, and its rate copying staged bytes.
	IOSubmit string  `yaml:"io_submit"`
	DMASetup string  `yaml:"dma_setup"`
	CopyGBps float64 `yaml:"copy_gbps"`
}

// FPGA is each node's FPGA card and the store's index.
type FPGA struct {
	ClockMHz        float64 `yaml:"clock_mhz"`
	Hashing         string  `yaml:"hashing"`
	BlockTokens     int     `yaml:"block_tokens"`
	Buckets         int64   `yaml:"buckets"`
	HashLanes       int     `yaml:"hash_lanes"`
	RegionMiB       int64   `yaml:"region_mib"`
	FreeDelay       string  `yaml:"free_delay"`
	AllocPolicy     string  `yaml:"alloc_policy"`
	Supersede       string  `yaml:"supersede"`
	TTL             string  `yaml:"ttl"`
	Placement       string  `yaml:"placement"`
	Layout          string  `yaml:"layout"`
	ExportMode      string  `yaml:"export_mode"`
	QueryTasks      int     `yaml:"query_tasks"`
	ExportTasks     int     `yaml:"export_tasks"`
	PCIe            string  `yaml:"pcie"`
	Exchange        string  `yaml:"exchange"`
	P2PGBps         float64 `yaml:"p2p_gbps"`
	Forward         string  `yaml:"forward"`
	CheckInvariants bool    `yaml:"check_invariants"`
}

// Storage is the external store (one pool, shared by every node).
type Storage struct {
	// Device and Capacity are the one-tier form's; a scenario.yaml with
	// tiers leaves them out (Loaded.YAML).
	Device   string `yaml:"device,omitempty"`
	Capacity string `yaml:"capacity,omitempty"`
	// Drives > 1 stripe the capacity over that many drives (RAID 0).
	Drives int `yaml:"drives"`
	// Resolution is how finely the drives are worked out: page (the
	// default) or request (docs/memory.md states its error).
	Resolution string `yaml:"resolution,omitempty"`
	// Tiers, when given, replace device and capacity: the pool's tiers,
	// fastest first.
	Tiers []TierSpec `yaml:"tiers,omitempty"`
}

// Store is how a storing design moves KV; an empty key takes the
// design's own choice (docs/scenario.md).
type Store struct {
	Load        string `yaml:"load"`         // whole | layerwise
	LoadWait    string `yaml:"load_wait"`    // batch | request
	Save        string `yaml:"save"`         // sync | async
	AsyncBuffer string `yaml:"async_buffer"` // a size: exports copied but not yet stored
	AsyncFull   string `yaml:"async_full"`   // block | drop
	Prefetch    string `yaml:"prefetch"`     // none | queue
	// PrefetchWindow is the look-ahead window in held-back turns, or
	// auto (sized by the top tier).
	PrefetchWindow string `yaml:"prefetch_window"`
	Preload        string `yaml:"preload"`        // none | queue
	PreloadBuffer  string `yaml:"preload_buffer"` // a size: the read buffer in each node's accelerator memory
	Eviction       string `yaml:"eviction"`       // lru | queue-aware
	Chunk          string `yaml:"chunk"`          // a size, or 0: whole extents hop by hop
	DRAMTier       string `yaml:"dram_tier"`      // a size: the host-DRAM tier of a design that has one
	// HostBuffers is where a CPU-run store's host copy of the KV is when
	// it goes to the accelerator: pinned | pageable (the CUDA driver then
	// copies it into its pinned staging buffers at PageableGBps).
	HostBuffers  string  `yaml:"host_buffers"`
	PageableGBps float64 `yaml:"pageable_gbps"`
}

// TierSpec is one tier of the storage pool.
type TierSpec struct {
	Name     string `yaml:"name"`
	Device   string `yaml:"device"`
	Capacity string `yaml:"capacity"`
}

// Workload is what arrives.
type Workload struct {
	Kind  string `yaml:"kind"`
	Limit int    `yaml:"limit"`
	// MemoryLimitGiB bounds a synthetic run's estimated memory; 0 (left
	// out of the resolved scenario): 4 GiB.
	MemoryLimitGiB       float64 `yaml:"memory_limit_gib,omitempty"`
	Sessions             int     `yaml:"sessions"`
	SessionRatePerS      float64 `yaml:"session_rate_per_s"`
	TurnsMean            float64 `yaml:"turns_mean"`
	SystemPromptTokens   int     `yaml:"system_prompt_tokens"`
	InterruptProbability float64 `yaml:"interrupt_probability"`
	ThinkMedianS         float64 `yaml:"think_median_s"`
	ThinkP90S            float64 `yaml:"think_p90_s"`
	// The synthetic lengths in tokens, each a log-normal by its median
	// and p90.
	FirstPromptMedian float64 `yaml:"first_prompt_median_tokens"`
	FirstPromptP90    float64 `yaml:"first_prompt_p90_tokens"`
	FollowUpMedian    float64 `yaml:"follow_up_median_tokens"`
	FollowUpP90       float64 `yaml:"follow_up_p90_tokens"`
	OutputMedian      float64 `yaml:"output_median_tokens"`
	OutputP90         float64 `yaml:"output_p90_tokens"`
	Path              string  `yaml:"path"`
	TimeScale         float64 `yaml:"time_scale"`
	MaxConcurrency    int     `yaml:"max_concurrency"`
	ClosedOrder       string  `yaml:"closed_order"`
	SkipBadLines      bool    `yaml:"skip_bad_lines"`
	ContextPolicy     string  `yaml:"context_policy"`
	TruncateFill      float64 `yaml:"truncate_fill"`
	// WarmupTurns is how many turns, the first to arrive, summary.json's
	// after_warmup leaves out (0, left out of a run's scenario.yaml: no
	// after_warmup).
	WarmupTurns int `yaml:"warmup_turns,omitempty"`
	// Arrival is the synthetic sessions' arrival process (left out:
	// poisson), and the keys after it its parameters (0, left out: the
	// default, docs/scenario.md); Tenants share out the sessions. All are
	// left out of a run's scenario.yaml unless given.
	Arrival             string       `yaml:"arrival,omitempty"`
	GammaCV             float64      `yaml:"gamma_cv,omitempty"`
	DiurnalPeriodS      float64      `yaml:"diurnal_period_s,omitempty"`
	DiurnalPeakToTrough float64      `yaml:"diurnal_peak_to_trough,omitempty"`
	SpikeAtS            float64      `yaml:"spike_at_s,omitempty"`
	SpikeLengthS        float64      `yaml:"spike_length_s,omitempty"`
	SpikeHeight         float64      `yaml:"spike_height,omitempty"`
	Tenants             []TenantSpec `yaml:"tenants,omitempty"`
}

// TenantSpec is one tenant of the synthetic workload: its name, its share
// of the sessions, its token lengths (each left out: the workload's) and
// its objectives (each left out: slo's).
type TenantSpec struct {
	Name              string  `yaml:"name"`
	Share             float64 `yaml:"share"`
	FirstPromptMedian float64 `yaml:"first_prompt_median_tokens,omitempty"`
	FirstPromptP90    float64 `yaml:"first_prompt_p90_tokens,omitempty"`
	FollowUpMedian    float64 `yaml:"follow_up_median_tokens,omitempty"`
	FollowUpP90       float64 `yaml:"follow_up_p90_tokens,omitempty"`
	OutputMedian      float64 `yaml:"output_median_tokens,omitempty"`
	OutputP90         float64 `yaml:"output_p90_tokens,omitempty"`
	SLO               SLO     `yaml:"slo,omitempty"`
}

// SLO is a request's service-level objectives, in milliseconds: its time
// to first token and its time per output token after the first. Left out
// (0), an objective is none; summary.json's goodput is there when one is
// set (docs/scenario.md).
type SLO struct {
	TTFTms float64 `yaml:"ttft_ms,omitempty"`
	TPOTms float64 `yaml:"tpot_ms,omitempty"`
}

// Power is each component's power draw, for the run's energy (docs/hostcpu.md
// "Host cost, energy and cost" gives the sources).
type Power struct {
	AcceleratorActiveW float64 `yaml:"accelerator_active_w"` // each GPU, busy
	AcceleratorIdleW   float64 `yaml:"accelerator_idle_w"`   // each GPU, idle
	CPUCoreW           float64 `yaml:"cpu_core_w"`           // a host core busy with store work
	DRAMPJPerBit       float64 `yaml:"dram_pj_per_bit"`      // host DRAM, read or written
	DriveActiveW       float64 `yaml:"drive_active_w"`       // each drive, moving data
	DriveIdleW         float64 `yaml:"drive_idle_w"`         // each drive, idle
	FPGAActiveW        float64 `yaml:"fpga_active_w"`        // the FPGA card, moving data
	FPGAIdleW          float64 `yaml:"fpga_idle_w"`          // the FPGA card, idle
	LinkPJPerBit       float64 `yaml:"link_pj_per_bit"`      // a PCIe, peer or network link
}

// Cost is each component's price and how long it is paid off over, and
// the price of energy, for a run's cost per output token.
type Cost struct {
	AcceleratorUSD    float64 `yaml:"accelerator_usd"` // each GPU
	HostUSD           float64 `yaml:"host_usd"`        // each node's server, GPUs, drives and card aside
	DriveUSD          float64 `yaml:"drive_usd"`       // each drive
	FPGAUSD           float64 `yaml:"fpga_usd"`        // each FPGA card
	AmortizationYears float64 `yaml:"amortization_years"`
	USDPerKWh         float64 `yaml:"usd_per_kwh"`
}
