package scenario

import (
	"fmt"
	"github.com/kvcosim/kvcosim/hostcpu/mech"
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"github.com/kvcosim/kvcosim/kvstore"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/fpga"
	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
	"github.com/kvcosim/kvcosim/workloads"
)

// resolved is a validated scenario in the models' own types.
type resolved struct {
	host        hostcpu.Config
	nodes       int
	network     sim.Bandwidth
	netLatency  sim.Time
	node        *accel.Node // the accelerator of every node
	kvBlock     int64
	kvCapacity  int64 // 0: what the device memory leaves
	hostMemory  memory.DRAMConfig
	hostCycle   bool
	costs       hostCosts
	gpuLink     memory.PCIeConfig
	fpga        fpga.Config
	fpgaPCIe    memory.PCIeConfig
	exchangeAcc bool
	// stream: fpga.forward=stream, the card's imports in store.chunk's
	// pieces through their hops
	stream bool
	p2p    sim.Bandwidth
	// pageable: store.host_buffers=pageable, the driver's staging copy's
	// rate; 0: pinned
	pageable    sim.Bandwidth
	ssd         memory.SSDConfig // the one-tier form's device: one of drives
	drives      int
	tiers       []kvstore.Tier       // the pool's tiers, fastest first
	tierDevices []string             // their device presets
	resolution  memory.SSDResolution // the drives' (storage.resolution)
	dramTier    bool                 // the one-tier form under the design's host-DRAM tier
	synthetic   workloads.SyntheticConfig
	slo         sloConfig         // the objectives goodput is judged by (slo.*, a tenant's)
	functional  *functionalConfig // nil in timing mode
	warnings    []string          // what runs but should not go unsaid (Loaded.Warnings)
}

// resolver collects the first error, naming where the key was set.
type resolver struct {
	l   *Loaded
	err error
}

func (r *resolver) fail(key, format string, args ...any) {
	r.failAt(r.l.Where(key), key, format, args...)
}

// failAt records the first error, at where rather than where key was set.
func (r *resolver) failAt(where, key, format string, args ...any) {
	if r.err == nil {
		r.err = &Error{Where: where, Key: key, Msg: fmt.Sprintf(format, args...)}
	}
}

// warn notes a setting that runs as asked but costs what the user may not
// expect, naming where the key was set.
func (r *resolver) warn(out *resolved, key, format string, args ...any) {
	out.warnings = append(out.warnings, (&Error{Where: r.l.Where(key), Key: key, Msg: fmt.Sprintf(format, args...)}).Error())
}

// warnTinyWrites warns of delta exports of patent keys in the claim-9
// layout: V is stored column by column, so a delta's new tokens are a
// write in every column of every layer (Llama-3-70B: 81,920 writes an
// export). The results are right, only slow (40 default sessions: 35.2 M
// events and 28.6 s against 17,576 events and 0.03 s with full exports,
// 0.12 M and 0.10 s with a delta in the layer-major layout), and the
// patent's layout is a fair thing to study, so it is a warning, not an
// error (simrun verify runs it).
func (r *resolver) warnTinyWrites(out *resolved, dir kvstore.DirectoryConfig) {
	if dir.Mode != kvstore.ExportDelta || dir.Layout != kvstore.LayoutClaim9 || dir.Scheme != kvstore.SchemePatent || !out.host.Design.Stores {
		return
	}
	r.warn(out, r.culprit("fpga.export_mode", "fpga.layout"), "delta exports in the claim9 layout append each version's new tokens to V column by column: "+
		"%d writes an export (%d layers x V width %d), where a full export writes a few; the run is right but slow (40 default sessions: "+
		"35.2 M events and 28.6 s, against 17,576 and 0.03 s with full exports); fpga.layout=layer-major keeps a delta's tokens together "+
		"(0.12 M events, 0.10 s)", dir.Shape.Layers*dir.Shape.VWidth, dir.Shape.Layers, dir.Shape.VWidth)
}

// oneOf checks a scenario-level choice and returns it.
func (r *resolver) oneOf(key, value string, allowed ...string) string {
	if !slices.Contains(allowed, value) {
		r.fail(key, "%q is not allowed (allowed: %s)", value, strings.Join(allowed, ", "))
	}
	return value
}

// pick reads an enum's value by name through the enum's own table.
func pick[E any](r *resolver, key, value string, parse func(string) (E, error)) E {
	v, err := parse(value)
	r.check(key, err)
	return v
}

// duration reads a duration key of at most limit.
func (r *resolver) duration(key, value string, limit sim.Time) sim.Time {
	t, err := sim.ParseTime(value)
	if err != nil {
		r.fail(key, "%v", err)
	}
	if t > limit {
		r.fail(key, "%v is more than the limit of %v", t, limit)
	}
	return t
}

// maxStudySeeds bounds study.seeds: a hundred seeds give a spread's
// extremes to about 1 %; more only multiply the study's time.
const maxStudySeeds = 100

// maxOverhead bounds a per-operation overhead or latency: a second is
// far beyond any measured one (docs/scenario.md), and keeps a run's sums of
// them far from sim.Horizon.
const maxOverhead = sim.Second

func (r *resolver) intIn(key string, v, lo, hi int64) {
	if v < lo || v > hi {
		r.fail(key, "%d is out of range (allowed: %d to %d)", v, lo, hi)
	}
}

func (r *resolver) floatIn(key string, v, lo, hi float64) {
	if !(v >= lo && v <= hi) || math.IsNaN(v) {
		r.fail(key, "%v is out of range (allowed: %v to %v)", v, lo, hi)
	}
}

