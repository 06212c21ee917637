package kernels

import (
	"fmt"
	"math"
)

// SampleInput is one call of the TopK-TopP-(MinP-)Sample operator over a
// [Batch, Vocab] logits matrix (row-major).
type SampleInput struct {
	Batch, Vocab int
	Logits       []float32
	DType        DType
	// TopK, TopP and (V2, optional) MinPs are per row.
	TopK  []int32
	TopP  []float32
	MinPs []float32
	// Q, optional, is [Batch, Vocab]: the sampling weights, indexed by
	// position in a row's kept list.
	Q   []float32
	Eps float32
	// IsNeedLogits asks for LogitsTopKPSelect.
	IsNeedLogits bool
	// TopKGuess is how many tokens the top-p fast path looks at before it
	// falls back to a full sort; KsMax bounds top-k (V2).
	TopKGuess, KsMax int
	// InputIsLogits (V2): softmax the values; otherwise they are probs.
	InputIsLogits bool
	// IsNeedSampleResult (V2): output the kept probabilities and ids
	// (LogitsSortMasked, LogitsIdx) instead of a selected index.
	IsNeedSampleResult bool
}

// SampleOutput is what the operator returns.
type SampleOutput struct {
	// KeptCount is the tokens that survive per row.
	KeptCount []int
	// SelectIdx is the selected vocab id per row (nil with
	// IsNeedSampleResult).
	SelectIdx []int64
	// TopKPSelect is [Batch, Vocab]: kept tokens' original logits, every
	// other position Fill (nil unless IsNeedLogits).
	TopKPSelect []float32
	Fill        float32
	// LogitsIdx and LogitsSortMasked are per row the kept ids and their
	// probabilities (with IsNeedSampleResult).
	LogitsIdx        [][]int64
	LogitsSortMasked [][]float32
}

// validate checks shapes and values; errors name the argument.
func (in *SampleInput) validate(v2 bool) error {
	switch {
	case in.Batch < 1:
		return fmt.Errorf("batch = %d: must be at least 1", in.Batch)
	case in.Vocab < 1:
		return fmt.Errorf("vocab = %d: must be at least 1", in.Vocab)
	case len(in.Logits) != in.Batch*in.Vocab:
		return fmt.Errorf("logits: %d values, want batch x vocab = %d", len(in.Logits), in.Batch*in.Vocab)
	case len(in.TopK) != in.Batch:
		return fmt.Errorf("top_k: %d values, want batch = %d", len(in.TopK), in.Batch)
	case len(in.TopP) != in.Batch:
		return fmt.Errorf("top_p: %d values, want batch = %d", len(in.TopP), in.Batch)
	case in.MinPs != nil && (!v2 || len(in.MinPs) != in.Batch):
		return fmt.Errorf("min_ps: %d values, want batch = %d (V2 only)", len(in.MinPs), in.Batch)
	case in.Q != nil && len(in.Q) != in.Batch*in.Vocab:
		return fmt.Errorf("q: %d values, want batch x vocab = %d", len(in.Q), in.Batch*in.Vocab)
	case in.TopKGuess < 1:
		return fmt.Errorf("top_k_guess = %d: must be at least 1", in.TopKGuess)
	case v2 && in.KsMax < 1:
		return fmt.Errorf("ks_max = %d: must be at least 1", in.KsMax)
	}
	return nil
}

// nanError is the error for a NaN logit: the operator's order is undefined
// for NaN, so the call fails rather than pick an arbitrary token. Rows find
// their NaN during their own pass (the pre-filter's compare fails on it).
func nanError(row, col int) error {
	return fmt.Errorf("logits[%d][%d] is NaN: the operator's order is undefined for NaN", row, col)
}

// firstNaN returns the index of the first NaN in x, or -1. A NaN's bits
// without the sign exceed +Inf's: the fast pass takes their running
// maximum, branch-free, four lanes at a time, and only a hit searches.
func firstNaN(x []float32) int {
	const abs, inf = 0x7fffffff, 0x7f800000
	var m0, m1, m2, m3 uint32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s := x[i : i+4 : i+4]
		m0 = max(m0, math.Float32bits(s[0])&abs)
		m1 = max(m1, math.Float32bits(s[1])&abs)
		m2 = max(m2, math.Float32bits(s[2])&abs)
		m3 = max(m3, math.Float32bits(s[3])&abs)
	}
	for _, v := range x[i:] {
		m0 = max(m0, math.Float32bits(v)&abs)
	}
	if max(m0, m1, m2, m3) <= inf {
		return -1
	}
	for i, v := range x {
		if v != v {
			return i
		}
	}
	panic("unreachable: a NaN's bits were seen")
}

// scratch holds per-call buffers, reused across rows.
type scratch struct {
	row   []float32
	cands []cand
	probs []float32
}

