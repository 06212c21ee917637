package kernels

import (
	"math"
	"sort"
)

// The reference implementations: the operators written the plainest way,
// as the golden scripts do: sort the whole row, build masks, loop. They
// share nothing with the fast code (no rolling top-k, no guess path) and
// generate the project's own golden vectors (TestOwnVectors).

type refTok struct {
	v   float64
	idx int
}

// refSorted sorts a row descending, stable.
func refSorted(vals []float32) []refTok {
	out := make([]refTok, len(vals))
	for i, v := range vals {
		out[i] = refTok{float64(v), i}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].v > out[b].v })
	return out
}

func refSoftmax(vals []float64) []float64 {
	m := math.Inf(-1)
	for _, v := range vals {
		m = math.Max(m, v)
	}
	out := make([]float64, len(vals))
	sum := 0.0
	for i, v := range vals {
		out[i] = float64(float32(math.Exp(float64(float32(v) - float32(m))))) // x - max in float32, as torch
		sum += out[i]
	}
	for i := range out {
		out[i] = float64(float32(out[i]) / float32(sum))
	}
	return out
}

func refValues(toks []refTok) []float64 {
	out := make([]float64, len(toks))
	for i, t := range toks {
		out[i] = t.v
	}
	return out
}

// refPick is the first maximum of p / (|q| + eps) (or of p).
func refPick(p []float64, q []float32, eps float32) int {
	best := 0
	for j := range p {
		score := func(i int) float32 {
			if q == nil {
				return float32(p[i])
			}
			return float32(p[i]) / (float32(math.Abs(float64(q[i]))) + eps)
		}
		if score(j) > score(best) {
			best = j
		}
	}
	return best
}

// refV2Row returns a row's kept ids and probabilities by V2's rules.
func refV2Row(in *SampleInput, b int) ([]int, []float64) {
	vals := make([]float32, in.Vocab)
	for i := range vals {
		vals[i] = in.DType.Round(in.Logits[b*in.Vocab+i])
	}
	k, p := int(in.TopK[b]), float64(in.TopP[b])
	minP := -1.0
	if in.MinPs != nil {
		minP = float64(in.MinPs[b])
	}
	useK := k >= 1 && k <= min(in.KsMax, in.Vocab)
	useP := p < 1
	var ids []int
	var probs []float64
	if !useK && !useP && minP < 1 {
		for i := range vals {
			ids = append(ids, i)
			probs = append(probs, float64(vals[i]))
		}
		if in.InputIsLogits {
			probs = refSoftmax(probs)
		}
	} else {
		toks := refSorted(vals)
		if useK {
			toks = toks[:k]
		}
		probs = refValues(toks)
		if in.InputIsLogits {
			probs = refSoftmax(probs)
		}
		if useP {
			keep := make([]bool, len(toks))
			cum := 0.0
			for i := range toks {
				keep[i] = p > 0 && float32(cum) < float32(p) || i == 0
				cum = float64(float32(cum) + float32(probs[i]))
			}
			var kt []refTok
			var kp []float64
			for i := range toks {
				if keep[i] {
					kt, kp = append(kt, toks[i]), append(kp, probs[i])
				}
			}
			toks, probs = kt, kp
			if p <= 0 && in.InputIsLogits {
				probs[0] = 1
			}
		}
		for _, t := range toks {
			ids = append(ids, t.idx)
		}
	}
	return refMinP(ids, probs, minP)
}

func refMinP(ids []int, probs []float64, minP float64) ([]int, []float64) {
	if minP <= 0 {
		return ids, probs
	}
	if minP >= 1 {
		return ids[:1], probs[:1]
	}
	m := 0.0
	for _, p := range probs {
		m = math.Max(m, p)
	}
	thd := float32(m) * float32(minP)
	var ki []int
	var kp []float64
	for i := range ids {
		if float32(probs[i]) >= thd {
			ki, kp = append(ki, ids[i]), append(kp, probs[i])
		}
	}
	return ki, kp
}

// refV1Row returns a row's kept ids and final probabilities by V1's rules.
func refV1Row(in *SampleInput, b int) ([]int, []float64) {
	vals := make([]float32, in.Vocab)
	for i := range vals {
		vals[i] = in.DType.Round(in.Logits[b*in.Vocab+i])
	}
	k, p := int(in.TopK[b]), float64(in.TopP[b])
	useK := k >= 1 && k <= min(1024, in.Vocab)
	useP := p > 0 && p < 1
	if !useK && !useP {
		ids := make([]int, len(vals))
		all := make([]float64, len(vals))
		for i, v := range vals {
			ids[i], all[i] = i, float64(v)
		}
		return ids, refSoftmax(all)
	}
	toks := refSorted(vals)
	if useK {
		toks = toks[:k]
	}
	if useP {
		probs := refSoftmax(refValues(toks))
		cum := float32(0)
		n := 0
		for i := range toks {
			if cum > float32(p) {
				break
			}
			cum += float32(probs[i])
			n = i + 1
		}
		toks = toks[:n]
	}
	ids := make([]int, len(toks))
	for i, t := range toks {
		ids[i] = t.idx
	}
	return ids, refSoftmax(refValues(toks))
}

// logSoftmax is log-softmax in float32 from float64 sums.
func logSoftmax(logits []float32) []float32 {
	m := maxOf(logits)
	sum := 0.0
	for _, x := range logits {
		sum += math.Exp(float64(x - m))
	}
	lse := float64(m) + math.Log(sum)
	out := make([]float32, len(logits))
	for i, x := range logits {
		out[i] = float32(float64(x) - lse)
	}
	return out
}
