package accel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/accel/kernels"
	"github.com/kvcosim/kvcosim/sim"
)

// toy is a model small enough to count by hand: 1 layer, hidden 4, 2 heads
// of 2, 1 KV head, MLP 8, vocab 10.
var toy = Model{Name: "toy", Layers: 1, Hidden: 4, Heads: 2, KVHeads: 1, HeadDim: 2, Intermediate: 8, Vocab: 10,
	Params: 200, ActiveParams: 200, Attention: GQA}

// toyDevice does 1e12 FLOP/s and 1e12 B/s at full efficiency.
var toyDevice = Device{Name: "toy", PeakFLOPS: 1e12, MemBandwidth: 1_000_000_000_000, MemBytes: 1 << 30,
	NVLinkBandwidth: 1_000_000_000, LinearEfficiency: 0.5, AttentionEfficiency: 0.5, CachedAttentionEfficiency: 0.5, MemoryEfficiency: 0.5, AllReduceEfficiency: 1}

func toyNode(t *testing.T, tp int) *Node {
	m := toy
	m.Heads, m.KVHeads = 2, 2
	n, err := NewNode(m, toyDevice, tp, BF16, BF16, 0, nil)
	require.NoError(t, err)
	n.Engine = Engine{Name: "toy", IterationOverhead: 7}
	return n
}

func TestWorkByHand(t *testing.T) {
	n := toyNode(t, 1)
	// linear per layer: 2*4*4 + 2*4*4 + 3*4*8 = 160 (2 KV heads of 2 = 4)
	// prefill of 3 new on 2 cached: tokens 3, pairs 3*2 + 3*4/2 = 12,
	// attention per pair 4*2*2 = 16, logits 2*4*10 for the one sequence
	flops, bytes := n.Work(Iteration{Prefills: []Chunk{{New: 3, Cached: 2, Last: true}}})
	assert.Equal(t, 2*160*3+16*12+2*4*10.0, flops)
	// weights 200 x 2 B, KV per token 1 x (4+4) x 2 = 16 B, read 2 + write 3
	assert.Equal(t, 400+16*5.0, bytes)
	// two decodes at contexts 5 and 9: pairs 6 + 10, KV read 14, written 2
	flops, bytes = n.Work(Iteration{Decodes: []int64{5, 9}})
	assert.Equal(t, 2*160*2+16*16+2*2*4*10.0, flops)
	assert.Equal(t, 400+16*16.0, bytes)
}

func TestCostIsRooflinePlusOverheads(t *testing.T) {
	n := toyNode(t, 1)
	it := Iteration{Decodes: []int64{5, 9}}
	flops, bytes := n.Work(it)
	c := n.Cost(it)
	// decode runs at half efficiency: 1e12 * 0.5 per second = 0.5 per ps
	assert.Equal(t, sim.TimeOf(flops/0.5), c.Compute)
	assert.Equal(t, sim.TimeOf(bytes/0.5), c.Memory)
	assert.Equal(t, sim.Time(7), c.Overhead)
	assert.Equal(t, max(c.Compute, c.Memory)+7, c.Total)
	assert.Zero(t, c.AllReduce)
}

