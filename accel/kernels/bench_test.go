package kernels

import (
	"math/rand/v2"
	"testing"
	"time"
)

// The benchmark shapes of the issue: the sampling operator at batch 64 and
// Qwen2.5's 151,936-token vocab, beam search at batch 8 x 4 beams and
// Llama-3's 128,256.
const (
	sampleBatch, sampleVocab = 64, 151936
	beamBatch, beamBeams     = 8, 4
	beamVocab                = 128256
)

func benchLogits(n int) []float32 {
	r := rand.New(rand.NewPCG(1, 1))
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64() * 4)
	}
	return out
}

func sampleBenchInput() SampleInput {
	in := SampleInput{Batch: sampleBatch, Vocab: sampleVocab, Logits: benchLogits(sampleBatch * sampleVocab), Eps: 1e-8,
		TopKGuess: 32, KsMax: 1024, InputIsLogits: true, Q: benchLogits(sampleBatch * sampleVocab)}
	for range sampleBatch {
		in.TopK, in.TopP = append(in.TopK, 50), append(in.TopP, 0.9)
	}
	return in
}

// report gives ns/op (by the framework) and the logits rate in GB/s.
func report(b *testing.B, bytes int) {
	b.ReportMetric(float64(bytes)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// baselineClock times the stream baseline interleaved with a kernel's
// iterations (timer stopped), so the ratio holds on a noisy machine where
// two separate benchmarks see different clocks.
type baselineClock struct {
	values []float32
	spent  time.Duration
}

// tick runs one baseline pass outside the benchmark's timer.
func (c *baselineClock) tick(b *testing.B) {
	b.StopTimer()
	start := time.Now()
	sink += streamSum(c.values)
	c.spent += time.Since(start)
	b.StartTimer()
}

// report adds the kernel's time over the baseline's (x-stream).
func (c *baselineClock) report(b *testing.B) {
	b.ReportMetric(b.Elapsed().Seconds()/c.spent.Seconds(), "x-stream")
}

var sink float32

// streamSum is one read pass over values: the bound a one-pass kernel
// approaches.
func streamSum(values []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(values); i += 4 {
		s0 += values[i]
		s1 += values[i+1]
		s2 += values[i+2]
		s3 += values[i+3]
	}
	for ; i < len(values); i++ {
		s0 += values[i]
	}
	return s0 + s1 + s2 + s3
}

func BenchmarkStreamBaseline(b *testing.B) {
	logits := benchLogits(sampleBatch * sampleVocab)
	for b.Loop() {
		sink += streamSum(logits)
	}
	report(b, 4*len(logits))
}

func BenchmarkTopKTopPSample(b *testing.B) {
	in := sampleBenchInput()
	clock := baselineClock{values: in.Logits}
	b.ReportAllocs()
	for b.Loop() {
		clock.tick(b)
		if _, err := TopKTopPSampleV2(in, false); err != nil {
			b.Fatal(err)
		}
	}
	report(b, 4*len(in.Logits))
	clock.report(b)
}

// BenchmarkTopKTopPSampleFullSort is the straightforward implementation:
// sort every row whole, then filter.
func BenchmarkTopKTopPSampleFullSort(b *testing.B) {
	in := sampleBenchInput()
	for b.Loop() {
		for r := range in.Batch {
			ids, probs := refV2Row(&in, r)
			sink += float32(ids[refPick(probs, in.Q[r*in.Vocab:], in.Eps)])
		}
	}
	report(b, 4*len(in.Logits))
}

// beamBenchInput gives each request's beams' log-probabilities.
func beamBenchInput() ([][][]float32, []float32, BeamParams, []float32) {
	flat := benchLogits(beamBatch * beamBeams * beamVocab)
	for start := 0; start < len(flat); start += beamVocab {
		LogSoftmax(flat[start:start+beamVocab], flat[start:start])
	}
	rows := make([][][]float32, beamBatch)
	for r := range rows {
		for j := range beamBeams {
			start := (r*beamBeams + j) * beamVocab
			rows[r] = append(rows[r], flat[start:start+beamVocab])
		}
	}
	scores := []float32{0, -1.5, -2, -3.25}
	return rows, scores, BeamParams{Vocab: beamVocab, NumBeams: beamBeams, EOS: []int{2}, NumReturnSequences: 1}, flat
}

func BenchmarkBeamStep(b *testing.B) {
	rows, scores, p, flat := beamBenchInput()
	clock := baselineClock{values: flat}
	b.ReportAllocs()
	for b.Loop() {
		clock.tick(b)
		for _, req := range rows {
			if _, err := BeamStep(req, scores, &p, false); err != nil {
				b.Fatal(err)
			}
		}
	}
	report(b, 4*beamBatch*beamBeams*beamVocab)
	clock.report(b)
}

func BenchmarkBeamStepStreamBaseline(b *testing.B) {
	logits := benchLogits(beamBatch * beamBeams * beamVocab)
	for b.Loop() {
		sink += streamSum(logits)
	}
	report(b, 4*len(logits))
}
