package hostcpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"github.com/kvcosim/kvcosim/sim"
	"github.com/kvcosim/kvcosim/workloads"
)

// randomChats are sessions of random prompts, outputs, turns and gaps.
func randomChats(rng *rand.Rand) []workloads.Session {
	var out []workloads.Session
	for id := range 3 + rng.IntN(10) {
		sess := workloads.Session{ID: int64(id), Start: sim.Time(rng.IntN(20)) * sim.Millisecond}
		for range 1 + rng.IntN(4) {
			sess.Turns = append(sess.Turns, turn(int64(10+rng.IntN(400)), int64(1+rng.IntN(60)), int64(rng.IntN(30))))
		}
		out = append(out, sess)
	}
	return out
}

// auditor runs iterations as fakeExecutor does and checks, at every one,
// the node's KV blocks against a reference model: each member holds the
// blocks of its KV and this step's tokens, each retained session at least
// those of its computed history (all but its last output token), and all
// of them together no more than the device has.
type auditor struct {
	fakeExecutor
	s      *System
	t      *testing.T
	checks int
}

func (a *auditor) Run(it accel.Iteration, done sim.Event) accel.Cost {
	n := a.s.nodes[0]
	var reference int64
	for _, m := range n.members {
		r := a.s.reqs.At(m.slot)
		tokens := r.context + max(m.chunk, 1)
		require.Zero(a.t, n.KV.Extra(r.sess.id, tokens), "session %d runs %d tokens without their blocks", r.sess.id, tokens)
		reference += n.KV.BlocksFor(tokens)
	}
	for sess := range n.residents.all() {
		reference += n.KV.BlocksFor(max(0, sess.historyLen-1))
	}
	used := n.KV.Total() - n.KV.Free()
	require.LessOrEqual(a.t, reference, used, "the blocks in use are fewer than the reference model needs")
	require.LessOrEqual(a.t, used, n.KV.Total())
	require.NoError(a.t, n.KV.Audit(func(int64) bool { return true }))
	a.checks++
	return a.fakeExecutor.Run(it, done)
}

// engineRun runs sessions on one node of design over kvTokens of KV
// memory with engine e, auditing every iteration; it returns the records,
// the iterations run and the counts.
func engineRun(t *testing.T, design string, e Engine, kvTokens int64, sessions []workloads.Session) ([]Record, []accel.Iteration, Counts) {
	t.Helper()
	cfg := rigConfig(t, design)
	cfg.Engine, cfg.MaxBatch, cfg.TokenBudget = e, 8, 256
	r := newRig(t, rigSpec{cfg: cfg, kvTokens: kvTokens, sessions: sessions})
	a := &auditor{fakeExecutor: fakeExecutor{eng: r.eng, took: sim.Millisecond}, s: r.s, t: t}
	r.s.nodes[0].Exec = a
	c := r.run(t)
	require.Positive(t, a.checks)
	return r.s.Records(), a.ran, c
}

// With memory to spare nothing is evicted or preempted, and allocating
// blocks as they are needed runs exactly the iterations that reserving
// them whole runs, with the same records. Only where a request's wait
// ends and its prefill begins moves: reserve lets a request into the
// batch as soon as it has room, incremental (as vLLM v1) in the step that
// has budget for its first chunk, so its queue and prefill stages split
// the same time differently.
func TestIncrementalAgreesWithReserveWithMemoryToSpare(t *testing.T) {
	for seed := range uint64(8) {
		sessions := randomChats(rand.New(rand.NewPCG(seed, 7)))
		for _, design := range []string{"recompute", "cpu", "fpga"} {
			reserved, ranReserved, c := engineRun(t, design, Engine{}, 1<<20, sessions)
			incremental, ranIncremental, ci := engineRun(t, design, Engine{KVAlloc: AllocIncremental}, 1<<20, sessions)
			require.Zero(t, c.DeviceEvictions+ci.DeviceEvictions+ci.Preemptions)
			require.Len(t, incremental, len(reserved))
			for i := range reserved {
				a, b := reserved[i], incremental[i]
				require.Equal(t, a.Queue+a.Prefill, b.Queue+b.Prefill, "seed %d, %s, request %d", seed, design, i)
				a.Queue, a.Prefill, b.Queue, b.Prefill = 0, 0, 0, 0
				require.Equal(t, a, b, "seed %d, %s, request %d", seed, design, i)
			}
			assert.Equal(t, ranReserved, ranIncremental, "seed %d, %s", seed, design)
			assert.Equal(t, c.PeakRunning, ci.PeakRunning)
		}
	}
}

