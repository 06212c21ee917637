// Package tinylm is a small decoder-only transformer for functional mode,
// in the structure of the FasterTransformer v2.0 decoder: embedding lookup
// scaled by sqrt(hidden), sine position encoding, per layer a layer norm,
// masked multi-head self-attention over a KV cache (grouped KV heads
// allowed), a residual, a layer norm, a ReLU feed-forward network and a
// residual, then a final layer norm and the logits projection.
//
// It is plain Go on float32 slices with a fixed order of every sum, and a
// token's computation depends only on its own input and the cached K and V
// of the tokens before it. So a prefill split into chunks, a prefill on an
// imported cache and a full recomputation give bit-identical caches and
// logits: the property functional mode verifies end to end.
package tinylm

import "fmt"

// Config is the model's shape and the seed of its weights.
type Config struct {
	Layers, Hidden, Heads, KVHeads, Vocab int
	// FFN is the feed-forward network's inner width.
	FFN  int
	Seed uint64
}

// DefaultConfig is the default: 2 layers, hidden 64, 4 heads, 2 KV
// heads, vocab 512; FFN 4 x hidden as in FasterTransformer's decoder.
func DefaultConfig() Config {
	return Config{Layers: 2, Hidden: 64, Heads: 4, KVHeads: 2, Vocab: 512, FFN: 256, Seed: 1}
}

// HeadDim is the width of one attention head.
func (c Config) HeadDim() int { return c.Hidden / c.Heads }

// KVWidth is the K (and the V) elements cached per token and layer.
func (c Config) KVWidth() int { return c.KVHeads * c.HeadDim() }

// Validate checks the shape; errors name the parameter and its range.
func (c Config) Validate() error {
	switch {
	case c.Layers < 1 || c.Layers > 64:
		return fmt.Errorf("tinylm: layers = %d: must be in [1, 64]", c.Layers)
	case c.Hidden < 2 || c.Hidden > 4096 || c.Hidden%2 != 0:
		return fmt.Errorf("tinylm: hidden = %d: must be even, in [2, 4096]", c.Hidden)
	case c.Heads < 1 || c.Hidden%c.Heads != 0:
		return fmt.Errorf("tinylm: heads = %d: must be at least 1 and divide hidden = %d", c.Heads, c.Hidden)
	case c.KVHeads < 1 || c.Heads%c.KVHeads != 0:
		return fmt.Errorf("tinylm: kv_heads = %d: must be at least 1 and divide heads = %d", c.KVHeads, c.Heads)
	case c.Vocab < 2 || c.Vocab > 1<<20:
		return fmt.Errorf("tinylm: vocab = %d: must be in [2, 1048576]", c.Vocab)
	case c.FFN < 1 || c.FFN > 65536:
		return fmt.Errorf("tinylm: ffn = %d: must be in [1, 65536]", c.FFN)
	}
	return nil
}

// WeightBytes is the bytes of the float32 weights New makes for the
// shape: the embedding and the logits projection (vocab x hidden each),
// the logits' biases, the final layer norm and the position rates, and
// per layer the attention's and the feed-forward network's matrices,
// biases and layer norms.
func (c Config) WeightBytes() int64 {
	h, kvw, vocab, ffn := int64(c.Hidden), int64(c.KVWidth()), int64(c.Vocab), int64(c.FFN)
	layer := 2*h*h + 2*h*kvw + 2*h*ffn + 7*h + 2*kvw + ffn
	return 4 * (2*vocab*h + vocab + 3*h + int64(c.Layers)*layer)
}

// CacheBytesPerToken is a token's float32 K and V in a Cache, every layer.
func (c Config) CacheBytesPerToken() int64 { return 2 * 4 * int64(c.Layers) * int64(c.KVWidth()) }