// culprit picks the key to blame for a failure that several keys cause
// together: the first set by --set, else the first set in a file, else the
// first.
func (r *resolver) culprit(keys ...string) string {
	for _, from := range []func(where string) bool{
		func(w string) bool { return strings.HasPrefix(w, "--set") }, // "--set key=value"
		func(w string) bool { return !strings.HasPrefix(w, "(") },    // a file's line: not the default's, nor a command's own (verifySets)
	} {
		for _, k := range keys {
			if from(r.l.Where(k)) {
				return k
			}
		}
	}
	return keys[0]
}

func (r *resolver) check(key string, err error) {
	if err != nil {
		r.fail(key, "%v", err)
	}
}

// resolve validates every key and builds the models' configurations.
func (l *Loaded) resolve() (*resolved, error) {
	r := &resolver{l: l}
	sc := &l.Scenario
	out := &resolved{}
	r.resolveFunctional(sc, out)
	r.resolveSystem(sc, out)
	r.resolveAccelerator(sc, out)
	r.resolveCPU(sc, out)
	r.resolveHostCosts(sc, out)
	r.resolveStorage(sc, out)
	r.resolveFPGA(sc, out)
	r.engineBlocks(out)
	r.resolveWorkload(sc, out)
	r.resolveSLO(sc, out)
	r.resolveStore(sc, out)
	r.intIn("study.seeds", int64(sc.Study.Seeds), 1, maxStudySeeds)
	return out, r.err
}

func (r *resolver) resolveSystem(sc *Scenario, out *resolved) {
	s := sc.System
	out.host.Design = pick(r, "system.design", s.Design, store.ParseDesign)
	out.host.Export = pick(r, "system.export", s.Export, hostcpu.ExportPolicies.Parse)
	r.intIn("system.nodes", int64(s.Nodes), 1, 1024)
	out.nodes = s.Nodes
	if r.oneOf("system.routing", s.Routing, "sticky", "migrate") == "migrate" {
		r.floatIn("system.migrate_fraction", s.MigrateFraction, 0, 1)
		out.host.MigrateFraction = s.MigrateFraction
	}
	r.floatIn("system.network_gbps", s.NetworkGbps, 0.001, 1e6)
	out.network = sim.Bandwidth(s.NetworkGbps * 1e9 / 8)
	out.netLatency = r.duration("system.network_latency", s.NetworkLatency, maxOverhead)
}

func (r *resolver) resolveAccelerator(sc *Scenario, out *resolved) {
	a := sc.Accelerator
	var m accel.Model
	tp := a.TP
	if out.functional != nil { // the model that runs is tinylm, on one device
		m, tp = tinyModel(out.functional.model), 1
	} else if sc.Model == "custom" {
		c := sc.CustomModel
		if !r.customShape(c) {
			return
		}
		m = accel.Model{Name: "custom", Layers: c.Layers, Hidden: c.Hidden, Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
			Intermediate: c.Intermediate, Vocab: c.Vocab, Params: int64(c.ParamsB * 1e9), ActiveParams: int64(c.ParamsB * 1e9), Attention: accel.GQA,
			ContextTokens: c.ContextTokens}
	} else {
		var err error
		m, err = accel.ModelPreset(sc.Model)
		r.check("model", err)
	}
	dev, err := accel.DevicePreset(a.Device)
	r.check("accelerator.device", err)
	if a.DeviceFile != "" {
		full := r.besideScenario("accelerator.device_file", a.DeviceFile)
		dev = r.deviceFile("accelerator.device_file", full)
		sc.Accelerator.DeviceFile = absolute(full) // the record names the file the run read, from any folder
	}
	engine := pick(r, "accelerator.engine", a.Engine, accel.ParseEngine)
	wdt, err := accel.ParseDType(a.WeightDType)
	r.check("accelerator.weight_dtype", err)
	kvdt, err := accel.ParseDType(a.KVDType)
	r.check("accelerator.kv_dtype", err)
	r.intIn("accelerator.tp", int64(a.TP), 1, 64)
	r.floatIn("accelerator.reserve_gb", a.ReserveGB, 0, 1e4)
	r.intIn("accelerator.kv_block_tokens", int64(a.KVBlockTokens), 1, 1<<16)
	r.intIn("accelerator.max_batch", int64(a.MaxBatch), 1, 1<<16)
	r.intIn("accelerator.token_budget", int64(a.TokenBudget), 1, 1<<24)
	r.intIn("accelerator.decoding.top_k", int64(a.Decoding.TopK), 0, 1<<24)
	if a.Decoding.TopK > m.Vocab && r.err == nil { // the default's top-k against a small vocabulary blames the vocabulary
		r.fail(r.culprit("accelerator.decoding.top_k", "custom_model.vocab", "functional.vocab", "model"),
			"accelerator.decoding.top_k %d is more than the model's vocabulary of %d tokens (allowed: a top-k of 0 to %d, or a larger vocabulary)", a.Decoding.TopK, m.Vocab, m.Vocab)
	}
	r.intIn("accelerator.decoding.beams", int64(a.Decoding.Beams), 1, 64)
	if r.err != nil {
		return
	}
	r.kvPerTokenFits(m, kvdt)
	if r.err != nil {
		return
	}
	if m.Validate(1) == nil {
		r.check("accelerator.tp", m.Validate(tp))
	}
	node, err := accel.NewNode(m, dev, tp, wdt, kvdt, int64(a.ReserveGB*1e9), r.decoding(a.Decoding, m, kvdt))
	r.check(r.culprit("model", "accelerator.reserve_gb", "accelerator.tp", "accelerator.device", "accelerator.device_file", "accelerator.weight_dtype"), err)
	if r.err != nil {
		return
	}
	node.Engine = engine
	out.node, out.kvBlock = node, int64(a.KVBlockTokens)
	if a.KVCapacity != "auto" {
		var err error
		out.kvCapacity, err = ParseSize(a.KVCapacity)
		r.check("accelerator.kv_capacity", err)
	}
	out.host.MaxBatch, out.host.TokenBudget = a.MaxBatch, int64(a.TokenBudget)
	out.host.DropAfterTurn = r.oneOf("accelerator.retain", a.Retain, "on", "off") == "off"
	out.host.KVBytesPerToken = m.KVBytesPerToken(kvdt)
	out.host.ContextTokens = m.ContextTokens
	if r.intIn("accelerator.max_model_len", a.MaxModelLen, 0, 1<<24); a.MaxModelLen >= 1 {
		out.host.ContextTokens = a.MaxModelLen
		if out.functional != nil {
			r.fail(r.culprit("accelerator.max_model_len", "mode"), "functional mode checks every turn against its whole history: tinylm has no window to truncate to (allowed: 0)")
		}
	}
	r.engine(a, out)
	if out.functional != nil {
		out.host.KVBytesPerToken = int64(m.Layers) * int64(2*m.KVHeads*m.HeadDim) * 4 // float32
	}
	block := out.host.KVBytesPerToken * out.kvBlock
	left := out.node.KVCapacityBytes()
	switch {
	case out.kvCapacity > 0 && out.kvCapacity < block:
		r.fail("accelerator.kv_capacity", "%s is less than one %d-token block of %d B", a.KVCapacity, out.kvBlock, block)
	case out.kvCapacity > left && r.l.Changed("accelerator.kv_capacity"): // the default's 40GB is a cap where it can be one
		r.fail("accelerator.kv_capacity", "%s is more than the %d B the device's memory leaves for KV (after the weights and accelerator.reserve_gb): a cap above it changes nothing (allowed: at most %d B, or auto)",
			a.KVCapacity, left, left)
	case left < block:
		r.fail(r.culprit("accelerator.reserve_gb", "model", "accelerator.tp", "accelerator.device", "accelerator.device_file", "accelerator.weight_dtype"),
			"the device's memory leaves %d B for KV, less than one %d-token block of %d B", left, out.kvBlock, block)
	}
}

