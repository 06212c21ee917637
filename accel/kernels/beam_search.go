package kernels

import (
	"fmt"
	"slices"
)

// Model gives the next-token logits after a token prefix (prompt and
// generated tokens).
type Model func(tokens []int) []float32

// BeamResult is what transformers' beam_search returns, and how it ended.
type BeamResult struct {
	Sequences   [][]int
	Scores      []float32
	BeamIndices [][]int
	Steps       int
	FinalLen    int
	StoppedBy   string // "all_done" or "max_length"
	Done        []bool
}

// beamState is a batch's live beams: global rows batch x num_beams.
type beamState struct {
	p         BeamParams
	promptLen int
	curLen    int
	rows      [][]int
	scores    []float32
	indices   [][]int
	done      []bool
	hyps      []hypotheses
}

// BeamSearch runs a whole generation with the semantics of transformers
// 4.38.2 for equal-length prompts. Requests that are done drop out of the
// batch (as neural-speed's C++ implementation does) without changing any
// result: transformers only pads them.
func BeamSearch(p BeamParams, prompts [][]int, model Model) (BeamResult, error) {
	if err := p.Validate(); err != nil {
		return BeamResult{}, err
	}
	if len(prompts) == 0 || len(prompts[0]) == 0 {
		return BeamResult{}, fmt.Errorf("prompts: at least one non-empty prompt is needed")
	}
	s := &beamState{p: p, promptLen: len(prompts[0]), curLen: len(prompts[0])}
	for b, prompt := range prompts {
		if len(prompt) != s.promptLen {
			return BeamResult{}, fmt.Errorf("prompts[%d]: %d tokens, want %d (equal lengths, no attention mask)", b, len(prompt), s.promptLen)
		}
		s.hyps = append(s.hyps, hypotheses{p: &s.p, worst: 1e9})
		s.done = append(s.done, false)
		for j := range p.NumBeams {
			s.rows = append(s.rows, slices.Clone(prompt))
			s.indices = append(s.indices, nil)
			s.scores = append(s.scores, map[bool]float32{true: 0, false: -1e9}[j == 0])
		}
	}
	stopped := "max_length"
	for s.curLen < p.MaxLength {
		if err := s.step(model); err != nil {
			return BeamResult{}, err
		}
		if !slices.Contains(s.done, false) {
			stopped = "all_done"
			break
		}
	}
	return s.finalize(stopped), nil
}

// step runs one decoding step for every request not done.
func (s *beamState) step(model Model) error {
	nb := s.p.NumBeams
	cur := s.curLen + 1 // the length the candidates' scores are for
	newRows := slices.Clone(s.rows)
	newScores := slices.Clone(s.scores)
	newIndices := slices.Clone(s.indices)
	for b := range s.done {
		if s.done[b] {
			continue
		}
		logProbs, err := s.logProbs(model, b)
		if err != nil {
			return err
		}
		cands, err := BeamStep(logProbs, s.scores[b*nb:(b+1)*nb], &s.p, s.curLen-s.promptLen < s.p.MinNewTokens)
		if err != nil {
			return err
		}
		filled := 0
		for rank, c := range cands {
			row := b*nb + c.Beam
			if slices.Contains(s.p.EOS, c.Token) {
				if rank < nb {
					s.hyps[b].add(slices.Clone(s.rows[row]), float64(c.Score), append(slices.Clone(s.indices[row]), row), cur-s.promptLen)
				}
			} else {
				dst := b*nb + filled
				newRows[dst] = append(slices.Clone(s.rows[row]), c.Token)
				newScores[dst] = c.Score
				newIndices[dst] = append(slices.Clone(s.indices[row]), row)
				filled++
			}
			if filled == nb {
				break
			}
		}
		s.done[b] = s.hyps[b].isDone(float64(cands[0].Score), cur, s.promptLen)
	}
	s.rows, s.scores, s.indices = newRows, newScores, newIndices
	s.curLen++
	return nil
}

// logProbs runs the model on request b's live beams and log-softmaxes the
// logits; a wrong length or a NaN is an error naming the request, beam and
// step.
func (s *beamState) logProbs(model Model, b int) ([][]float32, error) {
	nb := s.p.NumBeams
	out := make([][]float32, nb)
	for j := range nb {
		logits := model(s.rows[b*nb+j])
		if len(logits) != s.p.Vocab {
			return nil, fmt.Errorf("model logits for request %d, beam %d at length %d: %d values, want vocab = %d",
				b, j, s.curLen, len(logits), s.p.Vocab)
		}
		var nan int
		if out[j], nan = LogSoftmax(logits, nil); nan >= 0 {
			return nil, fmt.Errorf("model logits for request %d, beam %d at length %d: logits[%d] is NaN", b, j, s.curLen, nan)
		}
	}
	return out, nil
}

// finalize adds the open beams of requests not done, keeps the best
// num_return_sequences per request and pads the sequences.
func (s *beamState) finalize(stopped string) BeamResult {
	nb := s.p.NumBeams
	for b := range s.hyps {
		if s.done[b] {
			continue
		}
		for j := range nb {
			row := b*nb + j
			s.hyps[b].add(s.rows[row], float64(s.scores[row]), s.indices[row], len(s.rows[row])-s.promptLen)
		}
	}
	var best []hypothesis
	for b := range s.hyps {
		sorted := slices.Clone(s.hyps[b].beams)
		slices.SortStableFunc(sorted, func(x, y hypothesis) int { return cmpFloat(x.score, y.score) })
		for range s.p.NumReturnSequences {
			best = append(best, sorted[len(sorted)-1])
			sorted = sorted[:len(sorted)-1]
		}
	}
	longest := 0
	for _, h := range best {
		longest = max(longest, len(h.tokens))
	}
	width := min(longest+1, s.p.MaxLength)
	res := BeamResult{Steps: s.curLen - s.promptLen, FinalLen: s.curLen, StoppedBy: stopped, Done: slices.Clone(s.done)}
	for _, h := range best {
		seq := slices.Clone(h.tokens)
		if len(seq) < width {
			seq = append(seq, s.p.EOS[0])
		}
		for len(seq) < width {
			seq = append(seq, s.p.Pad)
		}
		idx := slices.Clone(h.indices)
		for len(idx) < width {
			idx = append(idx, -1)
		}
		res.Sequences = append(res.Sequences, seq)
		res.BeamIndices = append(res.BeamIndices, idx)
		res.Scores = append(res.Scores, float32(h.score))
	}
	return res
}
