package kernels

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func validSample() SampleInput {
	return SampleInput{Batch: 2, Vocab: 4, Logits: []float32{1, 2, 3, 4, 4, 3, 2, 1}, TopK: []int32{2, 2},
		TopP: []float32{0.9, 0.9}, TopKGuess: 2, KsMax: 4, InputIsLogits: true}
}

func TestSampleRejectsBadInput(t *testing.T) {
	nan := float32(math.NaN())
	cases := []struct {
		name   string
		change func(*SampleInput)
		want   string
	}{
		{"negative vocab", func(in *SampleInput) { in.Vocab = -4 }, "vocab = -4"},
		{"zero batch", func(in *SampleInput) { in.Batch = 0 }, "batch = 0"},
		{"logits shape", func(in *SampleInput) { in.Logits = in.Logits[:7] }, "logits: 7 values, want batch x vocab = 8"},
		{"top_k shape", func(in *SampleInput) { in.TopK = in.TopK[:1] }, "top_k: 1 values"},
		{"top_p shape", func(in *SampleInput) { in.TopP = nil }, "top_p: 0 values"},
		{"q shape", func(in *SampleInput) { in.Q = make([]float32, 4) }, "q: 4 values, want batch x vocab = 8"},
		{"min_ps shape", func(in *SampleInput) { in.MinPs = []float32{0.1} }, "min_ps: 1 values"},
		{"top_k_guess", func(in *SampleInput) { in.TopKGuess = 0 }, "top_k_guess = 0"},
		{"NaN with top-k", func(in *SampleInput) { in.Logits[6] = nan }, "logits[1][2] is NaN"},
		{"NaN in the top-k seed", func(in *SampleInput) { in.Logits[0] = nan }, "logits[0][0] is NaN"},
		{"NaN with top-p only", func(in *SampleInput) { in.TopK[1], in.Logits[7] = 0, nan }, "logits[1][3] is NaN"},
		{"NaN with nothing", func(in *SampleInput) { in.TopK[0], in.TopP[0], in.Logits[1] = 0, 1, nan }, "logits[0][1] is NaN"},
	}
	for _, c := range cases {
		for _, op := range []struct {
			name string
			run  func(SampleInput, bool) (SampleOutput, error)
		}{{"v2", TopKTopPSampleV2}, {"v1", TopKTopPSampleV1}} {
			if op.name == "v1" && c.name == "min_ps shape" {
				continue // V1 has no min_ps
			}
			for _, full := range []bool{false, true} {
				t.Run(c.name+"/"+op.name, func(t *testing.T) {
					in := validSample()
					c.change(&in)
					_, err := op.run(in, full)
					require.Error(t, err)
					assert.Contains(t, err.Error(), c.want)
				})
			}
		}
	}
	_, err := TopKTopPSampleV2(validSample(), false)
	assert.NoError(t, err, "the unchanged input is valid")
}

func TestBeamRejectsBadInput(t *testing.T) {
	valid := BeamParams{Vocab: 8, NumBeams: 2, EOS: []int{1}, NumReturnSequences: 1, MaxLength: 4}
	model := ToyModel{Seed: 1, Vocab: 8, Scale: 1, EOS: []int{1}}
	cases := []struct {
		name   string
		change func(*BeamParams)
		model  Model
		want   string
	}{
		{"num_beams < 1", func(p *BeamParams) { p.NumBeams = 0 }, model.Logits, "num_beams = 0"},
		{"vocab < 2 x num_beams", func(p *BeamParams) { p.NumBeams = 5 }, model.Logits, "vocab = 8: must be at least 2 x num_beams = 10"},
		{"num_return_sequences", func(p *BeamParams) { p.NumReturnSequences = 3 }, model.Logits, "num_return_sequences = 3"},
		{"eos outside vocab", func(p *BeamParams) { p.EOS = []int{9} }, model.Logits, "eos/pad token 9"},
		{"model logits length", func(*BeamParams) {}, func([]int) []float32 { return make([]float32, 7) }, "7 values, want vocab = 8"},
		{"NaN logits", func(*BeamParams) {}, func(tokens []int) []float32 {
			l := model.Logits(tokens)
			l[5] = float32(math.NaN())
			return l
		}, "request 0, beam 0 at length 2: logits[5] is NaN"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := valid
			c.change(&p)
			_, err := BeamSearch(p, [][]int{{3, 4}}, c.model)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	_, err := BeamSearch(valid, [][]int{{3, 4}}, model.Logits)
	assert.NoError(t, err, "the unchanged search is valid")
}

func TestBeamStepRejectsBadShapes(t *testing.T) {
	p := BeamParams{Vocab: 4, NumBeams: 2, EOS: []int{1}, NumReturnSequences: 1}
	row := []float32{-1, -2, -3, -4}
	nan := []float32{-1, -2, float32(math.NaN()), -4}
	for _, c := range []struct {
		name     string
		logProbs [][]float32
		scores   []float32
		want     string
	}{
		{"beams", [][]float32{row}, []float32{0, 0}, "1 beams and 2 beam scores, want num_beams = 2"},
		{"scores", [][]float32{row, row}, []float32{0}, "2 beams and 1 beam scores"},
		{"vocab", [][]float32{row, row[:3]}, []float32{0, 0}, "log_probs[1]: 3 values, want vocab = 4"},
		{"NaN", [][]float32{row, nan}, []float32{0, 0}, "log_probs[1][2] is NaN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := BeamStep(c.logProbs, c.scores, &p, false)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
