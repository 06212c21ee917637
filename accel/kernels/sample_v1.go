package kernels

// v1KMax bounds V1's top-k.
const v1KMax = 1024

// TopKTopPSampleV1 is aclnnTopKTopPSample (V1) with the semantics of its
// golden: top-k applies for 1 <= k <= min(vocab, 1024); top-p only for
// 0 < p < 1 and keeps a token iff the sum before it is <= p; the kept
// logits are softmaxed again before the q division; with neither, the whole
// row in vocab order. MinPs, KsMax, InputIsLogits and IsNeedSampleResult
// do not exist in V1 and are ignored.
func TopKTopPSampleV1(in SampleInput, forceFullSort bool) (SampleOutput, error) {
	in.MinPs, in.InputIsLogits, in.IsNeedSampleResult, in.KsMax = nil, true, false, v1KMax
	if err := in.validate(false); err != nil {
		return SampleOutput{}, err
	}
	out := newOutput(&in)
	var s scratch
	for b := range in.Batch {
		vals := in.rowValues(b, &s)
		kept, probs, nan := v1Row(&in, b, vals, forceFullSort, &s)
		if nan >= 0 {
			return SampleOutput{}, nanError(b, nan)
		}
		out.record(&in, b, kept, probs, vals)
	}
	return out, nil
}

// v1Row returns a row's kept vocab ids and their re-softmaxed
// probabilities, or the column of a NaN logit.
func v1Row(in *SampleInput, b int, vals []float32, forceFullSort bool, s *scratch) ([]int32, []float32, int) {
	k, p := int(in.TopK[b]), in.TopP[b]
	useK := k >= 1 && k <= min(v1KMax, in.Vocab)
	useP := p > 0 && p < 1
	if !useK && !useP {
		if nan := firstNaN(vals); nan >= 0 {
			return nil, nil, nan
		}
		kept := make([]int32, len(vals))
		for i := range kept {
			kept[i] = int32(i)
		}
		return kept, softmax(vals, maxOf(vals), s.probs), -1
	}
	cands, _, n, nan := filterSorted(in, vals, k, p, useK, useP, forceFullSort, s, v1TopPCount)
	if nan >= 0 {
		return nil, nil, nan
	}
	kept := make([]int32, n)
	keptVals := make([]float32, n)
	for i, c := range cands[:n] {
		kept[i], keptVals[i] = c.idx, c.v
	}
	return kept, softmax(keptVals, keptVals[0], nil), -1
}

// v1TopPCount keeps token i iff the sum of the probabilities before it is
// at most p.
func v1TopPCount(probs []float32, p float32) int {
	sum := float32(0)
	for i, pr := range probs {
		if sum > p {
			return i
		}
		sum += pr
	}
	return len(probs)
}