// customShape checks model: custom's shape key by key; false if one is
// out of range.
func (r *resolver) customShape(c CustomModel) bool {
	shape := []struct {
		key string
		v   int
	}{{"layers", c.Layers}, {"hidden", c.Hidden}, {"heads", c.Heads}, {"kv_heads", c.KVHeads}, {"head_dim", c.HeadDim},
		{"intermediate", c.Intermediate}, {"vocab", c.Vocab}, {"params_b", 1}}
	for _, f := range shape[:len(shape)-1] {
		lo := int64(1)
		if f.key == "vocab" {
			lo = 2 // a sampler chooses among two tokens at least
		}
		if key := "custom_model." + f.key; !r.unset(key) {
			r.intIn(key, int64(f.v), lo, 1<<24)
		}
	}
	if !r.unset("custom_model.params_b") {
		r.floatIn("custom_model.params_b", c.ParamsB, 1e-6, 1e5)
	}
	for _, f := range shape { // a key left out has no default to fall back on: model: custom is the culprit
		if key := "custom_model." + f.key; r.unset(key) {
			r.failAt(r.l.Where("model"), key, "missing: model: custom needs every key of its shape (layers, hidden, heads, kv_heads, head_dim, intermediate, vocab, params_b)")
		}
	}
	r.intIn("custom_model.context_tokens", c.ContextTokens, 0, 1<<24)
	return r.err == nil
}

// maxKVBytesPerToken bounds a model's KV a token (2^38 B, 256 GiB; the
// largest preset's is 0.5 MB), so that a whole 2^24-token context of it
// stays within the largest size, maxSizeBytes.
const maxKVBytesPerToken = maxSizeBytes >> 24

// kvPerTokenFits refuses a model whose KV a token passes
// maxKVBytesPerToken: a custom model's layers x KV width (2 x kv_heads x
// head_dim) x bytes, where the int64 product wrapped (to 0, a negative
// size, or a small wrong one a run went on with).
func (r *resolver) kvPerTokenFits(m accel.Model, kv accel.DType) {
	k, v := m.KVWidth()
	if bytes := float64(m.Layers) * float64(k+v) * float64(kv.Bytes()); bytes > maxKVBytesPerToken {
		r.fail(r.culprit("custom_model.layers", "custom_model.kv_heads", "custom_model.head_dim", "accelerator.kv_dtype"),
			"%d layers x (%d + %d) KV width x %d B = %.4g B of KV a token, more than the limit of %d B (a 2^24-token context of it must fit the largest size, %d B)",
			m.Layers, k, v, kv.Bytes(), bytes, int64(maxKVBytesPerToken), int64(maxSizeBytes))
	}
}

// decoding is the decode step's kernel cost (accel.DecodingKernels): beam
// search charges every request's beams and their KV-cache reorder; the
// forward pass is still charged per request (the scheduler does not fan
// requests into beams).
func (r *resolver) decoding(d Decoding, m accel.Model, kv accel.DType) accel.KernelCost {
	k := pick(r, "accelerator.decoding.kernel", d.Kernel, accel.ParseDecodingKernel)
	if k.Cost == nil {
		return nil // an unknown kernel: refused
	}
	return k.Cost(accel.DecodingSettings{TopK: d.TopK, TopP: d.TopP, Beams: d.Beams}, m, kv)
}

