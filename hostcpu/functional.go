package hostcpu

import (
	"errors"
	"fmt"
	"github.com/kvcosim/kvcosim/kvstore"
	"slices"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/accel/tinylm"
	"github.com/kvcosim/kvcosim/sim"
)

// Functional is what functional mode adds to the timed pipeline: the model
// the accelerator runs, its decoding, the store's real contents (nil for
// design recompute), the streams the sampling weights come from, and the
// sessions whose stored bytes get a fault injected after each export.
type Functional struct {
	Model    *tinylm.Model
	Decoding accel.Decoding
	Contents *kvstore.Contents
	Dir      *kvstore.Directory
	Streams  sim.Streams
	Corrupt  func(session int64) bool
}

// TurnOutput is what a turn generated: its tokens and the logits the last
// was chosen from.
type TurnOutput struct {
	Tokens []uint32
	Logits []float32
}

// FunctionalCounts are functional mode's data-integrity counters.
type FunctionalCounts struct {
	// Imports counts imports whose bytes were read back and decoded.
	Imports int64
	// CorruptDetected counts imports whose region checksums failed;
	// Unreadable counts imports of objects gone or unwritten by the time
	// they were read. Both fall back to recomputing the whole history.
	CorruptDetected, Unreadable int64
	// Injected counts faults put into stored bytes on purpose.
	Injected int64
}

// functional is the System's functional state.
type functional struct {
	Functional
	outputs map[int64][]TurnOutput
	counts  FunctionalCounts
	// s is the run, for its time, keys and failures
	s *System
}

// EnableFunctional makes the run functional: the accelerator runs f.Model
// on real tokens and exports and imports move real bytes. The workload
// must carry token ids.
func (s *System) EnableFunctional(f Functional) error {
	for _, sess := range s.sessions {
		if sess.tokenless {
			return fmt.Errorf("functional mode: session %d has token counts, not ids: use a workload with token ids", sess.id)
		}
	}
	run := s.cfg.Run(len(s.nodes[0].Tiers))
	run.Functional = true
	if err := s.cfg.Mech.Check(run); err != nil && s.cfg.Design.Stores {
		return err
	}
	s.fn = &functional{Functional: f, outputs: map[int64][]TurnOutput{}, s: s}
	return nil
}

// Outputs returns, per session, every finished turn's output (functional
// mode).
func (s *System) Outputs() map[int64][]TurnOutput { return s.fn.outputs }

// FunctionalCounts returns the data-integrity counters.
func (s *System) FunctionalCounts() FunctionalCounts { return s.fn.counts }

// SamplingStream is the stream a session's turn draws its sampling weights
// from, so that a recomputation draws the same.
func SamplingStream(streams sim.Streams, session int64, turn int) *sim.Stream {
	return streams.Stream(fmt.Sprintf("functional/session/%d/turn/%d", session, turn))
}

// readImport reads a request's reused tokens back from the store and
// checks that they are the prompt's. When the bytes cannot be trusted it
// counts why, deletes what failed (so that the next export writes it
// afresh) and returns false: the request recomputes.
func (f *functional) readImport(r *request) bool {
	s := f.s
	n := r.rec.ReusedTokens
	data := kvstore.NewKVData(f.Dir.Config().Shape, n)
	var keys []kvstore.Key
	if s.cfg.Scheme == kvstore.SchemeBlock {
		keys = r.blockKeys[:n/s.cfg.BlockTokens]
	} else {
		keys = []kvstore.Key{s.keys.objectKey(r.sess)}
	}
	for _, k := range keys {
		err := f.Contents.Read(k, 0, data)
		if err == nil && !slices.Equal(data.IDs[:k.Tokens], r.prompt[:k.Tokens]) {
			err = fmt.Errorf("stored token ids differ from the prompt's: %w", kvstore.ErrCorrupt)
		}
		if err != nil {
			f.dropStored(k, r.sess, err)
			return false
		}
	}
	f.counts.Imports++
	r.kv = &tinylm.Cache{Len: int(n), K: data.K, V: data.V}
	return true
}

// dropStored counts a failed read and deletes the object it failed on; a
// session whose own version is gone exports in full next time.
func (f *functional) dropStored(k kvstore.Key, sess *session, err error) {
	s := f.s
	switch {
	case errors.Is(err, kvstore.ErrCorrupt):
		f.counts.CorruptDetected++
	case errors.Is(err, kvstore.ErrNotStored):
		f.counts.Unreadable++
	default:
		s.check(err)
		return
	}
	_, derr := f.Dir.Delete(s.eng.Now(), k)
	s.check(derr)
	if s.cfg.Scheme == kvstore.SchemePatent {
		sess.exported, sess.storedTokens = nil, 0
	}
}

// startGeneration gives an admitted request its cache (the resident one,
// the imported one, or an empty one) cut to the tokens it reuses, and
// starts its turn.
func (f *functional) startGeneration(r *request) {
	s := f.s
	var cache *tinylm.Cache
	switch {
	case r.rec.ResidentTokens > 0:
		cache = r.sess.kv.Clone(int(r.context))
	case r.kv != nil:
		cache = r.kv.Clone(int(r.context))
	default:
		cache = f.Model.NewCache()
	}
	r.kv = nil
	g, err := accel.NewGeneration(f.Model, cache, f.Decoding, SamplingStream(f.Streams, r.sess.id, r.rec.Turn), int(r.rec.OutputTokens))
	s.check(err)
	r.gen = g
}

// runMember does a request's functional share of an iteration: a prefill
// chunk of its prompt from position context, or a decode step.
func (f *functional) runMember(r *request, chunk int64) {
	if r.gen == nil {
		return
	}
	var err error
	if chunk > 0 {
		err = r.gen.Prefill(r.prompt[r.context:r.context+chunk], r.context+chunk == r.promptLen)
	} else {
		err = r.gen.Step()
	}
	f.s.check(err)
}

// finishGeneration closes the turn: the session's cache is the turn's,
// and the generated tokens are its output.
func (f *functional) finishGeneration(r *request) []uint32 {
	cache, out, logits, err := r.gen.Finish()
	f.s.check(err)
	r.sess.kv = cache
	f.outputs[r.sess.id] = append(f.outputs[r.sess.id], TurnOutput{Tokens: out, Logits: logits})
	return out
}

// writeExport puts an export's real bytes where the directory put them,
// and injects a fault into them for the sessions chosen for it.
func (f *functional) writeExport(t *exportTask) {
	s := f.s
	if f.Contents == nil || t.result.Err != nil {
		return
	}
	data := &kvstore.KVData{IDs: t.ids, K: t.kv.K, V: t.kv.V}
	for _, w := range t.result.Export.Written {
		err := f.Contents.Write(w, data)
		if errors.Is(err, kvstore.ErrNotStored) {
			continue // evicted before its bytes landed
		}
		s.check(err)
	}
	if w := t.result.Export.Written; len(w) > 0 && f.Corrupt != nil && f.Corrupt(t.sess.id) {
		if err := f.Contents.Corrupt(w[0].Key, int(t.sess.id)); err == nil {
			f.counts.Injected++
		}
	}
}
