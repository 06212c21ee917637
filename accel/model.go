// Package accel models the accelerator that runs the model: model and
// device presets, a roofline cost model of prefill and decode iterations
// calibrated against measured runs, the device's paged KV memory, the
// decoding-kernel cost hook and a continuous-batching executor.
package accel

import (
	"fmt"
	"sort"
	"strings"
)

// Attention is how a model caches attention state.
type Attention string

const (
	// GQA caches K and V per KV head (multi-head attention when KV heads
	// equal heads).
	GQA Attention = "gqa"
	// MLA caches one compressed latent per token and layer (DeepSeek).
	MLA Attention = "mla"
)

// Model is a decoder-only transformer's shape, as in its config.json.
type Model struct {
	Name                           string
	Layers, Hidden, Heads, KVHeads int
	HeadDim, Intermediate, Vocab   int
	// Params is the total parameter count; ActiveParams the parameters a
	// token uses (less than Params for a mixture of experts).
	Params, ActiveParams int64
	Attention            Attention
	// KVLoraRank and RopeDim: MLA caches KVLoraRank + RopeDim per layer.
	KVLoraRank, RopeDim int
	// Experts and ExpertsPerToken describe a mixture of experts (0 if dense).
	Experts, ExpertsPerToken int
	// PlainMLP marks a two-matrix MLP (up, then down: BLOOM, GPT); the
	// default is the gated MLP of three (gate, up, down).
	PlainMLP bool
	// ParallelAttention marks a layer whose attention and MLP read the
	// same input and add their outputs to it together (config.json's
	// parallel_attn: Falcon), so tensor parallelism sums both partial
	// outputs in one all-reduce a layer; the default is attention, then
	// the MLP, each reduced on its own (two a layer).
	ParallelAttention bool
	// ContextTokens is the context window (config.json's
	// max_position_embeddings): no request's prompt and output may pass
	// it. 0: no window.
	ContextTokens int64
}

// DType is the element type of weights and KV cache.
type DType string

// The supported types.
const (
	BF16 DType = "bf16"
	FP8  DType = "fp8"
)

// Bytes returns the size of one element.
func (d DType) Bytes() int64 {
	if d == FP8 {
		return 1
	}
	return 2
}

// ParseDType reads a dtype name.
func ParseDType(s string) (DType, error) {
	switch DType(s) {
	case BF16, FP8:
		return DType(s), nil
	}
	return "", fmt.Errorf("unknown dtype %q: valid dtypes are bf16, fp8", s)
}

// KVWidth returns the elements cached per token and layer for K and for V.
func (m Model) KVWidth() (k, v int) {
	if m.Attention == MLA {
		return m.KVLoraRank + m.RopeDim, 0
	}
	return m.KVHeads * m.HeadDim, m.KVHeads * m.HeadDim
}

// KVBytesPerToken is the KV cache of one token in all layers.
func (m Model) KVBytesPerToken(d DType) int64 {
	k, v := m.KVWidth()
	return int64(m.Layers) * int64(k+v) * d.Bytes()
}

// Validate checks the shape; tp must divide the head counts.
func (m Model) Validate(tp int) error {
	if m.Layers < 1 || m.Hidden < 1 || m.Heads < 1 || m.Vocab < 1 || m.Params < 1 || m.Intermediate < 1 {
		return fmt.Errorf("model %q: layers, hidden, heads, intermediate, vocab and params must be positive", m.Name)
	}
	if m.ActiveParams < 1 || m.ActiveParams > m.Params {
		return fmt.Errorf("model %q: active params %d must be in [1, params %d]", m.Name, m.ActiveParams, m.Params)
	}
	switch m.Attention {
	case GQA:
		if m.KVHeads < 1 || m.HeadDim < 1 || m.Heads%m.KVHeads != 0 {
			return fmt.Errorf("model %q: %d heads must be a multiple of %d KV heads (head_dim %d)", m.Name, m.Heads, m.KVHeads, m.HeadDim)
		}
		if tp < 1 || m.Heads%tp != 0 || (m.KVHeads%tp != 0 && tp%m.KVHeads != 0) {
			return fmt.Errorf("model %q: tp = %d must divide its %d heads and its %d KV heads (or be a multiple of them)", m.Name, tp, m.Heads, m.KVHeads)
		}
	case MLA:
		if m.KVLoraRank < 1 || m.RopeDim < 0 {
			return fmt.Errorf("model %q: MLA needs kv_lora_rank >= 1", m.Name)
		}
		if tp < 1 || m.Heads%tp != 0 {
			return fmt.Errorf("model %q: tp = %d must divide its %d heads", m.Name, tp, m.Heads)
		}
	default:
		return fmt.Errorf("model %q: attention %q: must be gqa or mla", m.Name, m.Attention)
	}
	return nil
}