// A chunk that does not end its prompt makes no logits, so its iteration
// has no LM head to price; it used to be priced at 0 FLOPs over 0
// efficiency, a NaN time that wrapped to the most negative one and took the
// linear layers out of the iteration (a long prompt's chunks cost only
// their memory traffic).
func TestEveryPartOfACostIsWhole(t *testing.T) {
	for _, preset := range []string{"llama-3-8b", "llama-3-70b", "llama-65b"} {
		m, err := ModelPreset(preset)
		require.NoError(t, err)
		n, err := NewNode(m, devicePresets["h100-sxm"], 4, BF16, BF16, 0, SortSampling{})
		require.NoError(t, err)
		for _, it := range []Iteration{
			{},
			{Prefills: []Chunk{{New: 8192}}},
			{Prefills: []Chunk{{New: 8192, Cached: 8192}}},
			{Prefills: []Chunk{{New: 100, Last: true}, {New: 4000}}},
			{Prefills: []Chunk{{New: 4000}}, Decodes: []int64{10, 5000}},
			{Decodes: []int64{1}},
		} {
			c := n.Cost(it)
			for name, v := range map[string]sim.Time{"linear": c.Linear, "attention": c.Attention, "head": c.Head, "compute": c.Compute,
				"memory": c.Memory, "all-reduce": c.AllReduce, "overhead": c.Overhead, "kernels": c.Kernels} {
				assert.GreaterOrEqual(t, v, sim.Time(0), "%s %+v: %s", preset, it, name)
			}
			assert.GreaterOrEqual(t, c.Total, max(c.Compute, c.Memory)+c.AllReduce, "%s %+v", preset, it)
		}
		whole := n.Cost(Iteration{Prefills: []Chunk{{New: 8192, Last: true}}})
		part := n.Cost(Iteration{Prefills: []Chunk{{New: 8192}}})
		assert.Equal(t, whole.Linear, part.Linear, "%s: the same linear layers", preset)
		assert.Greater(t, part.Total, whole.Total*9/10, "%s: a chunk without logits costs nearly what the last one does", preset)
	}
}

func TestAllReduceRing(t *testing.T) {
	n := toyNode(t, 2)
	n.Device.NVLinkHopLatency = 100
	c := n.Cost(Iteration{Decodes: []int64{1, 1, 1}})
	// 2 all-reduces per layer, each 2(tp-1) = 2 hops of 100 ps and
	// 2(tp-1)/tp = 1 x 3 tokens x 4 hidden x 2 B = 24 B at 1 GB/s = 24 ns
	assert.Equal(t, sim.Time(2*(2*100+24_000)), c.AllReduce)
	one := toyNode(t, 1).Cost(Iteration{Decodes: []int64{1, 1, 1}})
	assert.InDelta(t, float64(one.Compute)/2, float64(c.Compute), 1, "compute splits over the devices")
}

// TestAParallelBlockAllReducesOnceALayer: a model whose attention and MLP
// run in parallel (Falcon's parallel_attn) sums their partial outputs
// before one all-reduce a layer, as vLLM's FalconDecoderLayer does;
// the others reduce each half on its own.
func TestAParallelBlockAllReducesOnceALayer(t *testing.T) {
	sequential := toyNode(t, 2)
	sequential.Device.NVLinkHopLatency = 100
	parallel := *sequential
	parallel.Model.ParallelAttention = true
	decodes := Iteration{Decodes: []int64{1, 1, 1}}
	// as TestAllReduceRing: 2 hops of 100 ps and 24 B at 1 GB/s each
	assert.Equal(t, sim.Time(2*100+24_000), parallel.Cost(decodes).AllReduce)
	assert.Equal(t, 2*parallel.Cost(decodes).AllReduce, sequential.Cost(decodes).AllReduce)

	for _, c := range []struct {
		preset string
		want   int
	}{{"falcon-40b", 1}, {"llama-2-70b", 2}, {"llama-65b", 2}, {"llama-2-13b", 2}, {"bloom-176b", 2}} {
		m, err := ModelPreset(c.preset)
		require.NoError(t, err)
		assert.Equal(t, c.want, m.allReducesPerLayer(), "%s: all-reduces a layer (config.json's parallel_attn)", c.preset)
	}
}

func TestAllReduceBytesPastTheThresholdReachTheLargeEfficiency(t *testing.T) {
	n := toyNode(t, 2)
	n.Device.NVLinkHopLatency = 0                   // the data's time alone
	decodes := Iteration{Decodes: []int64{1, 1, 1}} // 24 B messages
	small := n.Cost(decodes).AllReduce
	n.Device.AllReduceLargeEfficiency = 0.5
	for _, c := range []struct {
		threshold float64
		want      sim.Time
		why       string
	}{
		{0, small, "0: one efficiency for every size"},
		{24, small, "24 B is not above 24 B"},
		{23, small * 25 / 24, "the one byte past 23 B at half the efficiency: no step at the threshold"},
		{12, small * 3 / 2, "12 B at full efficiency and 12 B at half"},
	} {
		n.Device.AllReduceLargeBytes = c.threshold
		assert.Equal(t, c.want, n.Cost(decodes).AllReduce, c.why)
	}
}

