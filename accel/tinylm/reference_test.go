package tinylm

import "math"

// reference is the model written plainly in float64 from its definition,
// without a cache: every token attends to all tokens up to itself. It
// returns the last token's logits.
func reference(m *Model, tokens []uint32) []float64 {
	cfg := m.cfg
	h, hd := cfg.Hidden, cfg.HeadDim()
	f := func(v []float32) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	matmul := func(x []float64, w, b []float32) []float64 {
		out := f(b)
		for j := range out {
			for i := range x {
				out[j] += x[i] * float64(w[i*len(b)+j])
			}
		}
		return out
	}
	norm := func(x []float64, g, b []float32) []float64 {
		mean, variance := 0.0, 0.0
		for _, v := range x {
			mean += v / float64(len(x))
		}
		for _, v := range x {
			variance += (v - mean) * (v - mean) / float64(len(x))
		}
		out := make([]float64, len(x))
		for i, v := range x {
			out[i] = (v-mean)/math.Sqrt(variance+1e-6)*float64(g[i]) + float64(b[i])
		}
		return out
	}
	xs := make([][]float64, len(tokens))
	for p, t := range tokens {
		xs[p] = make([]float64, h)
		for i := range h {
			rate := math.Exp(-float64(i%(h/2)) * math.Log(10000) / math.Max(float64(h/2-1), 1))
			enc := math.Sin(rate * float64(p))
			if i >= h/2 {
				enc = math.Cos(rate * float64(p))
			}
			xs[p][i] = float64(m.embedding[int(t)*h+i])*math.Sqrt(float64(h)) + enc
		}
	}
	for _, w := range m.layers {
		ks, vs := make([][]float64, len(xs)), make([][]float64, len(xs))
		qs := make([][]float64, len(xs))
		for p, x := range xs {
			n := norm(x, w.norm1Gain, w.norm1Bias)
			qs[p], ks[p], vs[p] = matmul(n, w.wq, w.bq), matmul(n, w.wk, w.bk), matmul(n, w.wv, w.bv)
		}
		for p := range xs {
			ctx := make([]float64, h)
			for head := range cfg.Heads {
				kv := head / (cfg.Heads / cfg.KVHeads) * hd
				scores := make([]float64, p+1)
				top, sum := math.Inf(-1), 1e-6
				for j := range scores {
					for i := range hd {
						scores[j] += qs[p][head*hd+i] * ks[j][kv+i] / math.Sqrt(float64(hd))
					}
					top = math.Max(top, scores[j])
				}
				for j := range scores {
					scores[j] = math.Exp(scores[j] - top)
					sum += scores[j]
				}
				for j := range scores {
					for i := range hd {
						ctx[head*hd+i] += scores[j] / sum * vs[j][kv+i]
					}
				}
			}
			attn := matmul(ctx, w.wo, w.bo)
			for i := range xs[p] {
				xs[p][i] += attn[i]
			}
			inner := matmul(norm(xs[p], w.norm2Gain, w.norm2Bias), w.w1, w.b1)
			for i := range inner {
				inner[i] = math.Max(inner[i], 0)
			}
			ffn := matmul(inner, w.w2, w.b2)
			for i := range xs[p] {
				xs[p][i] += ffn[i]
			}
		}
	}
	return matmul(norm(xs[len(xs)-1], m.finalGain, m.finalBias), m.logitsW, m.logitsB)
}
