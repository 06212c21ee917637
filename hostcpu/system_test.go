package hostcpu

import (
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/sim"
	"github.com/kvcosim/kvcosim/workloads"
)

// fakeExecutor runs every iteration in a fixed time and keeps what it ran.
type fakeExecutor struct {
	eng  *sim.Engine
	took sim.Time
	ran  []accel.Iteration
}

func (f *fakeExecutor) Run(it accel.Iteration, done sim.Event) accel.Cost {
	f.ran = append(f.ran, accel.Iteration{Decodes: append([]int64(nil), it.Decodes...), Prefills: append([]accel.Chunk(nil), it.Prefills...)})
	f.eng.Schedule(f.eng.Now()+f.took, done)
	return accel.Cost{Total: f.took}
}

// turn is a synthetic turn: new tokens and outputs, after a gap in ms.
func turn(newTokens, outputs int64, gapMs int64) workloads.Turn {
	return workloads.Turn{NewTokenCount: newTokens, OutputCount: outputs, Gap: sim.Time(gapMs) * sim.Millisecond, Node: -1}
}

// newTestSystem builds one node of the recompute design over a fake
// executor and a device KV memory of kvTokens tokens (1 B a token, blocks
// of one token), for the given sessions.
func newTestSystem(t *testing.T, cfg Config, kvTokens int64, sessions ...workloads.Session) (*System, *fakeExecutor, *sim.Engine) {
	eng := sim.NewEngine(64)
	exec := &fakeExecutor{eng: eng, took: sim.Millisecond}
	kv, err := accel.NewKVMemory(kvTokens, 1, 1)
	require.NoError(t, err)
	s, err := NewSystem(eng, cfg, []Node{{Exec: exec, KV: kv}}, nil, &workloads.Workload{Sessions: sessions}, sim.NewStreams(1))
	require.NoError(t, err)
	return s, exec, eng
}

func recomputeConfig() Config {
	cfg := validConfig()
	cfg.Design, _ = store.ParseDesign("recompute")
	cfg.KVBytesPerToken = 1
	return cfg
}

func TestClaim2DecisionTable(t *testing.T) {
	cases := []struct {
		name string
		in   situation
		want verdict
	}{
		{"first tokens infer", situation{first: true, stores: true}, verdict{FirstTokens, infer}},
		{"first tokens without a store", situation{first: true}, verdict{FirstTokens, infer}},
		{"first tokens in the block scheme query", situation{first: true, stores: true, blocks: true}, verdict{FirstTokens, lookUp}},
		{"first tokens, blocks but no store", situation{first: true, blocks: true}, verdict{FirstTokens, infer}},
		{"continuation on this accelerator", situation{residentHere: true, stores: true}, verdict{Continuation, infer}},
		{"continuation wins over an export in flight", situation{residentHere: true, stores: true, exporting: true}, verdict{Continuation, infer}},
		{"continuation without a store", situation{residentHere: true}, verdict{Continuation, infer}},
		{"not resident, no store: recompute", situation{}, verdict{Recomputed, infer}},
		{"not resident: query", situation{stores: true}, verdict{Query, lookUp}},
		{"not resident, block scheme: query", situation{stores: true, blocks: true}, verdict{Query, lookUp}},
		{"export in flight: wait for it", situation{stores: true, exporting: true}, verdict{action: park}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, claim2(c.in), c.name)
	}
}

func TestLRUIdleSkipsRunningAndBreaksTiesByID(t *testing.T) {
	at := func(id int64, lastUse sim.Time, running bool) *session {
		return &session{id: id, placement: placement{lastUse: lastUse, running: running}}
	}
	cases := []struct {
		name      string
		residents []*session
		want      int64 // -1: none
	}{
		{"empty", nil, -1},
		{"only running", []*session{at(1, 0, true)}, -1},
		{"least recently used", []*session{at(1, 30, false), at(2, 10, false), at(3, 20, false)}, 2},
		{"a running session is not idle", []*session{at(1, 5, true), at(2, 10, false)}, 2},
		{"ties by id", []*session{at(7, 10, false), at(4, 10, false), at(9, 10, false)}, 4},
	}
	for _, c := range cases {
		rs := newResidents()
		for _, s := range c.residents {
			rs.add(s)
		}
		v := rs.lruIdle()
		if c.want < 0 {
			assert.Nil(t, v, c.name)
			continue
		}
		require.NotNil(t, v, c.name)
		assert.Equal(t, c.want, v.id, c.name)
	}
}

// TestResidentsAgreeWithAScan holds the resident sessions' order to a
// reference that scans them all: random sessions kept, let go, kept again
// after a later use, and marked running, the victim the same after each.
func TestResidentsAgreeWithAScan(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	rs, kept := newResidents(), map[int64]*session{}
	sessions := make([]*session, 40)
	for i := range sessions {
		sessions[i] = &session{id: int64(i)}
	}
	for step := range 5000 {
		sess := sessions[r.IntN(len(sessions))]
		switch r.IntN(4) {
		case 0, 1:
			sess.lastUse = sim.Time(r.IntN(50)) // ties are frequent
			rs.add(sess)
			kept[sess.id] = sess
		case 2:
			rs.remove(sess.id)
			delete(kept, sess.id)
		case 3:
			sess.running = !sess.running
		}
		var want *session
		for _, s := range kept {
			if !s.running && (want == nil || s.lastUse < want.lastUse || (s.lastUse == want.lastUse && s.id < want.id)) {
				want = s
			}
		}
		require.Equal(t, want, rs.lruIdle(), "step %d", step)
		require.Equal(t, len(kept), len(slices.Collect(rs.all())), "step %d", step)
	}
}

