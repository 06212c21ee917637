package kernels

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/internal/golden"
)

// refBeam is beam search written the plain way, as transformers' tensors
// do it: every request stays in the batch (done ones padded), candidates by
// a full sort of beams x vocab, hypotheses in a plain list.
func refBeam(p BeamParams, prompts [][]int, model Model) BeamResult {
	nb, pl := p.NumBeams, len(prompts[0])
	type hyp struct {
		score float64
		toks  []int
		idx   []int
	}
	var rows, idx [][]int
	var scores []float32
	for _, pr := range prompts {
		for j := range nb {
			rows = append(rows, append([]int(nil), pr...))
			idx = append(idx, nil)
			scores = append(scores, map[bool]float32{true: 0, false: -1e9}[j == 0])
		}
	}
	hyps := make([][]hyp, len(prompts))
	worst := make([]float64, len(prompts))
	done := make([]bool, len(prompts))
	for b := range worst {
		worst[b] = 1e9
	}
	add := func(b int, toks []int, sum float64, ix []int, glen int) {
		s := sum / math.Pow(float64(glen), p.LengthPenalty)
		if len(hyps[b]) < nb || s > worst[b] {
			hyps[b] = append(hyps[b], hyp{s, toks, ix})
			if len(hyps[b]) > nb {
				order := make([]int, len(hyps[b]))
				for i := range order {
					order[i] = i
				}
				sort.SliceStable(order, func(x, y int) bool { return hyps[b][order[x]].score < hyps[b][order[y]].score })
				w := hyps[b][order[1]].score
				hyps[b] = append(hyps[b][:order[0]], hyps[b][order[0]+1:]...)
				worst[b] = w
			} else {
				worst[b] = math.Min(s, worst[b])
			}
		}
	}
	isEOS := func(t int) bool {
		for _, e := range p.EOS {
			if e == t {
				return true
			}
		}
		return false
	}
	cur := pl
	stopped := "max_length"
	for cur < p.MaxLength {
		next, nextIdx := make([][]int, len(rows)), make([][]int, len(rows))
		nextScores := make([]float32, len(rows))
		for b := range prompts {
			if done[b] {
				for j := range nb {
					r := b*nb + j
					next[r], nextIdx[r], nextScores[r] = append(append([]int(nil), rows[0]...), p.Pad), append(append([]int(nil), idx[0]...), 0), 0
				}
				continue
			}
			type c struct {
				s    float32
				flat int
			}
			var all []c
			for j := range nb {
				lp := logSoftmax(model(rows[b*nb+j]))
				for v := range lp {
					if isEOS(v) && cur-pl < p.MinNewTokens {
						lp[v] = float32(math.Inf(-1))
					}
					all = append(all, c{lp[v] + scores[b*nb+j], j*p.Vocab + v})
				}
			}
			sort.SliceStable(all, func(x, y int) bool { return all[x].s > all[y].s })
			all = all[:max(2, 1+len(p.EOS))*nb]
			filled := 0
			for rank, cc := range all {
				tok, r := cc.flat%p.Vocab, b*nb+cc.flat/p.Vocab
				if isEOS(tok) {
					if rank < nb {
						add(b, append([]int(nil), rows[r]...), float64(cc.s), append(append([]int(nil), idx[r]...), r), cur+1-pl)
					}
				} else {
					d := b*nb + filled
					next[d], nextIdx[d], nextScores[d] = append(append([]int(nil), rows[r]...), tok), append(append([]int(nil), idx[r]...), r), cc.s
					filled++
				}
				if filled == nb {
					break
				}
			}
			if len(hyps[b]) >= nb {
				best := float64(all[0].s)
				den := float64(cur + 1 - pl)
				if p.EarlyStopping == StopNever && p.LengthPenalty > 0 {
					den = float64(p.MaxLength - pl)
				}
				done[b] = p.EarlyStopping == StopTrue || worst[b] >= best/math.Pow(den, p.LengthPenalty)
			}
		}
		rows, idx, scores = next, nextIdx, nextScores
		cur++
		all := true
		for _, d := range done {
			all = all && d
		}
		if all {
			stopped = "all_done"
			break
		}
	}
	res := BeamResult{Steps: cur - pl, FinalLen: cur, StoppedBy: stopped, Done: append([]bool(nil), done...)}
	var best []hyp
	for b := range prompts {
		if !done[b] {
			for j := range nb {
				r := b*nb + j
				add(b, rows[r], float64(scores[r]), idx[r], len(rows[r])-pl)
			}
		}
		s := append([]hyp(nil), hyps[b]...)
		sort.SliceStable(s, func(x, y int) bool { return s[x].score < s[y].score })
		for range p.NumReturnSequences {
			best, s = append(best, s[len(s)-1]), s[:len(s)-1]
		}
	}
	longest := 0
	for _, h := range best {
		longest = max(longest, len(h.toks))
	}
	width := min(longest+1, p.MaxLength)
	for _, h := range best {
		seq, ix := append([]int(nil), h.toks...), append([]int(nil), h.idx...)
		for len(seq) < width {
			seq = append(seq, map[bool]int{true: p.EOS[0], false: p.Pad}[len(seq) == len(h.toks)])
		}
		for len(ix) < width {
			ix = append(ix, -1)
		}
		res.Sequences, res.BeamIndices, res.Scores = append(res.Sequences, seq), append(res.BeamIndices, ix), append(res.Scores, float32(h.score))
	}
	return res
}

