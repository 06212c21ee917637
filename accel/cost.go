package accel

import (
	"fmt"

	"github.com/kvcosim/kvcosim/sim"
)

// Node is tp devices running one model with tensor parallelism.
type Node struct {
	Model        Model
	Device       Device
	TP           int
	WeightDType  DType
	KVDType      DType
	ReserveBytes int64 // per device: activations, workspace, fragmentation
	Kernels      KernelCost
	// Engine is the serving stack around the GPU's work (default CUDA
	// graphs).
	Engine Engine
}

// NewNode validates the node: the model's heads must split over tp and its
// weights fit the devices' memory (the error says by how much they do not).
func NewNode(m Model, d Device, tp int, weights, kv DType, reserveBytes int64, kernels KernelCost) (*Node, error) {
	if err := m.Validate(tp); err != nil {
		return nil, err
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if reserveBytes < 0 {
		return nil, fmt.Errorf("accelerator reserve %d B: must not be negative", reserveBytes)
	}
	n := &Node{Model: m, Device: d, TP: tp, WeightDType: weights, KVDType: kv, ReserveBytes: reserveBytes, Kernels: kernels,
		Engine: Engines[0]}
	if free := n.KVCapacityBytes(); free <= 0 {
		return nil, fmt.Errorf("model %q does not fit %d x %s: weights %.1f GB + reserve %.1f GB exceed %.1f GB of memory by %.1f GB",
			m.Name, tp, d.Name, float64(n.WeightBytes())/1e9, float64(reserveBytes*int64(tp))/1e9,
			float64(d.MemBytes*int64(tp))/1e9, float64(-free)/1e9)
	}
	return n, nil
}

// WeightBytes is the model's weights over all devices.
func (n *Node) WeightBytes() int64 { return n.Model.Params * n.WeightDType.Bytes() }

// KVCapacityBytes is the memory left for KV cache on all tp devices.
func (n *Node) KVCapacityBytes() int64 {
	return int64(n.TP)*(n.Device.MemBytes-n.ReserveBytes) - n.WeightBytes()
}

// Chunk is a prefill of New tokens on Cached tokens already in the cache.
type Chunk struct {
	New, Cached int64
	// Last marks the chunk that ends its prompt: it produces logits.
	Last bool
}

// Iteration is one forward pass of a continuous batch: prefill chunks and
// decode steps (each the context length before the step).
type Iteration struct {
	Prefills []Chunk
	Decodes  []int64
}

// Tokens is the number of tokens the iteration computes.
func (it Iteration) Tokens() int64 {
	t := int64(len(it.Decodes))
	for _, c := range it.Prefills {
		t += c.New
	}
	return t
}

// Sequences returns how many sequences produce logits (and so sample).
func (it Iteration) Sequences() int {
	n := len(it.Decodes)
	for _, c := range it.Prefills {
		if c.Last {
			n++
		}
	}
	return n
}

// Cost is an iteration's time and its parts: the linear layers, the
// attention and the LM head (compute), the weights and KV streamed
// (memory), the all-reduces, the decoding kernels, and the engine's
// overhead around the GPU's work.
type Cost struct {
	FLOPs, Bytes                                  float64
	Linear, Attention, Head                       sim.Time
	Compute, Memory, AllReduce, Overhead, Kernels sim.Time
	Total                                         sim.Time
}

// linearParamsPerToken is the weights every token is multiplied by.
func (m Model) linearParamsPerToken() float64 {
	if m.Attention == GQA && m.Experts == 0 {
		return float64(m.Layers) * m.linearParamsPerLayer()
	}
	return float64(m.ActiveParams) - 2*float64(m.Hidden)*float64(m.Vocab)
}

// weightBytesRead is the weights an iteration of tokens reads: all of a
// dense model; of a mixture of experts, the active part plus the share of
// experts the tokens select.
func (n *Node) weightBytesRead(tokens int64) float64 {
	m := n.Model
	w := float64(n.WeightDType.Bytes())
	if m.Experts == 0 {
		return float64(m.Params) * w
	}
	share := min(1, float64(tokens)*float64(m.ExpertsPerToken)/float64(m.Experts))
	return (float64(m.ActiveParams) + float64(m.Params-m.ActiveParams)*share) * w
}

// work is an iteration's arithmetic by kind and its memory traffic. The
// attention pairs (query token, context token) are split: among the new
// tokens (causal), against the cached context of a prefill chunk, and a
// decode's against its context.
type work struct {
	linear, head                        float64 // FLOPs
	causalPairs, cachedPairs, decodeOps float64 // attention
	bytes                               float64
}

func (n *Node) work(it Iteration) work {
	tokens := it.Tokens()
	return n.workOf(it, tokens, n.tokenPart(tokens), n.sequencePart(it.Sequences()), n.constants())
}

// workOf is work with the parts that the iteration's tokens, its
// sequences and the node alone set already priced.
func (n *Node) workOf(it Iteration, tokens int64, byTokens tokenPart, bySequences sequencePart, k nodeConstants) work {
	var w work
	kvRead := 0.0
	for _, c := range it.Prefills {
		w.causalPairs += float64(c.New) * float64(c.New+1) / 2
		w.cachedPairs += float64(c.New) * float64(c.Cached)
		kvRead += float64(c.Cached)
	}
	decodePairs := 0.0
	for _, ctx := range it.Decodes {
		decodePairs += float64(ctx + 1)
		kvRead += float64(ctx)
	}
	w.linear, w.head = byTokens.linearFLOPs, bySequences.headFLOPs
	w.causalPairs, w.cachedPairs, w.decodeOps = w.causalPairs*k.perPair, w.cachedPairs*k.perPair, decodePairs*k.perPair
	w.bytes = byTokens.weightBytes + k.kvBytesPerToken*(kvRead+float64(tokens))
	return w
}

// Work is the arithmetic and memory traffic of an iteration on the node.
func (n *Node) Work(it Iteration) (flops, bytes float64) {
	w := n.work(it)
	return w.linear + w.head + w.causalPairs + w.cachedPairs + w.decodeOps, w.bytes
}

// peak is the device's dense peak for the weights' type.
func (n *Node) peak() float64 {
	if n.WeightDType == FP8 {
		return 2 * n.Device.PeakFLOPS
	}
	return n.Device.PeakFLOPS
}

// Cost prices an iteration on each of the tp devices. Compute is the
// linear layers at the efficiency their tokens reach (a small-M GEMM runs
// far below peak), the attention among new tokens and against a cached
// context at their own efficiencies, and the LM head at the efficiency of
// its sequences; memory is the weights and KV streamed (a decode's
// attention is its KV read). The GPU's time is the larger of the two,
// plus the tensor-parallel all-reduces and the decoding kernels; the
// engine adds its overhead around it. The cost is O(1) in the batch
// beyond the one pass over its members.
func (n *Node) Cost(it Iteration) Cost { return n.costOf(it, it.Tokens(), nil) }

// costOf is Cost with the iteration's tokens counted and the parts its
// shape alone sets taken from memo (nil: priced afresh).
func (n *Node) costOf(it Iteration, tokens int64, memo *shapeCosts) Cost {
	d := &n.Device
	seqs := it.Sequences()
	byTokens, bySequences := memo.byTokens(n, tokens), memo.bySequences(n, seqs)
	w := n.workOf(it, tokens, byTokens, bySequences, memo.constants(n))
	kernels := bySequences.kernels
	if !bySequences.contextFree {
		kernels = n.kernelTime(seqs, meanContext(it))
	}
	c := Cost{FLOPs: w.linear + w.head + w.causalPairs + w.cachedPairs + w.decodeOps, Bytes: w.bytes,
		Linear:    byTokens.linear,
		Attention: sim.SumTime(n.timeAt(w.causalPairs, d.AttentionEfficiency), n.timeAt(w.cachedPairs+w.decodeOps, d.CachedAttentionEfficiency)),
		Head:      bySequences.head,
		Memory:    sim.TimeOf(w.bytes / float64(n.TP) / (float64(d.MemBandwidth) * d.MemoryEfficiency) * 1e12),
		AllReduce: byTokens.allReduce, Kernels: kernels}
	c.Compute = sim.SumTime(c.Linear, c.Attention, c.Head) // each at most MaxTime: a plain sum could wrap round
	gpu := sim.SumTime(max(c.Compute, c.Memory), c.AllReduce, c.Kernels)
	c.Total = n.Engine.around(gpu, n.Model.Layers, len(it.Decodes)+len(it.Prefills), len(it.Prefills))
	c.Overhead = c.Total - gpu
	return c
}

// timeAt is the time flops take on each of the tp devices at eff of the
// peak.
func (n *Node) timeAt(flops, eff float64) sim.Time {
	if flops == 0 { // no work (an LM head with no sequence to sample: eff is 0 too)
		return 0
	}
	return sim.TimeOf(flops / float64(n.TP) / (n.peak() * eff) * 1e12)
}

// kernelTime is the decoding kernels' time for seqs sequences of a mean
// context (none without kernels or sequences).
func (n *Node) kernelTime(seqs int, meanContext int64) sim.Time {
	if n.Kernels == nil || seqs == 0 {
		return 0
	}
	return n.Device.KernelTime(n.Kernels.DecodeStep(seqs, n.Model.Vocab, meanContext))
}

// linearEfficiency is the share of the peak the linear layers reach with
// tokens rows: LinearEfficiency x tokens / (tokens + LinearHalfTokens).
func (d Device) linearEfficiency(tokens float64) float64 {
	return d.LinearEfficiency * tokens / (tokens + d.LinearHalfTokens)
}

// allReduce is the ring all-reduces of the tokens' activations, two a
// layer (one for a parallel attention block): 2(tp-1) hop latencies and
// 2(tp-1)/tp of the data each, the bytes past AllReduceLargeBytes at the
// large messages' efficiency.
func (n *Node) allReduce(tokens int64) sim.Time {
	if n.TP == 1 {
		return 0
	}
	d := n.Device
	tp := float64(n.TP)
	data := float64(tokens) * float64(n.Model.Hidden) * 2 // bf16 activations
	fullRateBytes := data / d.AllReduceEfficiency         // what the link would move at its full rate in the same time
	if d.AllReduceLargeBytes > 0 && data > d.AllReduceLargeBytes {
		fullRateBytes = d.AllReduceLargeBytes/d.AllReduceEfficiency + (data-d.AllReduceLargeBytes)/d.AllReduceLargeEfficiency
	}
	per := 2*(tp-1)*float64(d.NVLinkHopLatency) + 2*(tp-1)/tp*fullRateBytes/float64(d.NVLinkBandwidth)*1e12
	return sim.TimeOf(float64(n.Model.allReducesPerLayer()*n.Model.Layers) * per)
}

// meanContext is the mean context of the iteration's decodes.
func meanContext(it Iteration) int64 {
	if len(it.Decodes) == 0 {
		return 0
	}
	sum := int64(0)
	for _, c := range it.Decodes {
		sum += c
	}
	return sum / int64(len(it.Decodes))
}