// TestAdmissionRespectsBatchAndRejectsTheImpossible: two requests fit the
// batch of one at a time; a request larger than the whole device memory is
// rejected, not left waiting.
func TestAdmissionRespectsBatchAndRejectsTheImpossible(t *testing.T) {
	cfg := recomputeConfig()
	cfg.MaxBatch = 1
	s, exec, eng := newTestSystem(t, cfg, 1000,
		workloads.Session{ID: 0, Turns: []workloads.Turn{turn(100, 2, 0)}},
		workloads.Session{ID: 1, Turns: []workloads.Turn{turn(100, 2, 0)}},
		workloads.Session{ID: 2, Turns: []workloads.Turn{turn(5000, 2, 0)}})
	eng.Run()
	for _, it := range exec.ran {
		assert.LessOrEqual(t, len(it.Decodes)+len(it.Prefills), 1, "max batch 1")
	}
	assert.Equal(t, int64(1), s.Rejected().For(RejectKVMemory))
	assert.Equal(t, int64(1), s.Rejected().Total(), "and for no other reason")
	assert.Equal(t, map[string]int64{"context_window": 0, "kv_memory": 1}, s.Rejected().ByReason())
	assert.Len(t, RejectReasons.Names(), rejectReasons, "one count a reason")
	recs := s.Records()
	require.Len(t, recs, 3)
	assert.True(t, recs[0].Done && recs[1].Done)
	assert.False(t, recs[2].Done, "5,000 tokens never fit 1,000")
	assert.Greater(t, recs[1].Queue, recs[0].Queue, "the second waits for the first")
	_, err := s.Conservation()
	assert.NoError(t, err)
}

// TestFinishedCountsCompletedAndRejected follows a run event by event:
// Finished is always the records completed plus the requests rejected.
func TestFinishedCountsCompletedAndRejected(t *testing.T) {
	cfg := recomputeConfig()
	cfg.MaxBatch = 1
	s, _, eng := newTestSystem(t, cfg, 1000,
		workloads.Session{ID: 0, Turns: []workloads.Turn{turn(100, 2, 0), turn(10, 2, 5)}},
		workloads.Session{ID: 1, Turns: []workloads.Turn{turn(100, 2, 0)}},
		workloads.Session{ID: 2, Turns: []workloads.Turn{turn(5000, 2, 0)}})
	seen := map[int]bool{}
	for eng.Step() {
		done := int(s.Rejected().Total())
		for _, r := range s.Records() {
			if r.Done {
				done++
			}
		}
		require.Equal(t, int64(done), s.Counts().Finished, "at %v", eng.Now())
		seen[done] = true
	}
	assert.Equal(t, int64(4), s.Counts().Finished, "three completed, one rejected")
	assert.True(t, seen[0] && seen[1] && seen[3], "counted as they end: %v", seen)
}

// TestEvictionMakesRoomLeastRecentlyUsedFirst: device memory (300
// tokens) holds sessions 0 and 1 (110 each); session 2 (160) evicts the
// idle one used longest ago, 0, while 1 stays and continues; when 0 comes
// back it recomputes its history and evicts 2, by then the idle session
// used longest ago.
func TestEvictionMakesRoomLeastRecentlyUsedFirst(t *testing.T) {
	s, _, eng := newTestSystem(t, recomputeConfig(), 300,
		workloads.Session{ID: 0, Turns: []workloads.Turn{turn(100, 10, 0), turn(10, 10, 1000)}},
		workloads.Session{ID: 1, Start: 50 * sim.Millisecond, Turns: []workloads.Turn{turn(100, 10, 0), turn(10, 10, 500)}},
		workloads.Session{ID: 2, Start: 100 * sim.Millisecond, Turns: []workloads.Turn{turn(150, 10, 0)}})
	eng.Run()
	byTurn := map[[2]int64]Record{}
	for _, r := range s.Records() {
		byTurn[[2]int64{r.Session, int64(r.Turn)}] = r
	}
	assert.Equal(t, Recomputed, byTurn[[2]int64{0, 1}].Decision, "session 0 was used longest ago: evicted")
	assert.Equal(t, Continuation, byTurn[[2]int64{1, 1}].Decision, "session 1 stayed")
	assert.Equal(t, int64(110), byTurn[[2]int64{1, 1}].ResidentTokens)
	assert.Equal(t, int64(2), s.Counts().DeviceEvictions)
	_, err := s.Conservation()
	assert.NoError(t, err)
}

// TestContinuousBatchingDecodesFirstThenChunksPrefills: a long prompt is
// prefilled in chunks of the token budget while a running request decodes
// in every iteration, the decodes taking their share of the budget first.
func TestContinuousBatchingDecodesFirstThenChunksPrefills(t *testing.T) {
	cfg := recomputeConfig()
	cfg.TokenBudget = 64
	_, exec, eng := newTestSystem(t, cfg, 10000,
		workloads.Session{ID: 0, Turns: []workloads.Turn{turn(10, 50, 0)}},
		workloads.Session{ID: 1, Start: 5 * sim.Millisecond, Turns: []workloads.Turn{turn(200, 2, 0)}})
	eng.Run()
	var chunks []int64
	for _, it := range exec.ran {
		tokens := int64(len(it.Decodes))
		for _, p := range it.Prefills {
			tokens += p.New
			if p.Cached >= 0 && len(it.Decodes) > 0 {
				chunks = append(chunks, p.New)
			}
		}
		assert.LessOrEqual(t, tokens, cfg.TokenBudget, "an iteration stays within the token budget")
	}
	require.NotEmpty(t, chunks, "session 1's prefill ran beside session 0's decodes")
	assert.Equal(t, int64(63), chunks[0], "a decode takes one token of the budget first")
	last := exec.ran[len(exec.ran)-1]
	assert.Len(t, last.Decodes, 1)
}