// A property over random workloads and memories: under every preemption
// mode the blocks in use never pass the device's (the auditor, at every
// iteration), every block is freed or retained at the end (INV-40, in the
// run's conservation check), and every request that fits alone completes.
func TestIncrementalBlocksStayWithinCapacity(t *testing.T) {
	seeds := uint64(12)
	if testing.Short() {
		seeds = 4
	}
	preempted := map[Preemption]int64{}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(seed, 11))
		sessions := randomChats(rng)
		kvTokens := int64(700 + rng.IntN(1500))
		for _, design := range []string{"recompute", "cpu", "fpga", "lmcache"} {
			for _, mode := range []Preemption{PreemptRecompute, PreemptSwap, PreemptStore} {
				t.Run(fmt.Sprintf("seed%d/%s/%s", seed, design, mode), func(t *testing.T) {
					recs, _, c := engineRun(t, design, Engine{KVAlloc: AllocIncremental, Preemption: mode}, kvTokens, sessions)
					var preemptions int64
					for _, r := range recs {
						assert.True(t, r.Done || r.PromptTokens+r.OutputTokens > kvTokens/16*16, "request %d fits alone and did not complete", r.ID)
						preemptions += r.Preemptions
					}
					assert.Equal(t, c.Preemptions, preemptions, "the records' preemptions are the counter's")
					preempted[mode] += c.Preemptions
				})
			}
		}
	}
	for _, mode := range []Preemption{PreemptRecompute, PreemptSwap, PreemptStore} {
		assert.Positive(t, preempted[mode], "no workload preempted under %s: the property was not exercised", mode)
	}
}

// A request that runs alone and lacks blocks that only sessions with turns
// waiting behind it hold fails the run, naming the keys to change: it
// used to preempt itself, move its KV out and back in and ask again, for
// ever (a review found the run on this workload never ended under swap).
func TestARequestAloneShortOfBlocksFailsTheRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(82, 13))
	sessions := randomChats(rng)
	kvTokens := int64(420 + rng.IntN(900))
	for _, mode := range []Preemption{PreemptSwap} {
		cfg := rigConfig(t, "recompute")
		cfg.Engine, cfg.MaxBatch, cfg.TokenBudget = Engine{KVAlloc: AllocIncremental, Preemption: mode}, 8, 256
		r := newRig(t, rigSpec{cfg: cfg, kvTokens: kvTokens, sessions: sessions})
		r.eng.Run()
		require.Error(t, r.s.Failure(), "%s", mode)
		assert.Contains(t, r.s.Failure().Error(), "running alone", "%s", mode)
		assert.Contains(t, r.s.Failure().Error(), "accelerator.kv_capacity", "%s", mode)
	}
}

// Under memory pressure the incremental engine runs more requests at
// once than reserving prompt and output whole, and preempts to do it.
func TestIncrementalRunsMoreAtOnceThanReserve(t *testing.T) {
	sessions := chats(8, 1, 200, 0, false)
	for i := range sessions {
		sessions[i].Turns[0].OutputCount = 200
	}
	_, _, reserved := engineRun(t, "recompute", Engine{}, 1600, sessions)
	_, _, incremental := engineRun(t, "recompute", Engine{KVAlloc: AllocIncremental}, 1600, sessions)
	assert.Equal(t, int64(4), reserved.PeakRunning, "400 tokens each in 1,600")
	assert.Greater(t, incremental.PeakRunning, reserved.PeakRunning, "200 prompt tokens each at admission, growing by decode steps")
	assert.Zero(t, reserved.Preemptions)
	assert.Positive(t, incremental.Preemptions)
}

// BenchmarkSchedulerStep runs batches of 8, 64 and 512 requests of long
// answers through one node (a fake accelerator, memory to spare) under
// both allocations, and reports the scheduler's time per sequence per
// iteration (ns/seq-step, the whole run's wall time over every member of
// every iteration): flat across batch sizes, the incremental engine adds
// a constant cost per sequence, its block count touched only when a
// decode crosses a block (every accelerator.kv_block_tokens steps), and
// no cost that grows with the batch beyond the iteration's own members.
func BenchmarkSchedulerStep(b *testing.B) {
	for _, batch := range []int{8, 64, 512} {
		for _, alloc := range []KVAlloc{AllocReserve, AllocIncremental} {
			b.Run(fmt.Sprintf("batch%d/%s", batch, alloc), func(b *testing.B) {
				sessions := make([]workloads.Session, batch)
				for i := range sessions {
					sessions[i] = workloads.Session{ID: int64(i), Turns: []workloads.Turn{turn(100, 400, 0)}}
				}
				cfg := validConfig()
				cfg.Design, _ = store.ParseDesign("recompute")
				cfg.MaxBatch, cfg.TokenBudget, cfg.Engine.KVAlloc = batch, 1<<16, alloc
				var steps int64
				for b.Loop() {
					eng := sim.NewEngine(64)
					exec := &countingExecutor{eng: eng}
					kv, err := accel.NewKVMemory(int64(batch)*1000*cfg.KVBytesPerToken, cfg.KVBytesPerToken, 16)
					require.NoError(b, err)
					s, err := NewSystem(eng, cfg, []Node{{Exec: exec, KV: kv}}, nil, &workloads.Workload{Sessions: sessions}, sim.NewStreams(1))
					require.NoError(b, err)
					eng.Run()
					steps += exec.sequences
					require.Len(b, s.Records(), batch)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/seq-step")
			})
		}
	}
}

// countingExecutor runs every iteration in a millisecond and counts its
// sequences.
type countingExecutor struct {
	eng       *sim.Engine
	sequences int64
}

func (c *countingExecutor) Run(it accel.Iteration, done sim.Event) accel.Cost {
	c.sequences += int64(len(it.Decodes) + len(it.Prefills))
	c.eng.Schedule(c.eng.Now()+sim.Millisecond, done)
	return accel.Cost{Total: sim.Millisecond}
}
