package accel

import (
	"fmt"
	"github.com/kvcosim/kvcosim/internal/names"

	"github.com/kvcosim/kvcosim/accel/kernels"
	"github.com/kvcosim/kvcosim/accel/tinylm"
	"github.com/kvcosim/kvcosim/sim"
)

// DecodeKind is how functional mode picks output tokens.
type DecodeKind int

// The decoding kinds.
const (
	// Greedy takes the largest logit (the lowest id among ties).
	Greedy DecodeKind = iota
	// Sample runs the fused TopK-TopP-Sample operator (V2) with q drawn
	// from the sequence's random stream.
	Sample
	// Beam is beam search as transformers runs it (BeamStep on the
	// log-probabilities), each beam on its own KV cache, reordered as
	// beams are chosen.
	Beam
)

// DecodeKinds names the values of DecodeKind: Names lists them, Parse reads one.
var DecodeKinds = names.New("decoding", map[DecodeKind]string{
	Greedy: "greedy",
	Sample: "sample",
	Beam:   "beam",
})

// String returns the kind's name.
func (k DecodeKind) String() string { return DecodeKinds.Name(k) }

// Decoding is functional mode's decoding: the kind, top-k and top-p for
// sampling, the beam count for beam search.
type Decoding struct {
	Kind  DecodeKind
	TopK  int
	TopP  float32
	Beams int
}

// beam is one live hypothesis: its KV cache (every token but its last
// output computed), its output tokens, its score, the logits its next
// token is chosen from, and the logits its last token was chosen from.
type beam struct {
	cache        *tinylm.Cache
	out          []uint32
	score        float32
	logits, from []float32
}

// Generation is one turn's functional work on a sequence: prefill chunks
// on the sequence's cache, then one output token per step, then the
// closing pass that computes the last output token's K and V, so that the
// cache covers every token of the history (what an export stores).
type Generation struct {
	m      *tinylm.Model
	d      Decoding
	q      *sim.Stream
	want   int
	beams  []beam
	params kernels.BeamParams
}

// NewGeneration starts a turn of outputs tokens on cache (which the
// generation owns from now on); q draws the sampling weights.
func NewGeneration(m *tinylm.Model, cache *tinylm.Cache, d Decoding, q *sim.Stream, outputs int) (*Generation, error) {
	if outputs < 1 {
		return nil, fmt.Errorf("generation: %d output tokens: at least 1", outputs)
	}
	g := &Generation{m: m, d: d, q: q, want: outputs, beams: []beam{{cache: cache}}}
	if d.Kind == Beam {
		vocab := m.Config().Vocab
		// EOS is masked at every step: a turn makes exactly its output count
		g.params = kernels.BeamParams{Vocab: vocab, NumBeams: d.Beams, LengthPenalty: 1, EOS: []int{vocab - 1},
			NumReturnSequences: 1, MaxLength: 1 << 30}
		if err := g.params.Validate(); err != nil {
			return nil, fmt.Errorf("generation: %w", err)
		}
	}
	return g, nil
}

// Prefill runs a chunk of prompt tokens; with last, the chunk's logits
// choose the first output token.
func (g *Generation) Prefill(tokens []uint32, last bool) error {
	logits, err := g.m.Prefill(g.beams[0].cache, tokens)
	if err != nil || !last {
		return err
	}
	g.beams[0].logits = logits
	return g.choose()
}

// Done reports whether every output token is chosen.
func (g *Generation) Done() bool { return len(g.beams[0].out) == g.want }

// Step runs every beam's last token and chooses the next tokens.
func (g *Generation) Step() error {
	if g.Done() {
		return fmt.Errorf("generation: step after the last of %d tokens", g.want)
	}
	for i := range g.beams {
		b := &g.beams[i]
		var err error
		if b.logits, err = g.m.Prefill(b.cache, b.out[len(b.out)-1:]); err != nil {
			return err
		}
	}
	return g.choose()
}

// Finish closes the turn: it runs the best beam's last output token and
// returns that beam's cache (covering the prompt and every output token),
// its output, and the logits its last token was chosen from.
func (g *Generation) Finish() (*tinylm.Cache, []uint32, []float32, error) {
	if !g.Done() {
		return nil, nil, nil, fmt.Errorf("generation: finish after %d of %d tokens", len(g.beams[0].out), g.want)
	}
	best := g.beams[0]
	if _, err := g.m.Prefill(best.cache, best.out[len(best.out)-1:]); err != nil {
		return nil, nil, nil, err
	}
	return best.cache, best.out, best.from, nil
}

// choose picks every beam's next token from its logits.
func (g *Generation) choose() error {
	switch g.d.Kind {
	case Beam:
		return g.chooseBeams()
	case Sample:
		return g.sample()
	}
	b := &g.beams[0]
	top := 0
	for i, x := range b.logits {
		if x > b.logits[top] {
			top = i
		}
	}
	b.out, b.from = append(b.out, uint32(top)), b.logits
	return nil
}

// sample runs TopKTopPSampleV2 on the logits with q from the stream.
func (g *Generation) sample() error {
	b := &g.beams[0]
	vocab := len(b.logits)
	q := make([]float32, vocab)
	for i := range q {
		q[i] = float32(g.q.ExpFloat64())
	}
	out, err := kernels.TopKTopPSampleV2(kernels.SampleInput{Batch: 1, Vocab: vocab, Logits: b.logits,
		TopK: []int32{int32(g.d.TopK)}, TopP: []float32{g.d.TopP}, Q: q, TopKGuess: min(vocab, 64), KsMax: vocab,
		InputIsLogits: true}, false)
	if err != nil {
		return fmt.Errorf("generation: sample: %w", err)
	}
	b.out, b.from = append(b.out, uint32(out.SelectIdx[0])), b.logits
	return nil
}

// chooseBeams is one beam-search step: the beams' log-probabilities and
// scores give sorted candidates, the best NumBeams become the new beams,
// and each takes its parent's cache (a copy when a parent has two
// children): the KV reorder.
func (g *Generation) chooseBeams() error {
	if len(g.beams) == 1 { // the prompt's logits seed every beam; only the first is live
		first := g.beams[0]
		g.beams = make([]beam, g.d.Beams)
		for i := range g.beams {
			g.beams[i] = beam{cache: first.cache, logits: first.logits, score: -1e9}
		}
		g.beams[0].score = 0
	}
	logProbs, scores := make([][]float32, len(g.beams)), make([]float32, len(g.beams))
	for i, b := range g.beams {
		logProbs[i], _ = kernels.LogSoftmax(b.logits, nil)
		scores[i] = b.score
	}
	cands, err := kernels.BeamStep(logProbs, scores, &g.params, true)
	if err != nil {
		return fmt.Errorf("generation: beam step: %w", err)
	}
	next := make([]beam, g.d.Beams)
	claimed := make([]bool, len(g.beams))
	for i, c := range cands[:g.d.Beams] {
		parent := g.beams[c.Beam]
		cache := parent.cache
		if claimed[c.Beam] || sharedBefore(g.beams, c.Beam) {
			cache = cache.Clone(cache.Len)
		}
		claimed[c.Beam] = true
		out := append(append([]uint32(nil), parent.out...), uint32(c.Token))
		next[i] = beam{cache: cache, out: out, score: c.Score, from: parent.logits}
	}
	g.beams = next
	return nil
}

// sharedBefore reports whether beam i's cache is also another beam's (the
// first step, when every beam holds the prompt's cache).
func sharedBefore(beams []beam, i int) bool {
	for j, b := range beams {
		if j != i && b.cache == beams[i].cache {
			return true
		}
	}
	return false
}