// ownBeamFile draws beam cases that stress EOS handling and writes them
// with the reference's results.
func ownBeamFile() []byte {
	r := rand.New(rand.NewPCG(7, 7))
	var cases []map[string]any
	for i := range 120 {
		nb := 1 + r.IntN(4)
		if i%2 == 0 {
			nb = 2 + r.IntN(3) // several beams: EOS candidates compete for the top ranks
		}
		vocab := max(2*nb, 4) + r.IntN(30)
		eos := []int{1}
		if r.IntN(2) == 0 {
			eos = []int{1, 2 + r.IntN(vocab-2)}
		}
		lp := []float64{1, 0.5, 2, -1, 0}[r.IntN(5)]
		es := []any{true, false, "never"}[r.IntN(3)]
		batch, plen, newTok := 1+r.IntN(3), 1+r.IntN(4), 2+r.IntN(8)
		p := BeamParams{Vocab: vocab, NumBeams: nb, LengthPenalty: lp, EarlyStopping: map[any]EarlyStopping{true: StopTrue, false: StopFalse, "never": StopNever}[es],
			MaxLength: plen + newTok, MinNewTokens: r.IntN(3), EOS: eos, Pad: 0, NumReturnSequences: 1 + r.IntN(nb)}
		m := ToyModel{Seed: r.Uint64() >> 1, Vocab: vocab, Scale: []float64{0.5, 1, 2}[r.IntN(3)], EOS: eos,
			EOSBias: float64(r.IntN(200)) / 16, EOSSlope: float64(r.IntN(8)-2) / 16}
		if i%4 == 1 { // an EOS flood: masked, then every beam's EOS ids top the candidates
			nb = 3
			p.NumBeams, p.Vocab, p.MinNewTokens, p.NumReturnSequences = nb, max(vocab, 8), 2, 1+r.IntN(nb)
			p.EOS = []int{1, 2}
			vocab, eos = p.Vocab, p.EOS
			m = ToyModel{Seed: m.Seed, Vocab: vocab, Scale: 0.5, EOS: eos, EOSBias: 15, EOSSlope: 0}
		}
		var prompts [][]int
		for range batch {
			var pr []int
			for range plen {
				pr = append(pr, 3+r.IntN(vocab-3))
			}
			prompts = append(prompts, pr)
		}
		res := refBeam(p, prompts, m.Logits)
		scores := make([]float64, len(res.Scores))
		for j, s := range res.Scores {
			scores[j] = float64(s)
		}
		cases = append(cases, map[string]any{"name": fmt.Sprintf("own_beam_%02d", i),
			"params": map[string]any{"vocab_size": vocab, "num_beams": nb, "length_penalty": lp, "early_stopping": es,
				"max_new_tokens": newTok, "max_length": p.MaxLength, "min_new_tokens": p.MinNewTokens, "eos_token_id": eos,
				"pad_token_id": 0, "num_return_sequences": p.NumReturnSequences},
			"model":   map[string]any{"seed": m.Seed, "scale": m.Scale, "eos_bias": m.EOSBias, "eos_slope": m.EOSSlope},
			"prompts": prompts,
			"expected": map[string]any{"sequences": res.Sequences, "sequence_scores": scores, "beam_indices": res.BeamIndices,
				"num_steps": res.Steps, "final_input_ids_len": res.FinalLen, "stopped_by": res.StoppedBy, "done": res.Done}})
	}
	out, _ := json.MarshalIndent(map[string]any{"schema": SchemaBeam, "reference": "kvcosim's plain reference (beam_reference_test.go)", "cases": cases}, "", " ")
	return append(out, '\n')
}

func TestOwnBeamVectors(t *testing.T) {
	path := filepath.Join("testdata", "vectors", "own_beam.json")
	golden.Check(t, path, string(ownBeamFile()))
	f, err := ReadVectors(path)
	require.NoError(t, err)
	for _, r := range f.Run() {
		assert.Empty(t, r.Err, r.Name)
	}
}