func TestPrefillLaunchesApplyToMixedIterations(t *testing.T) {
	n := toyNode(t, 1)
	n.Engine = Engine{Name: "toy", LayerLaunch: 10, PrefillLayerLaunch: 1000, Overlap: 1} // launches add to the GPU's work
	mixed := n.Cost(Iteration{Prefills: []Chunk{{New: 1}}, Decodes: []int64{3}})
	assert.Equal(t, sim.Time(1000), mixed.Overhead, "any prompt token makes it a prefill iteration: one layer's prefill launches")
	decode := n.Cost(Iteration{Decodes: []int64{3}})
	assert.Equal(t, sim.Time(10), decode.Overhead)
}

func TestEngineOverlapTakesTheLargerOfLaunchesAndWork(t *testing.T) {
	e := Engine{LayerLaunch: 100, Overlap: 1000}
	assert.InDelta(t, 5000, float64(e.around(5000, 10, 1, 0)), 1, "launches (1,000) hide behind the GPU's work")
	assert.InDelta(t, 1000, float64(e.around(10, 10, 1, 0)), 1, "the GPU waits for the launches")
	e.Overlap = 1
	assert.Equal(t, sim.Time(6000), e.around(5000, 10, 1, 0), "no overlap: they add")
	e.SequenceOverhead, e.IterationOverhead = 7, 3
	assert.Equal(t, sim.Time(6000+3+4*7), e.around(5000, 10, 4, 0))
	e.PromptOverhead = 100
	assert.Equal(t, sim.Time(6000+3+4*7), e.around(5000, 10, 4, 1), "one prompt pays no prompt overhead")
	assert.Equal(t, sim.Time(6000+3+4*7+2*100), e.around(5000, 10, 4, 3), "each prompt after the first pays it")
}

// TestEngineWithoutLaunchesKeepsTheGPUsTime: with no launches an
// iteration is the GPU's time as it is, which is what it was as a float64
// rounded back (exact below 2^53 ps, rounded above), plus the overheads.
func TestEngineWithoutLaunchesKeepsTheGPUsTime(t *testing.T) {
	e := Engine{IterationOverhead: 3, SequenceOverhead: 5}
	r := sim.NewStreams(1).Stream("gpu")
	for i := range 1000 {
		gpu := sim.Time(r.Int64N(1 << 40))
		if i%10 == 0 {
			gpu = sim.Time(1<<53 + r.Int64N(1<<60))
		}
		assert.Equal(t, sim.SumTime(sim.TimeOf(float64(gpu)), 3, 2*5), e.around(gpu, 80, 2, 0), "%d ps", gpu)
	}
}

func TestKernelHookChargesSequences(t *testing.T) {
	n := toyNode(t, 1)
	n.Device.SMs, n.Device.KernelLaunch = 4, 100
	n.Kernels = DefaultSampling()
	c := n.Cost(Iteration{Decodes: []int64{1, 2}, Prefills: []Chunk{{New: 4}, {New: 4, Last: true}}})
	want := n.Device.KernelTime(DefaultSampling().DecodeStep(3, 10, 1))
	assert.Equal(t, want, c.Kernels, "two decodes and one finished prompt sample")
	// memory at half efficiency, plus one launch
	w := kernels.Work{Bytes: 1e6, Launches: 1}
	assert.Equal(t, sim.TimeOf(1e6/0.5)+100, n.Device.KernelTime(w))
	// a serial floor at one SM's share of the bandwidth: 1e12 / 4 B/s
	w = kernels.Work{SerialBytes: 1e3}
	assert.Equal(t, sim.TimeOf(4e3), n.Device.KernelTime(w))
	// a kernel attaining a quarter of the streaming bandwidth
	w = kernels.Work{Bytes: 1e6, BandwidthFraction: 0.25}
	assert.Equal(t, sim.TimeOf(1e6/0.5/0.25), n.Device.KernelTime(w))
}

