package kernels

import (
	"fmt"
	"math"
	"slices"
)

// fastExp is exp for x <= 0 in float32 precision (relative error below
// 2e-7): 2^(x log2 e) split into an integer power, set in the exponent
// bits, and a fraction in [-0.5, 0.5] through a degree-6 polynomial. The
// log-softmax takes exp of every logit, so this is its cost.
func fastExp(x float32) float64 {
	if x < -87 {
		return 0
	}
	t := float64(x) * math.Log2E
	n := float64(int64(t - 0.5)) // t <= 0: truncation rounds to nearest
	f := (t - n) * math.Ln2      // in [-ln2/2, ln2/2]
	p := 1 + f*(1+f*(0.5+f*(1.0/6+f*(1.0/24+f*(1.0/120+f*(1.0/720))))))
	return p * math.Float64frombits(uint64(int64(n)+1023)<<52)
}

// LogSoftmax writes a row's log-probabilities (logit minus the row's
// log-sum-exp, rounded to float32 as transformers holds them) into dst,
// and returns them with the column of the first NaN logit (-1 if none).
func LogSoftmax(logits, dst []float32) ([]float32, int) {
	m := float32(math.Inf(-1))
	for i, x := range logits {
		if x != x {
			return dst, i
		}
		if x > m {
			m = x
		}
	}
	sum := 0.0
	for _, x := range logits {
		sum += fastExp(x - m)
	}
	lse := float64(m) + math.Log(sum)
	dst = dst[:0]
	for _, x := range logits {
		dst = append(dst, float32(float64(x)-lse))
	}
	return dst, -1
}

// BeamStep is one request's decoding step on its live beams: it takes each
// beam's log-probabilities (EOS masked while maskEOS, as transformers'
// MinNewTokensLengthLogitsProcessor does), adds the beam's score, and
// returns the top max(2, 1+n_eos) x num_beams candidates over beams x
// vocab, sorted. It never materialises the beams x vocab score matrix:
// adding a beam's score does not reorder the beam's own tokens, so its best
// candidates are its largest log-probabilities (one pre-filtered pass).
func BeamStep(logProbs [][]float32, beamScores []float32, p *BeamParams, maskEOS bool) ([]Candidate, error) {
	if len(logProbs) != p.NumBeams || len(beamScores) != p.NumBeams {
		return nil, fmt.Errorf("log_probs: %d beams and %d beam scores, want num_beams = %d", len(logProbs), len(beamScores), p.NumBeams)
	}
	n := max(2, 1+len(p.EOS)) * p.NumBeams
	var all, buf []cand
	for j, row := range logProbs {
		if len(row) != p.Vocab {
			return nil, fmt.Errorf("log_probs[%d]: %d values, want vocab = %d", j, len(row), p.Vocab)
		}
		var nan int
		if buf, nan = rollingTopK(row, min(len(row), n+len(p.EOS)), 8*1024, buf); nan >= 0 {
			return nil, fmt.Errorf("log_probs[%d][%d] is NaN: the candidates' order is undefined", j, nan)
		}
		for _, c := range buf {
			score := c.v + beamScores[j]
			if maskEOS && slices.Contains(p.EOS, int(c.idx)) {
				score = float32(math.Inf(-1))
			}
			all = append(all, cand{score, int32(j*p.Vocab) + c.idx})
		}
	}
	slices.SortFunc(all, compareCand)
	out := make([]Candidate, 0, n)
	for _, c := range all[:min(n, len(all))] {
		out = append(out, Candidate{Token: int(c.idx) % p.Vocab, Beam: int(c.idx) / p.Vocab, Score: c.v})
	}
	return out, nil
}
