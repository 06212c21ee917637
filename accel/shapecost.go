package accel

import "github.com/kvcosim/kvcosim/sim"

// shapeCosts remembers the parts of an iteration's cost that its shape
// alone sets: the linear layers and all-reduces by its tokens, the LM head
// and (for kernels that read no context) the decoding kernels by its
// sequences. An executor prices millions of iterations of a few thousand
// shapes; what it remembers is what Cost computes, bit for bit. A nil
// *shapeCosts remembers nothing.
type shapeCosts struct {
	tokens    []tokenPart
	sequences []sequencePart
	node      nodeConstants
}

// maxShapeTokens bounds the tokens remembered: a larger iteration (a
// token budget past it) is priced afresh.
const maxShapeTokens = 1 << 16

// tokenPart is the cost of an iteration's tokens: the linear layers'
// FLOPs and time, the weights read, the all-reduces; known: priced.
type tokenPart struct {
	linearFLOPs, weightBytes float64
	linear, allReduce        sim.Time
	known                    bool
}

// sequencePart is the cost of an iteration's sequences: the LM head's
// FLOPs and time, and the kernels where contextFree (else they are priced
// per iteration).
type sequencePart struct {
	headFLOPs     float64
	head, kernels sim.Time
	contextFree   bool
	known         bool
}

// nodeConstants are the node's attention FLOPs per (query, context) pair
// over all layers and its KV bytes per token.
type nodeConstants struct {
	perPair, kvBytesPerToken float64
	known                    bool
}

// contextFree marks a KernelCost whose work ignores the mean context.
type contextFree interface{ contextFree() }

func (Sampling) contextFree()     {}
func (SortSampling) contextFree() {}

// newShapeCosts has room for iterations up to maxBatch sequences and
// tokenBudget tokens.
func newShapeCosts(maxBatch int, tokenBudget int64) *shapeCosts {
	return &shapeCosts{tokens: make([]tokenPart, min(tokenBudget, maxShapeTokens)+1), sequences: make([]sequencePart, maxBatch+1)}
}

// byTokens is the cost of tokens on n.
func (m *shapeCosts) byTokens(n *Node, tokens int64) tokenPart {
	if m == nil || tokens >= int64(len(m.tokens)) {
		return n.tokenPart(tokens)
	}
	if !m.tokens[tokens].known {
		m.tokens[tokens] = n.tokenPart(tokens)
	}
	return m.tokens[tokens]
}

// bySequences is the cost of seqs sequences on n.
func (m *shapeCosts) bySequences(n *Node, seqs int) sequencePart {
	if m == nil || seqs >= len(m.sequences) {
		return n.sequencePart(seqs)
	}
	if !m.sequences[seqs].known {
		m.sequences[seqs] = n.sequencePart(seqs)
	}
	return m.sequences[seqs]
}

// constants are n's, remembered.
func (m *shapeCosts) constants(n *Node) nodeConstants {
	if m == nil {
		return n.constants()
	}
	if !m.node.known {
		m.node = n.constants()
	}
	return m.node
}

// tokenPart prices tokens' linear layers, weights read and all-reduces.
func (n *Node) tokenPart(tokens int64) tokenPart {
	linear := 2 * n.Model.linearParamsPerToken() * float64(tokens)
	return tokenPart{linearFLOPs: linear, weightBytes: n.weightBytesRead(tokens),
		linear: n.timeAt(linear, n.Device.linearEfficiency(float64(tokens))), allReduce: n.allReduce(tokens), known: true}
}

// sequencePart prices seqs sequences' LM head and, when they read no
// context, their kernels.
func (n *Node) sequencePart(seqs int) sequencePart {
	head := 2 * float64(n.Model.Hidden) * float64(n.Model.Vocab) * float64(seqs)
	p := sequencePart{headFLOPs: head, head: n.timeAt(head, n.Device.linearEfficiency(float64(seqs))), known: true}
	if _, ok := n.Kernels.(contextFree); ok || n.Kernels == nil {
		p.kernels, p.contextFree = n.kernelTime(seqs, 0), true
	}
	return p
}

// constants prices what the node alone sets.
func (n *Node) constants() nodeConstants {
	return nodeConstants{perPair: n.Model.attentionFLOPsPerPair() * float64(n.Model.Layers),
		kvBytesPerToken: float64(n.Model.KVBytesPerToken(n.KVDType)), known: true}
}
