package hostcpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/accel/tinylm"
	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
	"github.com/kvcosim/kvcosim/workloads"
)

// TestFunctionalImportsAreReadBackAndChecked: in functional mode the cpu
// design's exports write real bytes and its imports read them back; a
// resumed turn continues from the stored cache and generates what the
// model generates over the whole prompt. A fault injected into session
// 1's stored bytes is detected at its next import, which recomputes.
func TestFunctionalImportsAreReadBackAndChecked(t *testing.T) {
	cfg := rigConfig(t, "cpu")
	cfg.DropAfterTurn = true
	var sessions []workloads.Session
	for id := range int64(2) {
		sess := workloads.Session{ID: id}
		for k := range 3 {
			tr := idTurn(uint32(1+100*id+30*int64(k)), 12, 4, false)
			tr.Gap = 50 * sim.Millisecond
			sess.Turns = append(sess.Turns, tr)
		}
		sessions = append(sessions, sess)
	}
	r := newRig(t, rigSpec{cfg: cfg, kvTokens: 4096, sessions: sessions})
	model, err := tinylm.New(tinylm.DefaultConfig())
	require.NoError(t, err)
	bytes, err := memory.NewByteStore("ssd", 8<<20, 4096, true)
	require.NoError(t, err)
	contents, err := kvstore.NewContents(r.dir, bytes)
	require.NoError(t, err)
	require.NoError(t, r.s.EnableFunctional(Functional{Model: model, Decoding: accel.Decoding{Kind: accel.Greedy}, Contents: contents,
		Dir: r.dir, Streams: sim.NewStreams(1), Corrupt: func(session int64) bool { return session == 1 }}))
	r.run(t)
	fc := r.s.FunctionalCounts()
	assert.Equal(t, int64(2), fc.Imports, "session 0's two resumed turns read their history back")
	assert.Positive(t, fc.Injected)
	assert.Equal(t, int64(2), fc.CorruptDetected, "each of session 1's resumed turns finds the fault")
	for _, rec := range r.s.Records() {
		if rec.Session == 1 && rec.Turn > 0 {
			assert.Zero(t, rec.ReusedTokens, "a corrupt import recomputes")
		}
	}
	again := newRig(t, rigSpec{cfg: recomputeConfig(), kvTokens: 4096, sessions: sessions})
	require.NoError(t, again.s.EnableFunctional(Functional{Model: model, Decoding: accel.Decoding{Kind: accel.Greedy}, Streams: sim.NewStreams(1)}))
	again.run(t)
	out, want := r.s.Outputs(), again.s.Outputs()
	require.Len(t, out[0], 3)
	for k := range out[0] {
		assert.Len(t, out[0][k].Tokens, 4)
		assert.Equal(t, want[0][k].Tokens, out[0][k].Tokens, "turn %d continued from its stored cache generates what recomputing it does", k)
	}
}

// TestFunctionalModeNeedsTokenIDs: a workload of token counts cannot run
// functionally.
func TestFunctionalModeNeedsTokenIDs(t *testing.T) {
	r := newRig(t, rigSpec{cfg: rigConfig(t, "cpu"), kvTokens: 4096, sessions: chats(1, 1, 10, 0, false)})
	err := r.s.EnableFunctional(Functional{})
	assert.ErrorContains(t, err, "session 0 has token counts, not ids")
}