func (r *resolver) resolveCPU(sc *Scenario, out *resolved) {
	c := sc.CPU
	r.intIn("cpu.cores", int64(c.Cores), 1, 4096)
	out.host.CPUCores = c.Cores
	out.host.RequestOverhead = r.duration("cpu.request_overhead", c.RequestOverhead, maxOverhead)
	out.host.DecisionOverhead = r.duration("cpu.decision_overhead", c.DecisionOverhead, maxOverhead)
	out.host.HostAccessLatency = r.duration("cpu.host_access", c.HostAccess, maxOverhead)
	r.floatIn("cpu.hash_gbps", c.HashGBps, 0.001, 1e4)
	out.host.CPUHashBandwidth = sim.Bandwidth(c.HashGBps * 1e9)
	var err error
	out.hostMemory, err = memory.DRAMPreset(c.HostMemory)
	r.check("cpu.host_memory", err)
	out.hostCycle = r.oneOf("cpu.host_memory_model", c.HostMemoryModel, "flat", "cycle") == "cycle"
	out.gpuLink, err = memory.PCIePreset(c.GPULink)
	r.check("cpu.gpu_link", err)
	r.intIn("cpu.gpu_links", int64(c.GPULinks), 1, memory.MaxPCIeLinks)
	out.gpuLink.Links = c.GPULinks
}

func (r *resolver) resolveStorage(sc *Scenario, out *resolved) {
	s := sc.Storage
	r.intIn("storage.drives", int64(s.Drives), 1, maxDrives)
	if s.Resolution != "" || !r.unset("storage.resolution") { // given empty, it is refused
		out.resolution = pick(r, "storage.resolution", s.Resolution, memory.SSDResolutions.Parse)
	}
	if len(s.Tiers) == 0 && !r.unset("storage.tiers") {
		r.fail("storage.tiers", "an empty list: give one tier or more, or leave storage.tiers out for storage.device and storage.capacity")
	}
	out.drives = max(1, s.Drives)
	if r.unset("storage.drives") && (len(s.Tiers) > 0 || out.functional != nil) {
		// each tier is one device, functional mode's bytes are on one: the
		// default's drives give way, and scenario.yaml records one drive
		out.drives, sc.Storage.Drives = 1, 1
	}
	if out.drives > 1 && len(s.Tiers) > 0 {
		r.fail("storage.drives", "%d drives stripe storage.device; with storage.tiers each tier is one device (allowed here: 1)", s.Drives)
	}
	if len(s.Tiers) == 0 {
		var err error
		out.ssd, err = memory.SSDPreset(s.Device)
		r.check("storage.device", err)
		out.ssd.Resolution = out.resolution
		return
	}
	switch {
	case !out.host.Design.Stores: // the tiers are built, and idle
	case len(s.Tiers) > 1 && out.host.Design.Card:
		r.fail("storage.tiers", "the %s design reaches one tier (the patent's external store), not %d", out.host.Design, len(s.Tiers))
	case out.functional != nil:
		r.fail("storage.tiers", "functional mode stores real bytes on one SSD: give storage.device and storage.capacity")
	}
	for _, key := range []string{"storage.device", "storage.capacity"} {
		if !r.unset(key) {
			culprit, other := key, "storage.tiers"
			if r.culprit(key, other) == other {
				culprit, other = other, key
			}
			r.fail(culprit, "%s is given too: give the tiers, or one device and its capacity", other)
		}
	}
	for i, t := range s.Tiers {
		key := fmt.Sprintf("storage.tiers[%d]", i)
		if t.Name == "" {
			r.fail(key+".name", "empty: every tier wants a name")
		} else if j := slices.IndexFunc(s.Tiers[:i], func(o TierSpec) bool { return o.Name == t.Name }); j >= 0 {
			r.fail(key+".name", "%q: want a name of its own (tier %d has it)", t.Name, j)
		}
		switch {
		case t.Device == "":
			r.fail(key+".device", "missing: every tier wants a device (allowed: %s)", strings.Join(memory.TierDeviceNames(), ", "))
		case !slices.Contains(memory.TierDeviceNames(), t.Device):
			r.fail(key+".device", "%q is not allowed (allowed: %s)", t.Device, strings.Join(memory.TierDeviceNames(), ", "))
		}
		out.tierDevices = append(out.tierDevices, t.Device)
	}
}

// resolveTiers sizes the pool's tiers in whole regions: the one-tier form
// from storage.device and storage.capacity, or storage.tiers.
func (r *resolver) resolveTiers(sc *Scenario, out *resolved, region int64) (last int64, unlimited bool) {
	s := sc.Storage
	if len(s.Tiers) == 0 {
		bytes, unlimited := r.capacity("storage.capacity", s.Capacity, region)
		out.tiers, out.tierDevices = []kvstore.Tier{{Name: s.Device, Bytes: bytes}}, []string{s.Device}
		r.dramTierRead(sc, out)
		if out.host.Design.DRAMTier && out.functional == nil {
			dram, _ := r.capacity("store.dram_tier", sc.Store.DRAMTier, region)
			out.tiers = append([]kvstore.Tier{{Name: "host-dram", Bytes: dram}}, out.tiers...)
			out.tierDevices = append([]string{sc.CPU.HostMemory}, out.tierDevices...)
			out.dramTier = true
		}
		return bytes, unlimited
	}
	r.dramTierRead(sc, out)
	for i, t := range s.Tiers {
		key := fmt.Sprintf("storage.tiers[%d].capacity", i)
		if t.Capacity == "" {
			r.fail(key, "missing: every tier wants a capacity (a size such as 2TB, or unlimited)")
		}
		bytes, u := r.capacity(key, t.Capacity, region)
		out.tiers = append(out.tiers, kvstore.Tier{Name: t.Name, Bytes: bytes})
		last, unlimited = bytes, u
	}
	return last, unlimited
}

