package scenario

import (
	"fmt"
	"strings"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/accel/kernels"
	"github.com/kvcosim/kvcosim/accel/tinylm"
	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/kvstore"
)

// Functional is functional mode's model, decoding and fault injection
// (used with mode: functional).
type Functional struct {
	Layers          int     `yaml:"layers"`
	Hidden          int     `yaml:"hidden"`
	Heads           int     `yaml:"heads"`
	KVHeads         int     `yaml:"kv_heads"`
	Vocab           int     `yaml:"vocab"`
	FFN             int     `yaml:"ffn"`
	WeightSeed      uint64  `yaml:"weight_seed"`
	Decoding        string  `yaml:"decoding"` // greedy, sample or beam
	TopK            int     `yaml:"top_k"`
	TopP            float64 `yaml:"top_p"`
	Beams           int     `yaml:"beams"`
	CorruptFraction float64 `yaml:"corrupt_fraction"`
}

// functionalConfig is functional mode resolved.
type functionalConfig struct {
	model    tinylm.Config
	decoding accel.Decoding
	corrupt  float64
}

// resolveFunctional reads the functional section and, in functional mode,
// makes the timed model tinylm's shape on one device, its KV float32.
func (r *resolver) resolveFunctional(sc *Scenario, out *resolved) {
	f := sc.Functional
	if r.oneOf("mode", sc.Mode, "timing", "functional") == "timing" {
		return
	}
	cfg := tinylm.Config{Layers: f.Layers, Hidden: f.Hidden, Heads: f.Heads, KVHeads: f.KVHeads, Vocab: f.Vocab, FFN: f.FFN, Seed: f.WeightSeed}
	if err := cfg.Validate(); err != nil { // "tinylm: NAME = ...": the key is functional.NAME
		name, _, _ := strings.Cut(strings.TrimPrefix(err.Error(), "tinylm: "), " ")
		r.check("functional."+name, err)
	}
	d := accel.Decoding{Kind: pick(r, "functional.decoding", f.Decoding, accel.DecodeKinds.Parse),
		TopK: f.TopK, TopP: float32(f.TopP), Beams: f.Beams}
	r.intIn("functional.top_k", int64(f.TopK), 1, 1<<24)
	if d.Kind == accel.Sample && f.TopK > f.Vocab && r.err == nil { // only sample reads it: the default's top-k blames a small vocabulary
		r.fail(r.culprit("functional.top_k", "functional.vocab", "functional.decoding"), "functional.top_k %d is more than functional.vocab's %d tokens (allowed: a top-k of 1 to %d, or a larger vocabulary)",
			f.TopK, f.Vocab, f.Vocab)
	}
	r.floatIn("functional.top_p", f.TopP, 1e-6, 1)
	r.intIn("functional.beams", int64(f.Beams), 1, 64)
	if d.Kind == accel.Beam {
		r.check("functional.beams", kernels.BeamParams{Vocab: f.Vocab, NumBeams: f.Beams, EOS: []int{0}, NumReturnSequences: 1}.Validate())
	}
	r.floatIn("functional.corrupt_fraction", f.CorruptFraction, 0, 1)
	out.functional = &functionalConfig{model: cfg, decoding: d, corrupt: f.CorruptFraction}
}

// tinyModel is tinylm's shape as the accelerator's cost model sees it.
func tinyModel(c tinylm.Config) accel.Model {
	h, kvw := int64(c.Hidden), int64(c.KVWidth())
	params := int64(c.Layers)*(2*h*h+2*h*kvw+2*h*int64(c.FFN)) + 2*int64(c.Vocab)*h
	return accel.Model{Name: "tinylm", Layers: c.Layers, Hidden: c.Hidden, Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim(),
		Intermediate: c.FFN, Vocab: c.Vocab, Params: params, ActiveParams: params, Attention: accel.GQA}
}

// buildFunctional gives the storage its byte store and the system its
// model, decoding and the store's contents.
func (r *Run) buildFunctional(f *functionalConfig) error {
	m, err := tinylm.New(f.model)
	if err != nil {
		return err
	}
	fn := hostcpu.Functional{Model: m, Decoding: f.decoding, Dir: r.dir, Streams: r.streams, Corrupt: corrupter(r.l.Seed, f.corrupt)}
	if r.dir != nil {
		store, err := r.ssd.AttachStore(4096, true)
		if err != nil {
			return err
		}
		if fn.Contents, err = kvstore.NewContents(r.dir, store); err != nil {
			return err
		}
	}
	if err := r.sys.EnableFunctional(fn); err != nil {
		return fmt.Errorf("%w (workload.kind %s, workload.path %q)", err, r.l.Workload.Kind, r.l.Workload.Path)
	}
	return nil
}

// corrupter chooses the sessions whose stored bytes get a fault: a
// fraction of them, by a hash of the seed and the session id (so the
// choice does not depend on the order sessions run in).
func corrupter(seed uint64, fraction float64) func(int64) bool {
	if fraction == 0 {
		return nil
	}
	return func(session int64) bool {
		return float64(kernels.Mix64(seed^uint64(session)*0x9e3779b97f4a7c15)>>11)/(1<<53) < fraction
	}
}