// linearParamsPerLayer is the weights one layer multiplies by (attention
// projections and the MLP's matrices), for a dense GQA model.
func (m Model) linearParamsPerLayer() float64 {
	h, kv := float64(m.Hidden), float64(m.KVHeads*m.HeadDim)
	mlp := 3.0
	if m.PlainMLP {
		mlp = 2
	}
	return 2*h*h + 2*h*kv + mlp*h*float64(m.Intermediate)
}

// attentionFLOPsPerPair is the attention arithmetic of one query token on
// one context token in one layer (QK^T and AV): 4 x heads x head_dim for
// GQA; with MLA's absorbed weights, 2 x heads x (latent + rope + latent).
func (m Model) attentionFLOPsPerPair() float64 {
	if m.Attention == MLA {
		return 2 * float64(m.Heads) * float64(2*m.KVLoraRank+m.RopeDim)
	}
	return 4 * float64(m.Heads) * float64(m.HeadDim)
}

func gqa(name string, layers, hidden, heads, kvHeads, inter, vocab int, params int64) Model {
	return Model{Name: name, Layers: layers, Hidden: hidden, Heads: heads, KVHeads: kvHeads, HeadDim: hidden / heads,
		Intermediate: inter, Vocab: vocab, Params: params, ActiveParams: params, Attention: GQA}
}

// plainMLP marks m's MLP as two matrices.
func plainMLP(m Model) Model {
	m.PlainMLP = true
	return m
}

// parallelAttention marks m's attention and MLP as one parallel block.
func parallelAttention(m Model) Model {
	m.ParallelAttention = true
	return m
}

// allReducesPerLayer is the tensor-parallel all-reduces of one layer's
// activations: one for a parallel block, else one after the attention
// and one after the MLP.
func (m Model) allReducesPerLayer() int {
	if m.ParallelAttention {
		return 1
	}
	return 2
}

// window sets m's context window.
func window(m Model, tokens int64) Model {
	m.ContextTokens = tokens
	return m
}

// The presets, from each model's config.json (Hugging Face) and published
// parameter counts; docs/accel.md cites each.
var modelPresets = map[string]Model{
	"llama-2-7b":  window(gqa("llama-2-7b", 32, 4096, 32, 32, 11008, 32000, 6_738_415_616), 4096),
	"llama-2-13b": window(gqa("llama-2-13b", 40, 5120, 40, 40, 13824, 32000, 13_015_864_320), 4096),
	"llama-2-70b": window(gqa("llama-2-70b", 80, 8192, 64, 8, 28672, 32000, 68_976_648_192), 4096),
	"llama-65b":   window(gqa("llama-65b", 80, 8192, 64, 64, 22016, 32000, 65_285_660_672), 2048),
	"llama-3-8b":  window(gqa("llama-3-8b", 32, 4096, 32, 8, 14336, 128256, 8_030_261_248), 8192),
	"llama-3-70b": window(gqa("llama-3-70b", 80, 8192, 64, 8, 28672, 128256, 70_553_706_496), 8192),
	"qwen2.5-7b":  window(gqa("qwen2.5-7b", 28, 3584, 28, 4, 18944, 152064, 7_615_616_512), 32768),
	"qwen2.5-72b": window(gqa("qwen2.5-72b", 80, 8192, 64, 8, 29568, 152064, 72_706_203_648), 32768),
	"falcon-40b":  window(parallelAttention(plainMLP(gqa("falcon-40b", 60, 8192, 128, 8, 32768, 65024, 41_833_988_096))), 2048),
	"bloom-176b":  window(plainMLP(gqa("bloom-176b", 70, 14336, 112, 112, 57344, 250880, 176_247_271_424)), 2048),
	"deepseek-v3": {Name: "deepseek-v3", Layers: 61, Hidden: 7168, Heads: 128, KVHeads: 128, HeadDim: 128,
		Intermediate: 18432, Vocab: 129280, Params: 671_000_000_000, ActiveParams: 37_000_000_000,
		Attention: MLA, KVLoraRank: 512, RopeDim: 64, Experts: 256, ExpertsPerToken: 8, ContextTokens: 163840},
}

// ModelPreset returns a model by name; an unknown name lists the valid ones.
func ModelPreset(name string) (Model, error) {
	if m, ok := modelPresets[name]; ok {
		return m, nil
	}
	return Model{}, fmt.Errorf("unknown model %q: valid models are %s, or custom", name, strings.Join(ModelNames(), ", "))
}

// ModelNames lists the presets.
func ModelNames() []string {
	names := make([]string, 0, len(modelPresets))
	for n := range modelPresets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