// dramTierRead refuses store.dram_tier given another value than the
// default's where no host-DRAM tier is built from it: a design without one
// (recompute, cpu, fpga), storage.tiers given, or functional mode.
func (r *resolver) dramTierRead(sc *Scenario, out *resolved) {
	if !r.l.Changed("store.dram_tier") {
		return
	}
	switch {
	case !out.host.Design.DRAMTier:
		r.fail(r.culprit("store.dram_tier", "system.design"), "%s: the %s design has no host-DRAM tier (lmcache and cachedattention have one); for tiers of your own give storage.tiers",
			sc.Store.DRAMTier, out.host.Design)
	case len(sc.Storage.Tiers) > 0:
		r.fail(r.culprit("store.dram_tier", "storage.tiers"), "%s: storage.tiers is given, and replaces the design's host-DRAM tier: put a DRAM tier in the list", sc.Store.DRAMTier)
	case out.functional != nil:
		r.fail(r.culprit("store.dram_tier", "mode"), "%s: functional mode stores real bytes on one SSD, with no host-DRAM tier", sc.Store.DRAMTier)
	}
}

// resolveFPGA reads the card and the index. A design's own hashing, chunk
// and layout, taken where no file and no --set gave the key, are written
// into the scenario: its scenario.yaml records what the run used, and
// read back resolves to the same.
func (r *resolver) resolveFPGA(sc *Scenario, out *resolved) {
	f := &sc.FPGA
	design := out.host.Design
	if design.ChunkTokens > 0 && r.unset("fpga.hashing") {
		f.Hashing = "block"
		if r.unset("fpga.block_tokens") {
			f.BlockTokens = int(design.ChunkTokens)
		}
	}
	if design.Mech.Layout != kvstore.LayoutClaim9 && r.unset("fpga.layout") {
		f.Layout = design.Mech.Layout.String()
	}
	scheme := pick(r, "fpga.hashing", f.Hashing, kvstore.Schemes.Parse)
	out.host.Scheme = scheme
	r.intIn("fpga.block_tokens", int64(f.BlockTokens), 1, 1<<20)
	r.intIn("fpga.hash_lanes", int64(f.HashLanes), 1, 64)
	r.intIn("fpga.query_tasks", int64(f.QueryTasks), 1, 1024)
	r.intIn("fpga.export_tasks", int64(f.ExportTasks), 1, 1024)
	out.host.BlockTokens = int64(f.BlockTokens)
	bucketsLog2, err := kvstore.BucketsLog2(f.Buckets)
	r.check("fpga.buckets", err)
	r.intIn("fpga.region_mib", f.RegionMiB, 1, 1<<14)
	region := f.RegionMiB << 20
	storage, unlimited := r.resolveTiers(sc, out, region)
	layout := pick(r, "fpga.layout", f.Layout, kvstore.Layouts.Parse)
	placement := pick(r, "fpga.placement", f.Placement, fpga.Placements.Parse)
	mode := pick(r, "fpga.export_mode", f.ExportMode, kvstore.ExportModes.Parse)
	out.host.ExportMode = mode
	policy := pick(r, "fpga.alloc_policy", f.AllocPolicy, kvstore.AllocPolicies.Parse)
	supersede := r.oneOf("fpga.supersede", f.Supersede, "delete", "keep") == "delete"
	out.exchangeAcc = r.oneOf("fpga.exchange", f.Exchange, "fpga-hbm", "accelerator") == "accelerator"
	out.stream = r.oneOf("fpga.forward", f.Forward, "stream", "store-and-forward") == "stream"
	r.floatIn("fpga.clock_mhz", f.ClockMHz, 1, 5000)
	r.floatIn("fpga.p2p_gbps", f.P2PGBps, 0.001, 1e4)
	out.p2p = sim.Bandwidth(f.P2PGBps * 1e9)
	out.fpgaPCIe, err = memory.PCIePreset(f.PCIe)
	r.check("fpga.pcie", err)
	if r.err != nil || out.node == nil {
		return
	}
	m := out.node.Model
	k, v := m.KVWidth()
	dir := kvstore.DirectoryConfig{Scheme: scheme, BlockTokens: int64(f.BlockTokens), BucketsLog2: bucketsLog2, RegionBytes: region,
		StorageBytes: storage, FreeDelay: r.duration("fpga.free_delay", f.FreeDelay, sim.Horizon), Policy: policy, DeleteSuperseded: supersede,
		TTL: r.duration("fpga.ttl", f.TTL, sim.Horizon), Layout: layout, Mode: mode,
		Shape: kvstore.KVShape{Layers: m.Layers, KWidth: k, VWidth: v, ElemBytes: int(out.node.KVDType.Bytes())}, CheckInvariants: f.CheckInvariants}
	if out.functional != nil {
		dir.Shape.ElemBytes = 4 // tinylm's float32
	}
	r.warnTinyWrites(out, dir)
	cfg := fpga.DefaultConfig(dir)
	cfg.ClockHz = int64(math.Round(f.ClockMHz * 1e6))
	cfg.Hash.Lanes, cfg.Hash.Seed = f.HashLanes, sc.Seed
	cfg.QueryTasks, cfg.ExportTasks, cfg.Placement = f.QueryTasks, f.ExportTasks, placement
	if unlimited {
		cfg.MaxLinks = 1 << 24
	}
	placementBytes := out.hostMemory.CapacityBytes()
	if placement == fpga.PlaceHBM {
		placementBytes = memory.HBM2_U55C().CapacityBytes()
	}
	r.check(r.culprit("fpga.placement", "fpga.buckets", "storage.capacity", "storage.tiers", "fpga.region_mib", "cpu.host_memory"), cfg.Validate(placementBytes))
	out.fpga = cfg
	out.host.HashSeed = sc.Seed
	out.ssd.CapacityBytes = storage
	if out.drives > 1 { // each drive holds every drives-th stripe
		per := int64(out.drives) * memory.StripeBytes
		out.ssd.CapacityBytes = (storage + per - 1) / per * memory.StripeBytes
	}
}

