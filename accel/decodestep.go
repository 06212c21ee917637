package accel

import "github.com/kvcosim/kvcosim/sim"

// decodeSteps prices the steps of a decode run (Executor.RunDecodes): the
// same sequences step after step, each context a token longer. What the
// batch's shape sets is looked up once; each step then costs what Cost's
// Total would, by the same arithmetic in the same order (no prefill: the
// causal and cached pairs are zero, and adding zero changes no bit), so a
// run's times are the step-by-step run's (TestDecodeStepsPriceAsCost).
type decodeSteps struct {
	n                     *Node
	byTokens              tokenPart
	bySequences           sequencePart
	k                     nodeConstants
	tokens                int64
	attentionRate, memory float64 // the divisors of timeAt and of the memory time
}

// newDecodeSteps looks up the shape of decode steps of seqs sequences.
func newDecodeSteps(n *Node, memo *shapeCosts, seqs int) decodeSteps {
	d := &n.Device
	tokens := int64(seqs)
	return decodeSteps{n: n, byTokens: memo.byTokens(n, tokens), bySequences: memo.bySequences(n, seqs), k: memo.constants(n), tokens: tokens,
		attentionRate: n.peak() * d.CachedAttentionEfficiency, memory: float64(d.MemBandwidth) * d.MemoryEfficiency}
}

// total is the time of the decode step of the given contexts.
func (p *decodeSteps) total(contexts []int64) sim.Time {
	n := p.n
	decodePairs, kvRead := 0.0, 0.0
	for _, ctx := range contexts {
		decodePairs += float64(ctx + 1)
		kvRead += float64(ctx)
	}
	decodeOps := decodePairs * p.k.perPair
	bytes := p.byTokens.weightBytes + p.k.kvBytesPerToken*(kvRead+float64(p.tokens))
	var attention sim.Time
	if decodeOps != 0 {
		attention = sim.TimeOf(decodeOps / float64(n.TP) / p.attentionRate * 1e12)
	}
	memory := sim.TimeOf(bytes / float64(n.TP) / p.memory * 1e12)
	kernels := p.bySequences.kernels
	if !p.bySequences.contextFree {
		kernels = n.kernelTime(len(contexts), meanContext(Iteration{Decodes: contexts}))
	}
	compute := sim.SumTime(p.byTokens.linear, attention, p.bySequences.head)
	gpu := sim.SumTime(max(compute, memory), p.byTokens.allReduce, kernels)
	return n.Engine.around(gpu, n.Model.Layers, len(contexts), 0)
}
