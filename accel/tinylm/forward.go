package tinylm

import (
	"fmt"
	"math"
)

// Cache is one sequence's KV cache: per layer, Len rows of KVWidth K
// elements and of KVWidth V elements, in token order.
type Cache struct {
	Len  int
	K, V [][]float32
}

// NewCache returns an empty cache for the model.
func (m *Model) NewCache() *Cache {
	return &Cache{K: make([][]float32, m.cfg.Layers), V: make([][]float32, m.cfg.Layers)}
}

// Clone returns a copy of the cache's first n tokens.
func (c *Cache) Clone(n int) *Cache {
	out := &Cache{Len: n, K: make([][]float32, len(c.K)), V: make([][]float32, len(c.V))}
	for l := range c.K {
		w := len(c.K[l]) / max(c.Len, 1)
		out.K[l] = append([]float32(nil), c.K[l][:n*w]...)
		out.V[l] = append([]float32(nil), c.V[l][:n*w]...)
	}
	return out
}

// Truncate drops every token from n on.
func (c *Cache) Truncate(n int) {
	for l := range c.K {
		w := len(c.K[l]) / max(c.Len, 1)
		c.K[l], c.V[l] = c.K[l][:n*w], c.V[l][:n*w]
	}
	c.Len = n
}

// Prefill runs tokens through the model after the cache's tokens, appends
// their K and V to the cache, and returns the logits of the last one. A
// token id outside the vocab is an error, and nothing is appended.
func (m *Model) Prefill(c *Cache, tokens []uint32) ([]float32, error) {
	if len(tokens) == 0 {
		return nil, fmt.Errorf("tinylm: prefill of no tokens")
	}
	for i, t := range tokens {
		if int(t) >= m.cfg.Vocab {
			return nil, fmt.Errorf("tinylm: token %d (position %d) outside the vocab of %d", t, i, m.cfg.Vocab)
		}
	}
	if len(c.K) != m.cfg.Layers {
		return nil, fmt.Errorf("tinylm: cache has %d layers, the model %d", len(c.K), m.cfg.Layers)
	}
	var x []float32
	for _, t := range tokens {
		x = m.token(c, t)
	}
	return m.logits(x), nil
}

// Batch runs one prefill (a decode step is a prefill of one token) per
// sequence and returns each one's last logits.
func (m *Model) Batch(caches []*Cache, tokens [][]uint32) ([][]float32, error) {
	if len(caches) != len(tokens) {
		return nil, fmt.Errorf("tinylm: %d caches for %d token lists", len(caches), len(tokens))
	}
	out := make([][]float32, len(caches))
	for i := range caches {
		var err error
		if out[i], err = m.Prefill(caches[i], tokens[i]); err != nil {
			return nil, fmt.Errorf("sequence %d: %w", i, err)
		}
	}
	return out, nil
}

// token runs one token at position c.Len through every layer, appending
// its K and V, and returns the last layer's output.
func (m *Model) token(c *Cache, t uint32) []float32 {
	h := m.cfg.Hidden
	pos := float32(c.Len)
	x := make([]float32, h)
	half := h / 2
	for i := range x {
		angle := m.positionRate[i] * pos
		enc := float32(math.Sin(float64(angle)))
		if i >= half {
			enc = float32(math.Cos(float64(angle)))
		}
		x[i] = float32(m.embedding[int(t)*h+i]*m.embeddingScale) + enc
	}
	for l := range m.layers {
		x = m.layer(&m.layers[l], c, l, x)
	}
	c.Len++
	return x
}

// layer is one decoder layer: x + attention(norm1(x)), then + ffn(norm2).
func (m *Model) layer(w *layer, c *Cache, l int, x []float32) []float32 {
	n := layerNorm(x, w.norm1Gain, w.norm1Bias)
	q := affine(n, w.wq, w.bq)
	c.K[l] = append(c.K[l], affine(n, w.wk, w.bk)...)
	c.V[l] = append(c.V[l], affine(n, w.wv, w.bv)...)
	ctx := m.attend(q, c.K[l], c.V[l], c.Len+1)
	x = add(x, affine(ctx, w.wo, w.bo))
	inner := affine(layerNorm(x, w.norm2Gain, w.norm2Bias), w.w1, w.b1)
	for i, v := range inner {
		inner[i] = max(v, 0)
	}
	return add(x, affine(inner, w.w2, w.b2))
}

// attend is masked attention of one query over the n cached tokens: per
// head, scores q.k x 1/sqrt(head_dim) against its KV head, a softmax
// (max subtracted; the sum plus 1e-6, as FasterTransformer), and the
// weighted sum of V in token order.
func (m *Model) attend(q, k, v []float32, n int) []float32 {
	hd, kvw := m.hd, m.kvw
	out := make([]float32, m.cfg.Hidden)
	scores := make([]float32, n)
	for head := range m.cfg.Heads {
		kv := head / m.headsPerKV * hd
		qh := q[head*hd : head*hd+hd]
		top := float32(math.Inf(-1))
		for j := range n {
			scores[j] = dot(qh, k[j*kvw+kv:j*kvw+kv+hd]) * m.scale
			top = max(top, scores[j])
		}
		var sum float32
		for j := range scores {
			scores[j] = float32(math.Exp(float64(scores[j] - top)))
			sum += scores[j]
		}
		sum += 1e-6
		oh := out[head*hd : head*hd+hd]
		for j, s := range scores {
			p := s / sum
			for i, vv := range v[j*kvw+kv : j*kvw+kv+hd] {
				oh[i] += float32(p * vv)
			}
		}
	}
	return out
}

// logits are the final layer norm and the projection onto the vocab.
func (m *Model) logits(x []float32) []float32 {
	return affine(layerNorm(x, m.finalGain, m.finalBias), m.logitsW, m.logitsB)
}

// layerNorm is (x - mean) / sqrt(variance + 1e-6) x gain + bias.
func layerNorm(x, gain, bias []float32) []float32 {
	var mean float32
	for _, v := range x {
		mean += v
	}
	mean /= float32(len(x))
	var variance float32
	for _, v := range x {
		d := v - mean
		variance += float32(d * d)
	}
	variance /= float32(len(x))
	inv := float32(1 / math.Sqrt(float64(variance+1e-6)))
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(float32((v-mean)*inv)*gain[i]) + bias[i]
	}
	return out
}

// affine is x times the row-major [len(x)][len(b)] matrix w, plus b; each
// output sums its products in input order.
func affine(x, w, b []float32) []float32 {
	out := append([]float32(nil), b...)
	cols := len(b)
	for i, xi := range x {
		row := w[i*cols : i*cols+cols]
		for j, wij := range row {
			out[j] += float32(xi * wij)
		}
	}
	return out
}

// dot sums a[i] x b[i] in index order.
func dot(a, b []float32) float32 {
	var s float32
	for i, x := range a {
		s += float32(x * b[i])
	}
	return s
}

// add returns x + y.
func add(x, y []float32) []float32 {
	for i := range x {
		x[i] += y[i]
	}
	return x
}