// resolveHostBuffers reads where a CPU-run store keeps its host copy of
// the KV: pageable memory costs the CUDA driver's staging copy at
// store.pageable_gbps on the way into the accelerator.
func (r *resolver) resolveHostBuffers(st Store, out *resolved) {
	r.floatIn("store.pageable_gbps", st.PageableGBps, 0.1, 1000)
	if r.oneOf("store.host_buffers", st.HostBuffers, "pinned", "pageable") != "pageable" {
		return
	}
	if d := out.host.Design; !d.Stores || d.Card {
		r.fail("store.host_buffers", "pageable: the %s design keeps no host copy of the KV to copy from (pageable takes cpu, lmcache or cachedattention)", d.Name)
	}
	out.pageable = sim.Bandwidth(st.PageableGBps * 1e9)
}

// maxDrives bounds storage.drives: the NVMe bays of a storage server.
const maxDrives = 64

// unset reports whether no file and no --set gave key.
func (r *resolver) unset(key string) bool { return r.l.Unset(key) }

// resolveStore reads the store's mechanisms over the design's own and
// checks them against the tiers.
func (r *resolver) resolveStore(sc *Scenario, out *resolved) {
	st := sc.Store
	m := out.host.Design.Mech
	if st.Load != "" {
		m.Load = pick(r, "store.load", st.Load, mech.LoadModes.Parse)
	}
	m.LoadWait = pick(r, "store.load_wait", st.LoadWait, mech.LoadWaits.Parse)
	if st.Save != "" {
		m.Save = pick(r, "store.save", st.Save, mech.SaveModes.Parse)
	}
	if st.Prefetch != "" {
		m.Prefetch = pick(r, "store.prefetch", st.Prefetch, mech.PrefetchPolicies.Parse)
	}
	m.PrefetchWindowTurns = mech.AutoWindow
	if st.PrefetchWindow != "auto" {
		n, err := strconv.Atoi(st.PrefetchWindow)
		if err != nil || n < 0 || n > 1<<20 {
			r.fail("store.prefetch_window", "%q: want auto or a whole number of turns from 0 (none) to 1048576", st.PrefetchWindow)
		}
		m.PrefetchWindowTurns = n
	}
	if st.Preload != "" {
		m.Preload = pick(r, "store.preload", st.Preload, mech.PreloadPolicies.Parse)
	}
	if st.Eviction != "" {
		m.Eviction = pick(r, "store.eviction", st.Eviction, mech.EvictionPolicies.Parse)
	}
	m.AsyncFull = pick(r, "store.async_full", st.AsyncFull, mech.FullPolicies.Parse)
	var err error
	m.AsyncBufferBytes, err = ParseSize(st.AsyncBuffer)
	r.check("store.async_buffer", err)
	m.PreloadBufferBytes, err = ParseSize(st.PreloadBuffer)
	r.check("store.preload_buffer", err)
	if st.Chunk != "0" && st.Chunk != "0B" {
		m.ChunkBytes, err = ParseSize(st.Chunk)
		r.check("store.chunk", err)
	}
	if out.stream {
		out.fpga.ChunkBytes = m.ChunkBytes // the card streams its imports in store.chunk's pieces
	}
	r.resolveHostBuffers(st, out)
	if r.err != nil || out.node == nil {
		return
	}
	m.Layout = out.fpga.Directory.Layout
	out.host.Mech, out.host.Layers = m, int64(out.node.Model.Layers)
	if !out.host.Design.Stores {
		r.checkPreload(st, out) // a pre-load set for a design that stores nothing
		return
	}
	if out.drives > 1 && out.functional != nil {
		r.fail(r.culprit("storage.drives", "mode"), "functional mode keeps the stored bytes on one drive (allowed: 1)")
	}
	r.bufferHoldsAnObject(st.AsyncBuffer, m, out)
	r.hostMemoryStages(st.Chunk, m, out)
	run := out.host.Run(len(out.tiers))
	run.Functional = out.functional != nil
	if err := m.Check(run); err != nil {
		key, msg, _ := strings.Cut(err.Error(), ": ")
		key, _, _ = strings.Cut(key, " ")
		keys := strings.Split(key, ",")
		culprit := r.culprit(keys...)
		switch { // the message is the first key's: say so when another key is blamed
		case culprit != keys[0] && r.unset(keys[0]):
			msg = fmt.Sprintf("%s (the %s design's own): %s", keys[0], out.host.Design, msg)
		case culprit != keys[0]:
			msg = keys[0] + ": " + msg
		}
		r.fail(culprit, "%s", msg)
	}
	r.checkPreload(st, out)
}

// checkPreload refuses pre-loading set where it cannot run, and a
// read buffer that leaves the accelerator less than one KV block.
func (r *resolver) checkPreload(st Store, out *resolved) {
	run := out.host.Run(len(out.tiers))
	if !out.host.Mech.PreloadOn(run) {
		switch {
		case st.Preload == "" || out.host.Mech.Preload == mech.PreloadNone: // not set, or the design's own
		case !run.CPUStore || run.Blocks:
			r.fail(r.culprit("store.preload", "system.design", "fpga.hashing"),
				"%s pre-loads a CPU-run store's session objects (not the block scheme, the fpga design or a design that stores nothing) (allowed here: none)", out.host.Mech.Preload)
		case !run.ClosedLoop:
			r.fail(r.culprit("store.preload", "workload.max_concurrency"),
				"queue pre-loads for the turns a closed loop holds back (workload.max_concurrency > 0); an open loop's queue is its requests waiting for admission (allowed here: none, waiting)")
		}
		return
	}
	block := out.host.KVBytesPerToken * out.kvBlock
	window := (out.host.ContextTokens + out.kvBlock - 1) / out.kvBlock * block // a whole context window's KV, in blocks
	buffer, room := out.host.Mech.PreloadBufferBytes, out.kvRoom()
	culprit := r.culprit("store.preload_buffer", "accelerator.kv_capacity", "accelerator.max_model_len")
	switch {
	case buffer > room-block:
		r.fail(culprit, "%s leaves less than one KV block (%d B) of the accelerator's %d B for KV", st.PreloadBuffer, block, room)
	case buffer > room-window:
		r.fail(culprit, "%s leaves %d B of the accelerator's %d B for KV, less than one request of the whole %d-token context window (%d B): such a request would never be admitted, and its node would stall (allowed: a buffer of at most %d B, or more KV memory)",
			st.PreloadBuffer, room-buffer, room, out.host.ContextTokens, window, room-window)
	}
}