func TestBeamKernelChargesTheReorder(t *testing.T) {
	b := BeamSearch{Beams: 4, Layers: 32, KVWidth: 1024, KVDType: BF16}
	short, long := b.DecodeStep(8, 128256, 100), b.DecodeStep(8, 128256, 1100)
	assert.Equal(t, 2*kernels.ReorderBytes(8, 4, 1000, 32, 1024, 2), long.Bytes-short.Bytes,
		"1,000 more steps of K and V copied (read and written) per layer and beam")
	assert.Equal(t, 32*8*4*1000*1024*2*2.0, kernels.ReorderBytes(8, 4, 1000, 32, 1024, 2),
		"layers x batch x beams x step x hidden x 2 x bytes per element")
	m, _ := ModelPreset("llama-3-8b")
	assert.Equal(t, b, NewBeamSearch(m, 4, BF16), "8 KV heads x 128")
	n := toyNode(t, 1)
	n.Kernels = b
	c := n.Cost(Iteration{Decodes: []int64{1000, 1000}})
	assert.Equal(t, n.Device.KernelTime(b.DecodeStep(2, n.Model.Vocab, 1000)), c.Kernels, "the reorder reaches the device memory time")
	assert.Greater(t, c.Kernels, n.Device.KernelTime(b.DecodeStep(2, n.Model.Vocab, 10)))
}

// TestDecodingKernelsByName: each row of DecodingKernels makes its own
// cost from the settings, and an unknown name lists the kernels.
func TestDecodingKernelsByName(t *testing.T) {
	m, _ := ModelPreset("llama-3-8b")
	d := DecodingSettings{TopK: 40, TopP: true, Beams: 4}
	for name, want := range map[string]KernelCost{"sample": Sampling{TopK: 40, TopP: true}, "beam": NewBeamSearch(m, 4, FP8)} {
		k, err := ParseDecodingKernel(name)
		require.NoError(t, err)
		assert.Equal(t, want, k.Cost(d, m, FP8), name)
	}
	_, err := ParseDecodingKernel("greedy")
	assert.EqualError(t, err, `"greedy" is not allowed (allowed: sample, beam)`)
}

func TestNodeRejects(t *testing.T) {
	m, _ := ModelPreset("llama-2-70b")
	d, _ := DevicePreset("a100-80gb")
	_, err := NewNode(m, d, 1, BF16, BF16, 0, nil)
	assert.ErrorContains(t, err, "does not fit 1 x a100-80gb: weights 138.0 GB")
	assert.ErrorContains(t, err, "by 58.0 GB")
	bad := d
	bad.LinearEfficiency = 0
	_, err = NewNode(m, bad, 2, BF16, BF16, 0, nil)
	assert.ErrorContains(t, err, "linear_efficiency = 0")
	bad.LinearEfficiency = -0.5
	_, err = NewNode(m, bad, 2, BF16, BF16, 0, nil)
	assert.ErrorContains(t, err, "must be in [0.001, 1]")
	_, err = DevicePreset("tpu-v5")
	assert.ErrorContains(t, err, "valid accelerators are a100-80gb, a40, a800, h100-sxm, h200, h800")
	_, err = NewNode(m, d, 3, BF16, BF16, 0, nil)
	assert.ErrorContains(t, err, "tp = 3")
}

func TestKVMemory(t *testing.T) {
	m, err := NewKVMemory(10*16*100, 100, 16) // 10 blocks of 16 tokens
	require.NoError(t, err)
	require.NoError(t, m.Reserve(1, 20)) // 2 blocks
	require.NoError(t, m.Reserve(1, 32)) // still 2
	assert.Equal(t, int64(8), m.Free())
	require.NoError(t, m.Reserve(2, 100)) // 7 blocks
	assert.Error(t, m.Reserve(3, 17), "needs 2, 1 free")
	assert.Equal(t, int64(1), m.Free(), "a failed reservation changes nothing")
	assert.InDelta(t, 0.9, m.Occupancy(), 1e-12)
	assert.Equal(t, int64(2), m.Release(1))
	assert.False(t, m.Holds(1))
	_, err = NewKVMemory(100, 100, 16)
	assert.ErrorContains(t, err, "holds no block")
	_, err = NewKVMemory(1<<30, 100, 0)
	assert.ErrorContains(t, err, "block_tokens = 0")
}

