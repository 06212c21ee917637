package kernels

import (
	"math"
	"slices"
)

// fastExp is exp for x <= 0 in float32 precision (relative error below
// 2e-7): 2^(x log2 e) split into an integer power, set in the exponent
// bits, and a fraction in [-0.5, 0.5] through a degree-6 polynomial. A
// beam step takes exp of every logit, so this is its cost.
func fastExp(x float32) float64 {
	if x < -87 {
		return 0
	}
	t := float64(x) * math.Log2E
	n := math.Round(t)
	f := (t - n) * math.Ln2 // in [-ln2/2, ln2/2]
	p := 1 + f*(1+f*(0.5+f*(1.0/6+f*(1.0/24+f*(1.0/120+f*(1.0/720))))))
	return p * math.Float64frombits(uint64(int64(n)+1023)<<52)
}

// BeamStep is one request's decoding step on its live beams: log-softmax
// of each beam's logits (EOS masked while maskEOS), plus the beam's score,
// then the top max(2, 1+n_eos) x num_beams candidates over beams x vocab,
// sorted. It never materialises the beams x vocab score matrix: the
// log-softmax only shifts a beam's logits, so a beam's best candidates
// are its largest logits.
func BeamStep(logits [][]float32, beamScores []float32, p *BeamParams, maskEOS bool) []Candidate {
	n := max(2, 1+len(p.EOS)) * p.NumBeams
	var all []cand
	var buf []cand
	for j, row := range logits {
		m := float32(math.Inf(-1))
		for _, x := range row {
			m = max(m, x)
		}
		sum := 0.0
		for _, x := range row {
			sum += fastExp(x - m)
		}
		lse := float64(m) + math.Log(sum)
		buf = rollingTopK(row, min(len(row), n+len(p.EOS)), 8*1024, buf)
		for _, c := range buf {
			score := float32(float64(c.v)-lse) + beamScores[j]
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
	return out
}
