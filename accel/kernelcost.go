package accel

import "github.com/kvcosim/kvcosim/sim"

// KernelCost prices the decoding kernels (sampling or beam search) that a
// decode iteration runs for its sequences. The kernels package provides
// the real cost models; FlashInferSampling is the placeholder.
type KernelCost interface {
	DecodeStep(sequences, vocab int) sim.Time
}

// FlashInferSampling is a placeholder kernel cost from FlashInfer's
// published H100 sampling figures at a 128 K vocab: about 0.55 ms plus
// 0.0065 ms per sequence, scaled linearly with the vocab.
type FlashInferSampling struct{}

// DecodeStep returns the sampling time of one decode step.
func (FlashInferSampling) DecodeStep(sequences, vocab int) sim.Time {
	scale := float64(vocab) / 131072
	return sim.TimeOf((550e6 + 6.5e6*float64(sequences)) * scale)
}