// rowValues returns a row's logits as the dtype holds them.
func (in *SampleInput) rowValues(b int, s *scratch) []float32 {
	row := in.Logits[b*in.Vocab : (b+1)*in.Vocab]
	if in.DType == Float32 {
		return row
	}
	s.row = s.row[:0]
	for _, x := range row {
		s.row = append(s.row, in.DType.Round(x))
	}
	return s.row
}

// segmentLen is the rolling top-k's segment: 8 x ks_max, as the kernel.
func segmentLen(ksMax int) int { return 8 * max(ksMax, 1) }

// softmax writes exp(v - max) / sum over vals into out, in float32 from a
// float64 sum.
func softmax(vals []float32, maxV float32, out []float32) []float32 {
	out = out[:0]
	sum := 0.0
	for _, v := range vals {
		e := float32(math.Exp(float64(v - maxV)))
		out = append(out, e)
		sum += float64(e)
	}
	inv := float32(sum)
	for i := range out {
		out[i] /= inv
	}
	return out
}

// sumExp returns the softmax denominator of a whole row.
func sumExp(vals []float32, maxV float32) float32 {
	sum := 0.0
	for _, v := range vals {
		sum += float64(float32(math.Exp(float64(v - maxV))))
	}
	return float32(sum)
}

// pick returns the position of the selected token: the first maximum of
// P[j] / (|q[j]| + eps), or of P without q.
func pick(probs, q []float32, eps float32) int {
	best, bestV := 0, float32(math.Inf(-1))
	for j, p := range probs {
		v := p
		if q != nil {
			v = p / (float32(math.Abs(float64(q[j]))) + eps)
		}
		if v > bestV {
			best, bestV = j, v
		}
	}
	return best
}

// TopKTopPSampleV2 is aclnnTopKTopPSampleV2 with the semantics of Huawei's
// golden (see testdata/vectors/FORMAT.md and docs/kernels.md). forceFullSort
// disables the top_k_guess fast path (the results must not change).
func TopKTopPSampleV2(in SampleInput, forceFullSort bool) (SampleOutput, error) {
	if err := in.validate(true); err != nil {
		return SampleOutput{}, err
	}
	out := newOutput(&in)
	var s scratch
	for b := range in.Batch {
		kept, probs, nan := v2Row(&in, b, forceFullSort, &s)
		if nan >= 0 {
			return SampleOutput{}, nanError(b, nan)
		}
		out.record(&in, b, kept, probs, in.rowValues(b, &s))
	}
	return out, nil
}

func newOutput(in *SampleInput) SampleOutput {
	out := SampleOutput{KeptCount: make([]int, in.Batch)}
	if in.IsNeedSampleResult {
		out.LogitsIdx, out.LogitsSortMasked = make([][]int64, in.Batch), make([][]float32, in.Batch)
	} else {
		out.SelectIdx = make([]int64, in.Batch)
	}
	if in.IsNeedLogits {
		out.Fill = float32(math.Inf(-1))
		if !in.InputIsLogits {
			out.Fill = 0
		}
		out.TopKPSelect = make([]float32, in.Batch*in.Vocab)
		for i := range out.TopKPSelect {
			out.TopKPSelect[i] = out.Fill
		}
	}
	return out
}

// record stores a row's kept tokens (vocab ids) and their probabilities.
func (o *SampleOutput) record(in *SampleInput, b int, kept []int32, probs []float32, vals []float32) {
	o.KeptCount[b] = len(kept)
	if in.IsNeedSampleResult {
		ids := make([]int64, len(kept))
		for i, k := range kept {
			ids[i] = int64(k)
		}
		o.LogitsIdx[b], o.LogitsSortMasked[b] = ids, append([]float32(nil), probs...)
	} else {
		var q []float32
		if in.Q != nil {
			q = in.Q[b*in.Vocab : b*in.Vocab+len(kept)]
		}
		o.SelectIdx[b] = int64(kept[pick(probs, q, in.Eps)])
	}
	if in.IsNeedLogits {
		for _, k := range kept {
			o.TopKPSelect[b*in.Vocab+int(k)] = vals[k]
		}
	}
}

// v2Row filters one row: top-k, top-p, min-p, in that order; it returns
// the kept vocab ids and their probabilities (not renormalised), or the
// column of a NaN logit.
func v2Row(in *SampleInput, b int, forceFullSort bool, s *scratch) ([]int32, []float32, int) {
	vals := in.rowValues(b, s)
	k, p := int(in.TopK[b]), in.TopP[b]
	minP := float32(-1)
	if in.MinPs != nil {
		minP = in.MinPs[b]
	}
	useK := k >= 1 && k <= min(in.KsMax, in.Vocab)
	useP := p < 1
	if !useK && !useP && minP < 1 { // nothing sorted: vocab order
		return vocabOrder(in, vals, minP, s)
	}
	cands, probs, n, nan := filterSorted(in, vals, k, p, useK, useP, forceFullSort, s, topPCount)
	if nan >= 0 {
		return nil, nil, nan
	}
	if useP && p <= 0 && in.InputIsLogits {
		probs[0] = 1
	}
	kept, keptProbs := minPFilter(cands[:n], probs[:n], minP)
	return kept, keptProbs, -1
}

