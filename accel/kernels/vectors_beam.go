package kernels

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// beamCase is a case of the hf-beam-golden/v1 schema.
type beamCase struct {
	Params struct {
		Vocab         int             `json:"vocab_size"`
		NumBeams      int             `json:"num_beams"`
		LengthPenalty float64         `json:"length_penalty"`
		EarlyStopping json.RawMessage `json:"early_stopping"`
		MaxLength     int             `json:"max_length"`
		MinNewTokens  int             `json:"min_new_tokens"`
		EOS           json.RawMessage `json:"eos_token_id"`
		Pad           int             `json:"pad_token_id"`
		Return        int             `json:"num_return_sequences"`
	} `json:"params"`
	Model struct {
		Seed     uint64  `json:"seed"`
		Scale    float64 `json:"scale"`
		EOSBias  float64 `json:"eos_bias"`
		EOSSlope float64 `json:"eos_slope"`
	} `json:"model"`
	Prompts    [][]int `json:"prompts"`
	ModelCheck []struct {
		Tokens     []int    `json:"tokens"`
		PrefixHash string   `json:"prefix_hash"`
		LogitsHead []jfloat `json:"logits_head"`
	} `json:"model_check"`
	Expected struct {
		Sequences   [][]int  `json:"sequences"`
		Scores      []jfloat `json:"sequence_scores"`
		BeamIndices [][]int  `json:"beam_indices"`
		Steps       int      `json:"num_steps"`
		FinalLen    int      `json:"final_input_ids_len"`
		StoppedBy   string   `json:"stopped_by"`
		Done        []bool   `json:"done"`
	} `json:"expected"`
}

// params converts the case's settings.
func (c *beamCase) params() (BeamParams, error) {
	p := c.Params
	out := BeamParams{Vocab: p.Vocab, NumBeams: p.NumBeams, LengthPenalty: p.LengthPenalty, MaxLength: p.MaxLength,
		MinNewTokens: p.MinNewTokens, Pad: p.Pad, NumReturnSequences: max(1, p.Return)}
	switch string(p.EarlyStopping) {
	case "true":
		out.EarlyStopping = StopTrue
	case "false":
		out.EarlyStopping = StopFalse
	case `"never"`:
		out.EarlyStopping = StopNever
	default:
		return out, fmt.Errorf("early_stopping %s: want true, false or \"never\"", p.EarlyStopping)
	}
	var one int
	if json.Unmarshal(p.EOS, &one) == nil {
		out.EOS = []int{one}
	} else if err := json.Unmarshal(p.EOS, &out.EOS); err != nil {
		return out, fmt.Errorf("eos_token_id: %v", err)
	}
	return out, nil
}

func runBeamCase(raw json.RawMessage) error {
	var c beamCase
	if err := json.Unmarshal(raw, &c); err != nil {
		return malformed(fmt.Errorf("unreadable case: %v", err))
	}
	p, err := c.params()
	if err != nil {
		return malformed(err)
	}
	if err := checkVocab("params.vocab_size", p.Vocab); err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return malformed(fmt.Errorf("params: %v", err))
	}
	m := ToyModel{Seed: c.Model.Seed, Vocab: p.Vocab, Scale: c.Model.Scale, EOS: p.EOS, EOSBias: c.Model.EOSBias, EOSSlope: c.Model.EOSSlope}
	for _, chk := range c.ModelCheck {
		if got := strconv.FormatUint(PrefixHash(m.Seed, chk.Tokens), 10); got != chk.PrefixHash {
			return fmt.Errorf("toy model: prefix_hash %s, want %s", got, chk.PrefixHash)
		}
		logits := m.Logits(chk.Tokens)
		if len(chk.LogitsHead) > len(logits) {
			return malformed(fmt.Errorf("model_check: logits_head has %d values, more than the vocab_size of %d", len(chk.LogitsHead), len(logits)))
		}
		for v, want := range chk.LogitsHead {
			if logits[v] != float32(want) {
				return fmt.Errorf("toy model: logit %d = %v, want %v", v, logits[v], float64(want))
			}
		}
	}
	res, err := BeamSearch(p, c.Prompts, m.Logits)
	if err != nil {
		return err
	}
	return c.compare(&res)
}

func (c *beamCase) compare(r *BeamResult) error {
	e := &c.Expected
	switch {
	case fmt.Sprint(r.Sequences) != fmt.Sprint(e.Sequences):
		return fmt.Errorf("sequences %v, want %v", r.Sequences, e.Sequences)
	case fmt.Sprint(r.BeamIndices) != fmt.Sprint(e.BeamIndices):
		return fmt.Errorf("beam_indices %v, want %v", r.BeamIndices, e.BeamIndices)
	case r.Steps != e.Steps || r.FinalLen != e.FinalLen:
		return fmt.Errorf("num_steps %d and final length %d, want %d and %d", r.Steps, r.FinalLen, e.Steps, e.FinalLen)
	case r.StoppedBy != e.StoppedBy:
		return fmt.Errorf("stopped_by %q, want %q", r.StoppedBy, e.StoppedBy)
	case fmt.Sprint(r.Done) != fmt.Sprint(e.Done):
		return fmt.Errorf("done %v, want %v", r.Done, e.Done)
	case len(e.Scores) > len(r.Scores):
		return fmt.Errorf("sequence_scores: %d values, want %d", len(r.Scores), len(e.Scores))
	}
	for i, want := range e.Scores {
		if d := math.Abs(float64(r.Scores[i]) - float64(want)); d > 1e-4+1e-5*math.Abs(float64(want)) {
			return fmt.Errorf("sequence_scores[%d] = %v, want %v", i, r.Scores[i], float64(want))
		}
	}
	return nil
}
