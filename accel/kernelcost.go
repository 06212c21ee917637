package accel

import (
	"github.com/kvcosim/kvcosim/accel/kernels"
	"github.com/kvcosim/kvcosim/internal/names"
	"github.com/kvcosim/kvcosim/sim"
)

// DecodingKernel is a decode step's kernel by name (accelerator.decoding.kernel):
// how its cost is made for a model's KV cache from the decoding settings.
type DecodingKernel struct {
	Name string
	Cost func(d DecodingSettings, m Model, kv DType) KernelCost
}

// DecodingSettings are the settings a decoding kernel's cost may read
// (accelerator.decoding.*): top-k (0: none), top-p, and beams a request.
type DecodingSettings struct {
	TopK  int
	TopP  bool
	Beams int
}

// DecodingKernels are the decode step's kernels: a new one is its
// KernelCost and one row here.
var DecodingKernels = []DecodingKernel{
	{"sample", func(d DecodingSettings, _ Model, _ DType) KernelCost { return Sampling{TopK: d.TopK, TopP: d.TopP} }},
	{"beam", func(d DecodingSettings, m Model, kv DType) KernelCost { return NewBeamSearch(m, d.Beams, kv) }},
}

// ParseDecodingKernel finds a decoding kernel by name; an unknown name's
// error lists the kernels.
func ParseDecodingKernel(name string) (DecodingKernel, error) {
	return names.Find("decoding kernel", DecodingKernels, func(k DecodingKernel) string { return k.Name }, name)
}

// KernelCost gives the work of the decoding kernels (sampling or beam
// search) that an iteration runs for its sequences; the node turns it into
// time with its bandwidth, compute and launch overhead. meanContext is the
// sequences' mean context length (the step of a beam search).
type KernelCost interface {
	DecodeStep(sequences, vocab int, meanContext int64) kernels.Work
}

// Sampling is the fused TopK-TopP-Sample operator (kernels.SampleWork),
// the patent's accelerator's sampler: top-k, top-p and a q draw per step.
type Sampling struct {
	TopK int
	TopP bool
}

// DefaultSampling is top-k 50 with top-p and q.
func DefaultSampling() Sampling { return Sampling{TopK: 50, TopP: true} }

// DecodeStep returns the operator's work for the sequences.
func (s Sampling) DecodeStep(sequences, vocab int, _ int64) kernels.Work {
	return kernels.SampleWork(sequences, vocab, kernels.Float32,
		kernels.SampleStages{TopK: s.TopK > 0, K: s.TopK, TopP: s.TopP, Q: true})
}

// BeamSearch is FasterTransformer v2.0's beam kernels with the KV-cache
// reorder: its copy traffic reaches the device memory through the node's
// memory time. KVWidth is the K (or V) elements per token and layer.
type BeamSearch struct {
	Beams, Layers, KVWidth int
	KVDType                DType
}

// NewBeamSearch is beam search with the given beams over the model's KV
// cache.
func NewBeamSearch(m Model, beams int, kv DType) BeamSearch {
	k, _ := m.KVWidth()
	return BeamSearch{Beams: beams, Layers: m.Layers, KVWidth: k, KVDType: kv}
}

// DecodeStep returns the beam kernels' work for the sequences, each a
// request searching with Beams beams.
func (b BeamSearch) DecodeStep(sequences, vocab int, meanContext int64) kernels.Work {
	return kernels.BeamWork(sequences, b.Beams, vocab, int(meanContext), b.Layers, b.KVWidth, int(b.KVDType.Bytes()))
}

// KernelTime turns kernel work into time on the device: the larger of its
// memory time (at the decode memory efficiency) and compute time, plus the
// bytes one thread block streams alone at its SM's share of the bandwidth,
// plus the launches.
func (d Device) KernelTime(w kernels.Work) sim.Time {
	bw := float64(d.MemBandwidth)
	fraction := w.BandwidthFraction
	if fraction == 0 {
		fraction = 1
	}
	memory := w.Bytes / (bw * d.MemoryEfficiency * fraction)
	compute := w.Ops / d.PeakFLOPS
	serial := w.SerialBytes / (bw / float64(max(1, d.SMs)))
	return sim.TimeOf((max(memory, compute)+serial)*1e12) + sim.Time(w.Launches)*d.KernelLaunch
}

// SortSampling is PyTorch's sort-based top-k/top-p path
// (kernels.SortBasedWork): the sampler of vLLM 0.x and of Hugging Face.
type SortSampling struct{}

// DecodeStep returns the sort path's work for the sequences.
func (SortSampling) DecodeStep(sequences, vocab int, _ int64) kernels.Work {
	return kernels.SortBasedWork(sequences, vocab)
}
