package kernels

import "math"

// Work is what one kernel call moves and computes, for the accelerator to
// turn into time: Bytes through device memory, Ops of arithmetic,
// SerialBytes that one thread block must stream by itself (a per-row
// floor: its SM's share of the memory bandwidth), and kernel Launches.
// BandwidthFraction is the share of the device's streaming bandwidth the
// kernel attains on its Bytes (0 means all of it); only fitted kernels set
// it.
type Work struct {
	Bytes, Ops, SerialBytes float64
	Launches                int
	BandwidthFraction       float64
}

// SampleStages says which stages a sampling call runs.
type SampleStages struct {
	TopK, TopP, Q, NeedLogits bool
	K                         int
}

// SampleWork is this package's fused operator on a batch: one pass over
// each row's logits (the rolling, pre-filtered top-k), softmax and top-p
// over the k survivors (or, without top-k, one more pass for the softmax
// denominator), q read for the kept prefix only, one index written per row
// (and the whole row with IsNeedLogits). One launch.
func SampleWork(batch, vocab int, dtype DType, s SampleStages) Work {
	b, v := float64(batch), float64(vocab)
	e := float64(dtype.Bytes())
	w := Work{Bytes: b * v * e, Ops: b * v, Launches: 1}
	kept := float64(s.K)
	if !s.TopK {
		w.Bytes += b * v * e // the softmax denominator's pass
		w.Ops += 20 * b * v  // an exponential per token
		kept = v
	}
	w.Ops += 30 * b * kept
	if s.Q {
		w.Bytes += b * kept * 4
	}
	w.Bytes += b * 8
	if s.NeedLogits {
		w.Bytes += b * v * 4
	}
	return w
}

// FlashInferRounds is the mean number of passes FlashInfer's rejection
// sampling (top-k/top-p) makes over a row: at most 32; 29 fits its
// published H100 timings (see docs/kernels.md).
const FlashInferRounds = 29

// FlashInferWork is rejection sampling as FlashInfer does it: one thread
// block per row, rounds of full passes over the row's float32
// probabilities (after a softmax pass), each round also summing.
func FlashInferWork(batch, vocab int) Work {
	row := float64(vocab) * 4
	b := float64(batch)
	return Work{Bytes: b * row * (FlashInferRounds + 2), Ops: b * float64(vocab) * (FlashInferRounds*3 + 20),
		SerialBytes: row * FlashInferRounds, Launches: 2}
}

// SortBasedWork is the PyTorch path (softmax, sort, cumsum, mask,
// renormalise, multinomial): per element a float32 value and an int64 index
// through a four-digit radix sort (read and write both each digit, plus
// its histogram), and eight more elementwise passes. Many launches. The
// segmented sort gives each row to one thread block: its passes over one
// row's key-value pairs are serial, and together the rows stream at only
// SortBandwidthFraction of a plain pass.
func SortBasedWork(batch, vocab int) Work {
	n := float64(batch) * float64(vocab)
	const radixPasses, keyValue = 4, 12.0
	bytes := n*(radixPasses*(2*keyValue+4)) + n*8*4
	return Work{Bytes: bytes, Ops: n * (radixPasses*8 + 40), Launches: 6 + 2*radixPasses, BandwidthFraction: SortBandwidthFraction,
		SerialBytes: float64(vocab) * radixPasses * keyValue}
}

// SortBandwidthFraction is fitted to the sort path measured on an H100 with
// PyTorch 2.11 (2.75 ms at batch 128, vocab 128,256, in a CUDA graph;
// accel/calibdata): the rows' segmented radix sorts together stream at about
// a third of a plain pass.
const SortBandwidthFraction = 0.36

// BeamWork is FasterTransformer v2.0's beam-search step for batch x beams
// sequences at decoding step step: add the cumulative log-probs (read the
// logits, write the scores), two-stage top-k (per block of 1,024 vocab
// entries, then across the blocks), the beam update, and the KV-cache
// reorder by parent beam with double buffering: every layer's K and V of
// every live beam up to step are copied (read and written).
func BeamWork(batch, beams, vocab, step, layers, hidden, elementBytes int) Work {
	rows := float64(batch * beams)
	v := float64(vocab)
	k := float64(2 * beams)
	blocks := math.Ceil(v / 1024)
	logits := rows * v * 4 * 2
	topk := rows*v*4 + rows*blocks*k*8*2
	return Work{Bytes: logits + topk + 2*ReorderBytes(batch, beams, step, layers, hidden, elementBytes),
		Ops: rows * v * (3 + math.Log2(k)), Launches: 5}
}

// ReorderBytes is the KV-cache reorder's copy size for one step:
// layers x batch x beams x step x hidden x 2 (K and V) x element bytes;
// BeamWork charges it twice, once read and once written.
func ReorderBytes(batch, beams, step, layers, hidden, elementBytes int) float64 {
	return float64(layers) * float64(batch) * float64(beams) * float64(step) * float64(hidden) * 2 * float64(elementBytes)
}
