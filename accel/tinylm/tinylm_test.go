package tinylm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLayerNormByHand(t *testing.T) {
	// mean 2.5, variance 1.25: (x - 2.5) / sqrt(1.250001)
	got := layerNorm([]float32{1, 2, 3, 4}, []float32{1, 1, 1, 1}, []float32{0, 0, 0, 0})
	assert.InDeltaSlice(t, []float32{-1.3416402, -0.4472134, 0.4472134, 1.3416402}, got, 1e-6)
	got = layerNorm([]float32{1, 2, 3, 4}, []float32{2, 2, 2, 2}, []float32{1, 1, 1, 1})
	assert.InDeltaSlice(t, []float32{-1.6832804, 0.1055732, 1.8944268, 3.6832804}, got, 1e-6)
}

func TestAttentionByHand(t *testing.T) {
	// one head of width 2 over two cached tokens: scores 1/sqrt(2) and 0,
	// softmax 0.66976 / 0.33024 (the sum carries FasterTransformer's 1e-6)
	m := &Model{cfg: Config{Hidden: 2, Heads: 1, KVHeads: 1}, hd: 2, kvw: 2, headsPerKV: 1, scale: float32(1 / math.Sqrt(2))}
	got := m.attend([]float32{1, 0}, []float32{1, 0, 0, 1}, []float32{1, 2, 3, 4}, 2)
	assert.InDeltaSlice(t, []float32{1.6604758, 2.6604751}, got, 1e-6)
}

func TestGroupedHeadsShareTheirKVHead(t *testing.T) {
	// four query heads over two KV heads: heads 0-1 read KV head 0, 2-3 KV head 1
	m := &Model{cfg: Config{Hidden: 4, Heads: 4, KVHeads: 2}, hd: 1, kvw: 2, headsPerKV: 2, scale: 1}
	got := m.attend([]float32{1, 1, 1, 1}, []float32{0, 0}, []float32{5, 7}, 1)
	assert.InDeltaSlice(t, []float32{5, 5, 7, 7}, got, 1e-5)
}

func TestPositionRatesByHand(t *testing.T) {
	// hidden 4: half 2, ln(10000)/(2-1): columns 0 and 2 turn at 1, 1 and 3 at 1e-4
	assert.InDeltaSlice(t, []float32{1, 1e-4, 1, 1e-4}, positionRates(4), 1e-9)
}

func TestAffineByHand(t *testing.T) {
	// [1 2] x [[1 2 3] [4 5 6]] + [1 1 1]
	assert.Equal(t, []float32{10, 13, 16}, affine([]float32{1, 2}, []float32{1, 2, 3, 4, 5, 6}, []float32{1, 1, 1}))
}

// configs are small shapes, multi-head, grouped and single-head.
var configs = []Config{
	DefaultConfig(),
	{Layers: 1, Hidden: 8, Heads: 2, KVHeads: 2, Vocab: 16, FFN: 12, Seed: 7},
	{Layers: 3, Hidden: 16, Heads: 4, KVHeads: 1, Vocab: 40, FFN: 32, Seed: 9},
}

func randomTokens(r *rand.Rand, n, vocab int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(r.IntN(vocab))
	}
	return out
}

func TestMatchesFloat64Reference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, cfg := range configs {
		m, err := New(cfg)
		require.NoError(t, err)
		tokens := randomTokens(r, 12, cfg.Vocab)
		got, err := m.Prefill(m.NewCache(), tokens)
		require.NoError(t, err)
		want := reference(m, tokens)
		for i := range want {
			assert.InDelta(t, want[i], float64(got[i]), 2e-4*(1+math.Abs(want[i])), "%+v logit %d", cfg, i)
		}
	}
}

func TestChunkedPrefillIsBitIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, cfg := range configs {
		m, err := New(cfg)
		require.NoError(t, err)
		for trial := range 20 {
			tokens := randomTokens(r, 1+r.IntN(40), cfg.Vocab)
			whole := m.NewCache()
			want, err := m.Prefill(whole, tokens)
			require.NoError(t, err)
			chunked := m.NewCache()
			var got []float32
			for start := 0; start < len(tokens); {
				end := min(len(tokens), start+1+r.IntN(8))
				got, err = m.Prefill(chunked, tokens[start:end])
				require.NoError(t, err)
				start = end
			}
			require.Equal(t, want, got, "%+v trial %d", cfg, trial)
			require.Equal(t, whole, chunked, "%+v trial %d", cfg, trial)
		}
	}
}

func TestCloneAndTruncate(t *testing.T) {
	m, err := New(DefaultConfig())
	require.NoError(t, err)
	tokens := randomTokens(rand.New(rand.NewPCG(5, 6)), 10, 512)
	c := m.NewCache()
	_, err = m.Prefill(c, tokens)
	require.NoError(t, err)
	head := c.Clone(6)
	require.Equal(t, 6, head.Len)
	wantTail, err := m.Prefill(head.Clone(6), tokens[6:])
	require.NoError(t, err)
	c.Truncate(6)
	require.Equal(t, head, c)
	gotTail, err := m.Prefill(c, tokens[6:])
	require.NoError(t, err)
	require.Equal(t, wantTail, gotTail)
}

func TestBatchEqualsOneByOne(t *testing.T) {
	m, err := New(DefaultConfig())
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(7, 8))
	prompts := [][]uint32{randomTokens(r, 5, 512), randomTokens(r, 1, 512), randomTokens(r, 9, 512)}
	caches := []*Cache{m.NewCache(), m.NewCache(), m.NewCache()}
	got, err := m.Batch(caches, prompts)
	require.NoError(t, err)
	for i, p := range prompts {
		want, err := m.Prefill(m.NewCache(), p)
		require.NoError(t, err)
		require.Equal(t, want, got[i])
	}
}

func TestErrors(t *testing.T) {
	m, err := New(DefaultConfig())
	require.NoError(t, err)
	c := m.NewCache()
	_, err = m.Prefill(c, []uint32{1, 512})
	require.EqualError(t, err, "tinylm: token 512 (position 1) outside the vocab of 512")
	require.Equal(t, 0, c.Len, "nothing appended")
	_, err = m.Prefill(c, nil)
	require.EqualError(t, err, "tinylm: prefill of no tokens")
	_, err = m.Batch([]*Cache{c}, nil)
	require.EqualError(t, err, "tinylm: 1 caches for 0 token lists")
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Layers: 0, Hidden: 64, Heads: 4, KVHeads: 2, Vocab: 512, FFN: 256}, "tinylm: layers = 0: must be in [1, 64]"},
		{Config{Layers: 2, Hidden: 63, Heads: 4, KVHeads: 2, Vocab: 512, FFN: 256}, "tinylm: hidden = 63: must be even, in [2, 4096]"},
		{Config{Layers: 2, Hidden: 64, Heads: 3, KVHeads: 1, Vocab: 512, FFN: 256}, "tinylm: heads = 3: must be at least 1 and divide hidden = 64"},
		{Config{Layers: 2, Hidden: 64, Heads: 4, KVHeads: 3, Vocab: 512, FFN: 256}, "tinylm: kv_heads = 3: must be at least 1 and divide heads = 4"},
		{Config{Layers: 2, Hidden: 64, Heads: 4, KVHeads: 2, Vocab: 1, FFN: 256}, "tinylm: vocab = 1: must be in [2, 1048576]"},
		{Config{Layers: 2, Hidden: 64, Heads: 4, KVHeads: 2, Vocab: 512, FFN: 0}, "tinylm: ffn = 0: must be in [1, 65536]"},
	} {
		_, err := New(tc.cfg)
		assert.EqualError(t, err, tc.want)
	}
}