// kvRoom is each node's memory for KV: what the device leaves, or
// accelerator.kv_capacity if that is less; a pre-load read buffer takes
// its share of it (build.go).
func (out *resolved) kvRoom() int64 {
	room := out.node.KVCapacityBytes()
	if out.kvCapacity > 0 {
		room = min(room, out.kvCapacity)
	}
	return room
}

// bufferHoldsAnObject refuses an asynchronous buffer smaller than the
// largest object a design stores.
func (r *resolver) bufferHoldsAnObject(text string, m mech.Mechanisms, out *resolved) {
	if largest, what := out.largestObject(); m.Save == mech.SaveAsync && m.AsyncBufferBytes < largest {
		r.fail(r.culprit("store.async_buffer", "accelerator.max_model_len", "fpga.block_tokens", "model"),
			"store.async_buffer's %s is smaller than %s x %d B per token = %d B)", text, what, out.host.KVBytesPerToken, largest)
	}
}

// hostMemoryStages refuses transfers a CPU-run store could not stage in
// host memory (cpu.host_memory): a chunk larger than it, or, with
// store.chunk 0, a whole object larger than it. (A streamed transfer
// larger than host memory wraps round it, store.Node.Staging.)
func (r *resolver) hostMemoryStages(text string, m mech.Mechanisms, out *resolved) {
	host := out.hostMemory.CapacityBytes()
	if out.host.Design.Card {
		return // the fpga design's transfers go peer to peer
	}
	if m.ChunkBytes > host {
		r.fail(r.culprit("store.chunk", "cpu.host_memory"), "%s is more than cpu.host_memory's %d B, where a transfer stages its chunks", text, host)
	}
	// a session's whole KV leaves the accelerator in one transfer, blocks or not
	if largest := out.host.ContextTokens * out.host.KVBytesPerToken; m.ChunkBytes == 0 && largest > host {
		r.fail(r.culprit("store.chunk", "cpu.host_memory", "accelerator.max_model_len"),
			"0 moves a session's whole KV through host memory, and %s's %d-token window x %d B per token = %d B is more than cpu.host_memory's %d B: stream it in chunks",
			out.node.Model.Name, out.host.ContextTokens, out.host.KVBytesPerToken, largest, host)
	}
}

// largestObject is the largest object a design stores, and what it is:
// one block in the block scheme, else a session's whole history, at most
// the context window.
func (out *resolved) largestObject() (int64, string) {
	if out.host.Scheme == kvstore.SchemeBlock {
		return out.host.BlockTokens * out.host.KVBytesPerToken, fmt.Sprintf("one block (%d tokens", out.host.BlockTokens)
	}
	return out.host.ContextTokens * out.host.KVBytesPerToken, fmt.Sprintf("a session's object (%s's %d-token window", out.node.Model.Name, out.host.ContextTokens)
}

// capacity reads storage.capacity: a size, or unlimited (as many regions
// as the index can address, and no more bytes than the largest size
// ParseSize takes: 2^31-1 regions of 8 GiB would overflow int64).
func (r *resolver) capacity(key, text string, region int64) (int64, bool) {
	regions := min(1<<31-1, maxSizeBytes/region)
	if text == "unlimited" {
		return regions * region, true
	}
	n, err := ParseSize(text)
	if err != nil {
		r.fail(key, "%v (or unlimited)", err)
		return region, false
	}
	switch {
	case n < region:
		r.fail(key, "%s is smaller than one %d MiB region", text, region>>20)
	case n/region > regions:
		r.fail(key, "%s is more than the %d B (%d regions of %d MiB, fpga.region_mib) the index addresses: give at most that, or unlimited",
			text, regions*region, regions, region>>20)
	}
	return n / region * region, false
}

