package tinylm

import (
	"math"
	"math/rand/v2"
)

// layer holds one decoder layer's weights; matrices are row-major
// [in][out], so y[j] = sum over i of x[i] * w[i*out+j].
type layer struct {
	norm1Gain, norm1Bias []float32
	wq, wk, wv, wo       []float32
	bq, bk, bv, bo       []float32
	norm2Gain, norm2Bias []float32
	w1, b1, w2, b2       []float32
}

// Model is the network's weights, generated from the configuration's seed.
type Model struct {
	cfg                      Config
	embedding                []float32 // [vocab][hidden]
	layers                   []layer
	finalGain, finalBias     []float32
	logitsW, logitsB         []float32 // [hidden][vocab], [vocab]
	positionRate             []float32 // the sine encoding's per-column rate
	scale, embeddingScale    float32
	headsPerKV, hd, kvw, ffn int
}

// New generates a model: every weight uniform in +-1/sqrt(fan-in) from a
// PCG stream of the seed, layer-norm gains 1 and biases small.
func New(cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x7469_6e79_6c6d)) // "tinylm"
	uniform := func(n, fanIn int) []float32 {
		bound := 1 / math.Sqrt(float64(fanIn))
		out := make([]float32, n)
		for i := range out {
			out[i] = float32((2*rng.Float64() - 1) * bound)
		}
		return out
	}
	ones := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = 1
		}
		return out
	}
	h, kvw := cfg.Hidden, cfg.KVWidth()
	m := &Model{cfg: cfg, embedding: uniform(cfg.Vocab*h, 1), finalGain: ones(h), finalBias: uniform(h, 100),
		logitsW: uniform(h*cfg.Vocab, h), logitsB: uniform(cfg.Vocab, 100),
		scale: float32(1 / math.Sqrt(float64(cfg.HeadDim()))), embeddingScale: float32(math.Sqrt(float64(h))),
		headsPerKV: cfg.Heads / cfg.KVHeads, hd: cfg.HeadDim(), kvw: kvw, ffn: cfg.FFN}
	for range cfg.Layers {
		m.layers = append(m.layers, layer{
			norm1Gain: ones(h), norm1Bias: uniform(h, 100),
			wq: uniform(h*h, h), wk: uniform(h*kvw, h), wv: uniform(h*kvw, h), wo: uniform(h*h, h),
			bq: uniform(h, 100), bk: uniform(kvw, 100), bv: uniform(kvw, 100), bo: uniform(h, 100),
			norm2Gain: ones(h), norm2Bias: uniform(h, 100),
			w1: uniform(h*cfg.FFN, h), b1: uniform(cfg.FFN, 100), w2: uniform(cfg.FFN*h, cfg.FFN), b2: uniform(h, 100)})
	}
	m.positionRate = positionRates(h)
	return m, nil
}

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// positionRates are FasterTransformer's inverse timescales: column i (and
// i + hidden/2) turns at exp(-(i mod hidden/2) x ln(10000)/(hidden/2 - 1)).
func positionRates(hidden int) []float32 {
	half := hidden / 2
	step := math.Log(10000) / math.Max(float64(half-1), 1)
	out := make([]float32, hidden)
	for i := range out {
		out[i] = float32(math.Exp(-float64(i%half) * step))
	}
	return out
}