// filterSorted applies top-k and top-p (by count, V1's or V2's rule) to the
// sorted row and returns the candidates, their probabilities and how many
// survive. Top-p without top-k first tries the top_k_guess first tokens:
// if the count stops inside them, the rest of the row cannot matter;
// otherwise it sorts the whole row. Both give the same result. A NaN in
// the row is returned as its column (the count is then meaningless).
func filterSorted(in *SampleInput, vals []float32, k int, p float32, useK, useP, forceFullSort bool, s *scratch,
	count func([]float32, float32) int) (cands []cand, probs []float32, n, nan int) {
	seg := segmentLen(in.KsMax)
	switch {
	case useK:
		s.cands, nan = rollingTopK(vals, k, seg, s.cands)
	case !useP: // min-p >= 1 alone keeps the first token only
		s.cands, nan = rollingTopK(vals, 1, seg, s.cands)
	case !forceFullSort:
		if s.cands, nan = rollingTopK(vals, min(in.TopKGuess, len(vals)), seg, s.cands); nan >= 0 {
			return nil, nil, 0, nan
		}
		probs := candidateProbs(in, vals, s.cands, false, s)
		if n := count(probs, p); n < len(s.cands) || len(s.cands) == len(vals) {
			return s.cands, probs, n, -1
		}
		s.cands = fullSort(vals, s.cands)
	default:
		if nan = firstNaN(vals); nan < 0 {
			s.cands = fullSort(vals, s.cands)
		}
	}
	if nan >= 0 {
		return nil, nil, 0, nan
	}
	probs = candidateProbs(in, vals, s.cands, useK, s)
	n = len(s.cands)
	if useP {
		n = count(probs, p)
	}
	return s.cands, probs, n, -1
}

// vocabOrder is the path with neither top-k nor top-p: all tokens in vocab
// order, probabilities over the whole row, then min-p.
func vocabOrder(in *SampleInput, vals []float32, minP float32, s *scratch) ([]int32, []float32, int) {
	if nan := firstNaN(vals); nan >= 0 {
		return nil, nil, nan
	}
	s.cands = s.cands[:0]
	for i := range vals {
		s.cands = append(s.cands, cand{vals[i], int32(i)})
	}
	var probs []float32
	if in.InputIsLogits {
		probs = softmax(vals, maxOf(vals), s.probs)
	} else {
		probs = append(s.probs[:0], vals...)
	}
	s.probs = probs
	kept, keptProbs := minPFilter(s.cands, probs, minP)
	return kept, keptProbs, -1
}

func maxOf(vals []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range vals {
		m = max(m, v)
	}
	return m
}

// candidateProbs returns the candidates' probabilities: softmax over the
// top k when top-k applied, else over the whole row (logits); the values
// themselves otherwise.
func candidateProbs(in *SampleInput, vals []float32, cands []cand, useK bool, s *scratch) []float32 {
	probs := s.probs[:0]
	if !in.InputIsLogits {
		for _, c := range cands {
			probs = append(probs, c.v)
		}
		s.probs = probs
		return probs
	}
	maxV := cands[0].v
	denom := float32(0)
	if useK {
		sum := 0.0
		for _, c := range cands {
			sum += float64(float32(math.Exp(float64(c.v - maxV))))
		}
		denom = float32(sum)
	} else {
		denom = sumExp(vals, maxV)
	}
	for _, c := range cands {
		probs = append(probs, float32(math.Exp(float64(c.v-maxV)))/denom)
	}
	s.probs = probs
	return probs
}

// topPCount is V2's top-p: p <= 0 keeps the first token; otherwise token i
// is kept iff the sum of the probabilities before it is below p.
func topPCount(probs []float32, p float32) int {
	if p <= 0 {
		return 1
	}
	sum := float32(0)
	for i, pr := range probs {
		if sum >= p {
			return i
		}
		sum += pr
	}
	return len(probs)
}

// minPFilter is min-p: absent or <= 0 keeps all; below 1 keeps tokens with
// probability >= min-p x the largest (in order); 1 or more keeps the first.
func minPFilter(cands []cand, probs []float32, minP float32) ([]int32, []float32) {
	kept := make([]int32, 0, len(cands))
	switch {
	case minP <= 0:
		for _, c := range cands {
			kept = append(kept, c.idx)
		}
		return kept, probs
	case minP >= 1:
		return append(kept, cands[0].idx), probs[:1]
	}
	thd := maxOf(probs) * minP
	out := probs[:0:0]
	for i, c := range cands {
		if probs[i] >= thd {
			kept = append(kept, c.idx)
			out = append(out, probs[i])
		}
	}
	return kept, out
}