func (r *resolver) resolveWorkload(sc *Scenario, out *resolved) {
	w := sc.Workload
	r.oneOf("workload.kind", w.Kind, workloads.Kinds...)
	r.kindKeys(w)
	r.intIn("workload.limit", int64(w.Limit), 0, 1<<31-1)
	r.floatIn("workload.time_scale", w.TimeScale, 1e-9, 1e9)
	r.intIn("workload.max_concurrency", int64(w.MaxConcurrency), 0, 1<<20)
	r.intIn("workload.warmup_turns", int64(w.WarmupTurns), 0, 1<<31-1)
	out.host.MaxConcurrency = w.MaxConcurrency
	out.host.ClosedOrder = pick(r, "workload.closed_order", w.ClosedOrder, hostcpu.ClosedOrders.Parse)
	if !r.unset("workload.closed_order") && w.MaxConcurrency == 0 && out.host.ClosedOrder != hostcpu.OrderTrace {
		r.fail(r.culprit("workload.closed_order", "workload.max_concurrency"), "%s orders a closed loop's turns; this is an open loop (workload.max_concurrency: 0)", w.ClosedOrder)
	}
	if bt := workloads.TraceBlockTokens(w.Kind); bt > 0 && out.host.Scheme == kvstore.SchemeBlock && out.host.BlockTokens != bt {
		r.fail(r.culprit("fpga.block_tokens", "workload.kind"), "the %s trace's block keys are %d-token blocks, the store's %d (fpga.block_tokens, or the design's chunks)", w.Kind, bt, out.host.BlockTokens)
	}
	out.host.ContextPolicy = pick(r, "workload.context_policy", w.ContextPolicy, hostcpu.ContextPolicies.Parse)
	r.floatIn("workload.truncate_fill", w.TruncateFill, 0.001, 1)
	if w.TruncateFill != 1 && out.host.ContextPolicy == hostcpu.ContextReject {
		r.fail(r.culprit("workload.truncate_fill", "workload.context_policy"), "%v: a truncation's depth, but workload.context_policy is reject (allowed here: 1)", w.TruncateFill)
	}
	out.host.TruncateFillPermille = int64(math.Round(w.TruncateFill * 1000))
	if !w.Synthetic() && w.Path == "" {
		r.fail("workload.path", "a %s trace needs its file", w.Kind)
	}
	c := workloads.DefaultSynthetic()
	c.Sessions, c.SessionRatePerS, c.TurnsMean = w.Sessions, w.SessionRatePerS, w.TurnsMean
	if w.MemoryLimitGiB != 0 { // 0: the default
		r.floatIn("workload.memory_limit_gib", w.MemoryLimitGiB, 1, workloads.MaxMemoryLimitGiB)
	}
	c.MemoryLimitBytes = int64(w.MemoryLimitGiB * (1 << 30))
	c.SystemPromptTokens, c.InterruptProbability = w.SystemPromptTokens, w.InterruptProbability
	c.Think = workloads.LengthFit{Median: w.ThinkMedianS, P90: w.ThinkP90S}
	c.FirstPrompt = workloads.LengthFit{Median: w.FirstPromptMedian, P90: w.FirstPromptP90}
	c.FollowUpPrompt = workloads.LengthFit{Median: w.FollowUpMedian, P90: w.FollowUpP90}
	c.Output = workloads.LengthFit{Median: w.OutputMedian, P90: w.OutputP90}
	if out.node != nil {
		c.Vocab = out.node.Model.Vocab
	}
	r.resolveArrivals(sc, &c)
	if err := c.Validate(); err != nil { // "workload.KEY[,workload.KEY]: ..." names the keys, "model: ..." the model
		msg := err.Error()
		keys, _, _ := strings.Cut(msg, " ")
		keys = strings.TrimSuffix(keys, ":")
		msg = strings.TrimPrefix(msg, keys+": ")
		r.fail(r.culprit(append(strings.Split(keys, ","), "workload")...), "%s", msg)
	}
	out.synthetic = c
	if w.Synthetic() && r.err == nil {
		r.checkWork(float64(c.Sessions)*c.TurnsMean, out)
	}
}

// checkWork refuses a run whose requests' fixed overheads alone, one after
// another, would pass half of sim.Horizon: an estimate from the inputs, so
// that no accepted scenario overflows simulated time.
func (r *resolver) checkWork(requests float64, out *resolved) {
	per := out.host.RequestOverhead + out.host.DecisionOverhead + out.host.HostAccessLatency + 2*out.netLatency
	if total := requests * per.Seconds(); total > sim.Horizon.Seconds()/2 {
		r.fail("cpu.request_overhead", "about %.3g requests of %v overheads each (cpu.request_overhead, cpu.decision_overhead, cpu.host_access, 2 x system.network_latency) take %.3g s, more than half the %v limit of a run",
			requests, per, total, sim.Horizon)
	}
}

// checkTrace holds a read trace against the scenario: its arrivals scaled
// by workload.time_scale within sim.Horizon, its pinned nodes within
// system.nodes, its overheads within the horizon.
func (l *Loaded) checkTrace(t *workloads.Trace) error {
	r := &resolver{l: l}
	last := t.Requests[len(t.Requests)-1]
	if at, ok := sim.ScaleTime(last.Arrival, l.Workload.TimeScale); !ok || at > sim.Horizon {
		r.fail("workload.time_scale", "%v x the last arrival %v (%s:%d) is past the %v limit of a run", l.Workload.TimeScale, last.Arrival, t.Path, last.Line, sim.Horizon)
	}
	for _, q := range t.Requests {
		if q.Node >= l.System.Nodes && r.err == nil {
			r.err = &workloads.LineError{Path: t.Path, Line: q.Line, Field: "node", Msg: fmt.Sprintf("%d: the system has %d node(s) (system.nodes)", q.Node, l.System.Nodes)}
		}
	}
	r.checkWork(float64(len(t.Requests)), l.resolved)
	return r.err
}

// maxSizeBytes is the largest size a scenario takes (2^62 B, 4 EiB): sums
// of a few such sizes still fit int64.
const maxSizeBytes = math.MaxInt64 / 2

// ParseSize reads a size such as "4TB", "512 GiB" or "1500000B": decimal
// (kB, MB, GB, TB, PB) or binary (KiB ... PiB) units.
func ParseSize(text string) (int64, error) {
	s := strings.TrimSpace(text)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return 0, fmt.Errorf("size %q: expected a number and a unit such as 4TB or 512GiB", text)
	}
	num, unit := s[:i], strings.TrimSpace(s[i:])
	units := map[string]float64{"B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15,
		"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50}
	mult, ok := units[unit]
	v, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || !(v > 0) {
		return 0, fmt.Errorf("size %q: expected a positive number and a unit (B, kB, MB, GB, TB, PB, KiB ... PiB)", text)
	}
	if v*mult > maxSizeBytes {
		return 0, fmt.Errorf("size %q is too large (at most %d B)", text, int64(maxSizeBytes))
	}
	return int64(v * mult), nil
}
