package accel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/kvcosim/kvcosim/internal/golden"
)

func TestKVBytesPerToken(t *testing.T) {
	want := map[string]int64{"llama-2-7b": 524_288, "llama-2-70b": 327_680, "llama-3-8b": 131_072,
		"llama-3-70b": 327_680, "qwen2.5-7b": 57_344, "qwen2.5-72b": 327_680, "deepseek-v3": 70_272, "bloom-176b": 4_014_080,
		"llama-2-13b": 819_200, "llama-65b": 2_621_440, "falcon-40b": 122_880} // CachedAttention quotes 0.78, 2.5 and 0.12 MB
	require.Len(t, want, len(ModelNames()))
	for name, bytes := range want {
		m, err := ModelPreset(name)
		require.NoError(t, err)
		assert.Equal(t, bytes, m.KVBytesPerToken(BF16), name)
		assert.Equal(t, bytes/2, m.KVBytesPerToken(FP8), name)
		assert.NoError(t, m.Validate(1), name)
	}
}

func TestModelRejects(t *testing.T) {
	_, err := ModelPreset("gpt-5")
	assert.ErrorContains(t, err, "valid models are bloom-176b, deepseek-v3, falcon-40b, llama-2-13b, llama-2-70b")
	m, _ := ModelPreset("llama-3-8b")
	assert.ErrorContains(t, m.Validate(3), "tp = 3 must divide its 32 heads")
	q, _ := ModelPreset("qwen2.5-7b")
	assert.ErrorContains(t, q.Validate(8), "tp = 8 must divide its 28 heads")
	bad := m
	bad.KVHeads = 5
	assert.ErrorContains(t, bad.Validate(1), "multiple of 5 KV heads")
	_, err = ParseDType("int4")
	assert.ErrorContains(t, err, "valid dtypes are bf16, fp8")
}

func TestLinearParamsMatchTheCount(t *testing.T) {
	// the per-layer weights plus embeddings come within 1 % of the count
	for _, name := range []string{"llama-2-7b", "llama-2-70b", "llama-3-8b", "llama-3-70b", "qwen2.5-72b"} {
		m, _ := ModelPreset(name)
		total := float64(m.Layers)*m.linearParamsPerLayer() + 2*float64(m.Hidden)*float64(m.Vocab)
		assert.InDelta(t, 1, total/float64(m.Params), 0.01, name)
	}
}

// BLOOM's MLP is two matrices of hidden x 4 hidden: its linear layers are
// 12 hidden^2 per layer, within 2 % of its parameters less the embedding.
func TestPlainMLPCountsTwoMatrices(t *testing.T) {
	m, err := ModelPreset("bloom-176b")
	require.NoError(t, err)
	h := float64(m.Hidden)
	assert.Equal(t, 12*h*h, m.linearParamsPerLayer())
	assert.InEpsilon(t, float64(m.Params)-h*float64(m.Vocab), m.linearParamsPerToken(), 0.02)
}

// TestEveryPresetHasItsWindow: a preset without a context window would let
// histories grow without bound.
func TestEveryPresetHasItsWindow(t *testing.T) {
	for _, name := range ModelNames() {
		m, err := ModelPreset(name)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, m.ContextTokens, int64(2048), name)
	}
}