type doneAt struct {
	eng *sim.Engine
	at  []sim.Time
}

func (d *doneAt) Handle(sim.Event) { d.at = append(d.at, d.eng.Now()) }

func TestExecutor(t *testing.T) {
	eng := sim.NewEngine(0)
	x, err := NewExecutor(eng, "gpu0", toyNode(t, 1), 4, 100)
	require.NoError(t, err)
	d := &doneAt{eng: eng}
	c := x.Run(Iteration{Decodes: []int64{1, 2}}, sim.Event{Handler: d})
	assert.True(t, x.Busy())
	assert.Panics(t, func() { x.Run(Iteration{Decodes: []int64{1}}, sim.Event{}) }, "one iteration at a time")
	eng.Run()
	assert.Equal(t, []sim.Time{c.Total}, d.at)
	assert.Panics(t, func() { x.Run(Iteration{Decodes: make([]int64, 5)}, sim.Event{}) }, "batch limit")
	assert.Panics(t, func() { x.Run(Iteration{Prefills: []Chunk{{New: 101}}}, sim.Event{}) }, "token budget")
	assert.Equal(t, 1.0, x.Utilisation(eng.Now()))
	_, err = NewExecutor(eng, "gpu1", toyNode(t, 1), 0, 100)
	assert.ErrorContains(t, err, "max_batch = 0")
}

// BenchmarkCost prices a 64-sequence decode iteration of Llama-3-70B on
// 4 H100s; it reports cost evaluations per wall second.
func BenchmarkCost(b *testing.B) {
	m, _ := ModelPreset("llama-3-70b")
	d, _ := DevicePreset("h100-sxm")
	n, err := NewNode(m, d, 4, BF16, BF16, 0, DefaultSampling())
	if err != nil {
		b.Fatal(err)
	}
	it := Iteration{Prefills: []Chunk{{New: 512, Cached: 1024, Last: true}}}
	for i := range 64 {
		it.Decodes = append(it.Decodes, int64(1000+i*37))
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = n.Cost(it)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "evals/s")
}

// The slowest device a file may describe (1 TFLOPS at the least efficiency)
// on the longest prefill passes MaxTime: the step's cost stops there, and
// the engine refuses it as an overflow, where its parts' sum wrapped round
// to a negative time and the step got faster.
func TestACostPastMaxTimeStopsThere(t *testing.T) {
	m, _ := ModelPreset("llama-2-70b")
	d, _ := DevicePreset("h100-sxm")
	d.PeakFLOPS, d.LinearEfficiency, d.AttentionEfficiency, d.CachedAttentionEfficiency = 1e12, MinEfficiency, MinEfficiency, MinEfficiency
	n, err := NewNode(m, d, 4, BF16, BF16, 0, nil)
	require.NoError(t, err)
	c := n.Cost(Iteration{Prefills: []Chunk{{New: 1 << 24}}})
	assert.Equal(t, sim.MaxTime, c.Compute)
	assert.Equal(t, sim.MaxTime, c.Total)
}

// INV-40's check: held blocks add up to those not free, and at the end
// only retained sequences hold any.
func TestKVMemoryAudit(t *testing.T) {
	m, err := NewKVMemory(10*16*100, 100, 16)
	require.NoError(t, err)
	require.NoError(t, m.Reserve(1, 20))
	require.NoError(t, m.Reserve(2, 40))
	all := func(int64) bool { return true }
	require.NoError(t, m.Audit(all))
	assert.ErrorContains(t, m.Audit(func(seq int64) bool { return seq == 1 }), "sequence 2 holds 3 blocks and is not retained")
	m.free++ // a block freed twice
	assert.ErrorContains(t, m.Audit(all), "5 blocks held, 6 free of 10")
}
