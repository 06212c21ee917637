package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// fuzzInput builds an operator input from fuzzed knobs.
func fuzzInput(seed uint64, vocab uint8, k int16, p, minP float32, flags uint8) SampleInput {
	r := rand.New(rand.NewPCG(seed, uint64(flags)))
	v := 2 + int(vocab)%200
	in := SampleInput{Batch: 1, Vocab: v, Eps: 1e-8, TopKGuess: 1 + int(flags)%40, KsMax: 1024, InputIsLogits: true,
		TopK: []int32{int32(k)}, TopP: []float32{p}, IsNeedLogits: flags&1 == 1, DType: DType(int(flags>>1) % 3)}
	if flags&8 != 0 {
		in.MinPs = []float32{minP}
	}
	for range v {
		x := float32(r.NormFloat64() * 5)
		if flags&16 != 0 {
			x = float32(r.IntN(4))
		}
		in.Logits = append(in.Logits, x)
	}
	if flags&32 != 0 {
		for range v {
			in.Q = append(in.Q, float32(r.ExpFloat64()))
		}
	}
	return in
}

// checkSample asserts the operator's properties against the reference.
func checkSample(t *testing.T, in SampleInput, v2 bool) {
	if math.IsNaN(float64(in.TopP[0])) || (in.MinPs != nil && math.IsNaN(float64(in.MinPs[0]))) {
		return // NaN parameters select nothing sensible; the operator's inputs are logits
	}
	op, ref := TopKTopPSampleV1, refV1Row
	if v2 {
		op, ref = TopKTopPSampleV2, refV2Row
	}
	fast, err := op(in, false)
	if err != nil {
		t.Fatal(err)
	}
	full, err := op(in, true)
	if err != nil {
		t.Fatal(err)
	}
	ids, probs := ref(&in, 0)
	if fast.KeptCount[0] != len(ids) || full.KeptCount[0] != len(ids) {
		t.Fatalf("kept %d (fast) %d (full sort), reference %d", fast.KeptCount[0], full.KeptCount[0], len(ids))
	}
	if fast.SelectIdx[0] != full.SelectIdx[0] {
		t.Fatalf("guess path selects %d, full sort %d", fast.SelectIdx[0], full.SelectIdx[0])
	}
	if !slices.Contains(ids, int(fast.SelectIdx[0])) {
		t.Fatalf("selected %d is not a kept token %v", fast.SelectIdx[0], ids)
	}
	if k := int(in.TopK[0]); k >= 1 && k <= in.Vocab && len(ids) > k {
		t.Fatalf("top-k %d kept %d", k, len(ids))
	}
	for _, p := range probs {
		if math.IsNaN(p) {
			t.Fatalf("NaN probability from finite logits")
		}
	}
}

func FuzzTopKTopPSampleV2(f *testing.F) {
	f.Add(uint64(1), uint8(50), int16(10), float32(0.9), float32(0.1), uint8(40))
	f.Add(uint64(2), uint8(199), int16(0), float32(0.5), float32(0), uint8(16))
	f.Add(uint64(3), uint8(3), int16(-1), float32(-1), float32(1.5), uint8(9))
	f.Fuzz(func(t *testing.T, seed uint64, vocab uint8, k int16, p, minP float32, flags uint8) {
		checkSample(t, fuzzInput(seed, vocab, k, p, minP, flags), true)
	})
}

func FuzzTopKTopPSampleV1(f *testing.F) {
	f.Add(uint64(1), uint8(50), int16(10), float32(0.9), uint8(34))
	f.Add(uint64(4), uint8(120), int16(2000), float32(0.3), uint8(2))
	f.Fuzz(func(t *testing.T, seed uint64, vocab uint8, k int16, p float32, flags uint8) {
		in := fuzzInput(seed, vocab, k, Float16.Round(p), 0, flags&^8)
		in.DType = Float16
		checkSample(t, in, false)
	})
}

// FuzzBeamStep checks a step's candidates and whole searches against the
// plain reference.
func FuzzBeamStep(f *testing.F) {
	f.Add(uint64(1), uint8(2), uint8(20), uint8(1), uint8(5), uint8(0))
	f.Add(uint64(9), uint8(4), uint8(9), uint8(2), uint8(3), uint8(7))
	f.Fuzz(func(t *testing.T, seed uint64, beams, vocab, eosCount, newTokens, knobs uint8) {
		nb := 1 + int(beams)%4
		p := BeamParams{Vocab: max(2*nb, 4) + int(vocab)%40, NumBeams: nb, LengthPenalty: []float64{1, 0.5, 2, 0}[knobs%4],
			EarlyStopping: EarlyStopping(int(knobs>>2) % 3), MinNewTokens: int(knobs>>4) % 3, EOS: []int{1},
			NumReturnSequences: 1 + int(knobs>>6)%nb}
		if eosCount%2 == 1 {
			p.EOS = append(p.EOS, 2)
		}
		p.MaxLength = 2 + 1 + int(newTokens)%6
		m := ToyModel{Seed: seed, Vocab: p.Vocab, Scale: 1, EOS: p.EOS, EOSBias: float64(knobs%32) / 4}
		prompts := [][]int{{3, 4}, {5, 6}}
		got, err := BeamSearch(p, prompts, m.Logits)
		if err != nil {
			t.Fatal(err)
		}
		want := refBeam(p, prompts, m.Logits)
		if !slices.EqualFunc(got.Sequences, want.Sequences, slices.Equal) || !slices.EqualFunc(got.BeamIndices, want.BeamIndices, slices.Equal) {
			t.Fatalf("sequences %v / %v, reference %v / %v", got.Sequences, got.BeamIndices, want.Sequences, want.BeamIndices)
		}
		logProbs := make([][]float32, nb)
		beamScores := make([]float32, nb)
		for j := range logProbs {
			logProbs[j], _ = LogSoftmax(m.Logits([]int{3, j}), nil)
			beamScores[j] = -float32(j)
		}
		cands, err := BeamStep(logProbs, beamScores, &p, knobs&1 == 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(cands) != max(2, 1+len(p.EOS))*nb {
			t.Fatalf("%d candidates for %d beams and %d EOS ids", len(cands), nb, len(p.EOS))
		}
		for i, c := range cands {
			if c.Token < 0 || c.Token >= p.Vocab || c.Beam < 0 || c.Beam >= nb || (i > 0 && c.Score > cands[i-1].Score) {
				t.Fatalf("candidate %d %+v out of order or range", i, c)
			}
		}
	})
}
