package kernels_test

import (
	"fmt"

	"github.com/kvcosim/kvcosim/accel/kernels"
)

// Top-k 3 keeps ids 1, 3 and 5 (3 before 5: equal logits keep the lower
// index first), with probabilities 0.452, 0.274, 0.274. Top-p 0.5 keeps a
// token while the sum *before* it is below 0.5: id 3 stays (0.452), id 5
// goes (0.726). Without q the operator picks the most probable kept token.
func ExampleTopKTopPSampleV2() {
	in := kernels.SampleInput{Batch: 1, Vocab: 6, Logits: []float32{0.5, 3, 1, 2.5, -1, 2.5},
		TopK: []int32{3}, TopP: []float32{0.5}, TopKGuess: 4, KsMax: 8, InputIsLogits: true, IsNeedSampleResult: true}
	out, err := kernels.TopKTopPSampleV2(in, false)
	if err != nil {
		panic(err)
	}
	fmt.Println("kept ids", out.LogitsIdx[0])
	in.IsNeedSampleResult = false
	out, _ = kernels.TopKTopPSampleV2(in, false)
	fmt.Println("selected", out.SelectIdx[0])
	// Output:
	// kept ids [1 3]
	// selected 1
}

// Beam search over FORMAT.md's toy model: two beams, at most two new
// tokens. The best hypothesis ended with EOS (2): a hypothesis stores no
// EOS, finalize appends it back, and the score divides the sum of the
// log-probs by the two generated tokens (EOS counted).
func ExampleBeamSearch() {
	model := kernels.ToyModel{Seed: 7, Vocab: 16, Scale: 1, EOS: []int{2}}
	p := kernels.BeamParams{Vocab: 16, NumBeams: 2, LengthPenalty: 1, MaxLength: 5, EOS: []int{2}, NumReturnSequences: 1}
	res, err := kernels.BeamSearch(p, [][]int{{5, 9, 4}}, model.Logits)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%v score %.4f after %d steps (%s)\n", res.Sequences[0], res.Scores[0], res.Steps, res.StoppedBy)
	// Output: [5 9 4 9 2] score -0.5657 after 2 steps (max_length)
}
