package kernels

import (
	"fmt"
	"math"
	"slices"
)

// EarlyStopping is BeamSearchScorer's early_stopping: true, false or never.
type EarlyStopping int

// The three settings.
const (
	StopFalse EarlyStopping = iota
	StopTrue
	StopNever
)

// BeamParams are a beam search's settings, as transformers names them.
type BeamParams struct {
	Vocab, NumBeams    int
	LengthPenalty      float64
	EarlyStopping      EarlyStopping
	MaxLength          int // prompt + max new tokens
	MinNewTokens       int
	EOS                []int
	Pad                int
	NumReturnSequences int
}

// Validate checks the settings; errors name the argument.
func (p BeamParams) Validate() error {
	switch {
	case p.NumBeams < 1:
		return fmt.Errorf("num_beams = %d: must be at least 1", p.NumBeams)
	case p.Vocab < 2*p.NumBeams:
		return fmt.Errorf("vocab = %d: must be at least 2 x num_beams = %d (the candidates rule)", p.Vocab, 2*p.NumBeams)
	case p.NumReturnSequences < 1 || p.NumReturnSequences > p.NumBeams:
		return fmt.Errorf("num_return_sequences = %d: must be in [1, num_beams = %d]", p.NumReturnSequences, p.NumBeams)
	case len(p.EOS) == 0:
		return fmt.Errorf("eos_token_id: at least one is needed")
	case p.MinNewTokens < 0:
		return fmt.Errorf("min_new_tokens = %d: must not be negative", p.MinNewTokens)
	}
	for _, e := range append(slices.Clone(p.EOS), p.Pad) {
		if e < 0 || e >= p.Vocab {
			return fmt.Errorf("eos/pad token %d: outside the vocab of %d", e, p.Vocab)
		}
	}
	return nil
}

// hypothesis is a finished (or finalised) beam: its tokens, its score and
// the global rows its steps came from.
type hypothesis struct {
	score   float64
	tokens  []int
	indices []int
}

// hypotheses is transformers' BeamHypotheses for one request.
type hypotheses struct {
	p     *BeamParams
	beams []hypothesis
	worst float64
}

// add keeps a hypothesis if fewer than num_beams are kept or it beats the
// worst (strictly); the worst goes, the earlier one among equals.
func (h *hypotheses) add(tokens []int, sumLogprobs float64, indices []int, generatedLen int) {
	score := sumLogprobs / math.Pow(float64(generatedLen), h.p.LengthPenalty)
	if len(h.beams) >= h.p.NumBeams && score <= h.worst {
		return
	}
	h.beams = append(h.beams, hypothesis{score, tokens, indices})
	if len(h.beams) <= h.p.NumBeams {
		h.worst = min(score, h.worst)
		return
	}
	order := make([]int, len(h.beams))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { // by (score, index)
		return cmpFloat(h.beams[a].score, h.beams[b].score)
	})
	h.beams = slices.Delete(h.beams, order[0], order[0]+1)
	h.worst = h.beams[indexAfterDelete(order[1], order[0])].score
}

func indexAfterDelete(i, deleted int) int {
	if i > deleted {
		return i - 1
	}
	return i
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// isDone is BeamHypotheses.is_done for the best candidate score at cur_len
// (the length with the candidate's token).
func (h *hypotheses) isDone(best float64, curLen, promptLen int) bool {
	if len(h.beams) < h.p.NumBeams {
		return false
	}
	switch h.p.EarlyStopping {
	case StopTrue:
		return true
	case StopNever:
		if h.p.LengthPenalty > 0 {
			return h.worst >= best/math.Pow(float64(h.p.MaxLength-promptLen), h.p.LengthPenalty)
		}
	}
	return h.worst >= best/math.Pow(float64(curLen-promptLen), h.p.LengthPenalty)
}

// Candidate is one of a step's top candidates: a token, the local beam it
// extends and the cumulative score.
type Candidate struct {
	Token, Beam int
	Score       float32
}
