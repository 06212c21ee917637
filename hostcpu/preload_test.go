package hostcpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/hostcpu/mech"
	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/sim"
)

// TestPreloadWaitingKeepsTheQueueMoving holds store.preload: waiting to
// its rule after every event of random open-loop runs (one or two nodes,
// small batches and read buffers, KV below the DRAM tier): each node's
// read buffer holds exactly the bytes of the pre-loads held on it and no
// more than its size, at most one pre-load moves per node, a pre-load just
// started passed over no request before it that could have one (queue
// order: one that does not fit holds back those behind it), and a node
// with none moving has no waiting request among the next max_batch that
// could be pre-loaded and fits beside what is held, so the walk runs
// whenever that could change (a lookup, a prefetch or an export ending,
// an admission, a refusal).
func TestPreloadWaitingKeepsTheQueueMoving(t *testing.T) {
	seeds := uint64(256)
	if testing.Short() {
		seeds = 6
	}
	var preloads, prefetched int64
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(seed, 17))
		cfg := rigConfig(t, "cachedattention")
		cfg.DropAfterTurn, cfg.Mech.Preload = true, mech.PreloadWaiting
		cfg.Mech.PreloadBufferBytes = int64(64+rng.IntN(512)) << 10
		cfg.MaxBatch = 2 + rng.IntN(6)
		r := newRig(t, rigSpec{cfg: cfg, kvTokens: int64(256 + rng.IntN(5888)), sessions: randomChats(rng), nodes: 1 + rng.IntN(2)})
		for before := int64(0); r.s.Failure() == nil && r.eng.Step(); before = r.s.counts.Preloads {
			if fault := waitingPreloadFault(r.s, r.s.counts.Preloads > before); fault != "" {
				require.Failf(t, "pre-load rule broken", "seed %d at %v: %s", seed, r.eng.Now(), fault)
			}
		}
		require.NoError(t, r.s.Failure(), "seed %d", seed)
		_, err := r.s.Conservation()
		require.NoError(t, err, "seed %d", seed)
		c := r.s.Counts()
		preloads, prefetched = preloads+c.Preloads, prefetched+c.Prefetches
	}
	assert.Positive(t, preloads, "no run pre-loaded: the rule was not exercised")
	assert.Positive(t, prefetched, "no run prefetched: no pre-load read a landed prefetch")
}

// waitingPreloadFault checks the nodes' read buffers and pre-loads against
// the sessions' (a reference recount) and the waiting requests, and, if a
// pre-load has just started, its place in the queue; "" if the rule holds.
func waitingPreloadFault(s *System, started bool) string {
	for _, n := range s.nodes {
		var held int64
		moving := 0
		for _, sess := range s.sessions {
			p := sess.preload
			if p.state == preloadNone || p.node != n.index {
				continue
			}
			if p.held() && p.waiter < 0 { // a used pre-load still moving is its request's KV memory already
				held += p.bytes
			}
			if p.state == preloadMoving || p.state == preloadDropped {
				moving++
			}
		}
		if fault := passedOver(s, n); started && fault != "" {
			return fault
		}
		switch {
		case held != n.preloadBytes:
			return fmt.Sprintf("node %d counts %d B in its read buffer, its sessions' pre-loads hold %d B", n.index, n.preloadBytes, held)
		case held > s.cfg.Mech.PreloadBufferBytes:
			return fmt.Sprintf("node %d holds %d B in a read buffer of %d B", n.index, held, s.cfg.Mech.PreloadBufferBytes)
		case moving > 1 || (moving == 1) != n.preloading:
			return fmt.Sprintf("node %d has %d pre-loads moving, preloading %v", n.index, moving, n.preloading)
		case n.preloading:
			continue
		}
		for i := range min(n.waiting.Len(), s.cfg.MaxBatch) {
			r := s.reqs.At(n.waiting.At(i))
			if !s.preloads.waitingPreloadable(n, r) {
				continue
			}
			if n.preloadBytes+r.rec.ImportBytes <= s.cfg.Mech.PreloadBufferBytes {
				return fmt.Sprintf("node %d moves no pre-load, and request %d (%d in line) could be pre-loaded", n.index, r.rec.ID, i)
			}
			break
		}
	}
	return ""
}

// passedOver names a request that could have been pre-loaded and waits
// before the one whose pre-load started now on node n; "" if none does.
func passedOver(s *System, n *nodeState) string {
	var eligible []int64
	for i := range min(n.waiting.Len(), s.cfg.MaxBatch) {
		r := s.reqs.At(n.waiting.At(i))
		if p := r.sess.preload; p.state == preloadMoving && p.start == s.eng.Now() && p.waiter < 0 {
			if len(eligible) > 0 {
				return fmt.Sprintf("node %d started the pre-load of request %d (%d in line) past request %d, which could have one", n.index, r.rec.ID, i, eligible[0])
			}
			return ""
		}
		if s.preloads.waitingPreloadable(n, r) {
			eligible = append(eligible, r.rec.ID)
		}
	}
	return ""
}

// TestAPreloadWithNothingToMoveFailsTheRun: a pre-load whose extents hold
// no bytes would never land and would keep its node's next pre-load
// waiting for ever; startPreload fails the run instead (INV-41), naming
// the node and the session.
func TestAPreloadWithNothingToMoveFailsTheRun(t *testing.T) {
	cfg := rigConfig(t, "cachedattention")
	cfg.Mech.Preload = mech.PreloadWaiting
	r := newRig(t, rigSpec{cfg: cfg, kvTokens: 4096, sessions: chats(1, 1, 10, 0, false)})
	sess := r.s.sessions[0]
	key := kvstore.Key{Tokens: 10, Hash: 1}
	sess.exported = &key
	r.s.preloads.startPreload(sess, r.s.nodes[0], []kvstore.Extent{{Bytes: 0}}, 4096, false)
	require.Error(t, r.s.Failure())
	assert.Contains(t, r.s.Failure().Error(), "node 0: a pre-load of 4096 B for session 0 has no extent to move")
}

// TestOpenLoopPrefetchKeepsToItsWindow holds an open loop's queue
// prefetch to its look-ahead window after every event of random runs
// (cachedattention or lmcache, one or two nodes, small batches, a DRAM
// tier of a few regions, some requests too large ever to run, the
// automatic window or a few requests more than a batch): walking each
// node's waiting requests in queue order, one that found KV below the top
// tier lies in the window if it is among the next max_batch or, with
// auto, the bytes staged up to it fit the node's share of the top tier
// (with N, it is among the next max_batch + N), and the walk stops at the
// first that does not. Every such request in the window has its prefetch
// moving or landed (or its KV pre-loaded, or it will be refused), none
// beyond it has, what those past the first max_batch stage fits the
// share, and the count of staged bytes (summary.json's peak) is their sum,
// so the window advances whenever the queue's head moves or staged KV
// leaves host memory.
func TestOpenLoopPrefetchKeepsToItsWindow(t *testing.T) {
	seeds := uint64(64)
	if testing.Short() {
		seeds = 16
	}
	var deferred, prefetched, refused int64
	for seed := range seeds {
		var peak int64
		deferredIDs := map[int64]bool{}
		rng := rand.New(rand.NewPCG(seed, 23))
		design := []string{"cachedattention", "cachedattention", "cachedattention", "lmcache"}[rng.IntN(4)]
		cfg := rigConfig(t, design)
		cfg.DropAfterTurn, cfg.MaxBatch, cfg.Mech.Prefetch = true, 1+rng.IntN(3), mech.PrefetchQueue
		if rng.IntN(3) == 0 {
			cfg.Mech.PrefetchWindowTurns = rng.IntN(4)
		}
		if design == "cachedattention" && rng.IntN(2) == 0 {
			cfg.Mech.Preload = mech.PreloadWaiting
		}
		tiers := []kvstore.Tier{{Name: "dram", Bytes: int64(4+rng.IntN(60)) * 16 << 10}, {Name: "ssd", Bytes: 8 << 20}}
		r := newRig(t, rigSpec{cfg: cfg, kvTokens: int64(256 + rng.IntN(2560)), tiers: tiers, sessions: randomChats(rng), nodes: 1 + rng.IntN(2)})
		for r.s.Failure() == nil && r.eng.Step() {
			fault, waits := prefetchWindowFault(r.s)
			if fault == "" {
				fault = stagedFault(r.s, &peak, deferredIDs)
			}
			require.Empty(t, fault, "seed %d (%s) at %v", seed, design, r.eng.Now())
			deferred += waits
		}
		require.NoError(t, r.s.Failure(), "seed %d", seed)
		assert.Equal(t, int64(len(deferredIDs)), r.s.Counts().PrefetchDeferred, "seed %d: the requests seen waiting for the window", seed)
		_, err := r.s.Conservation()
		require.NoError(t, err, "seed %d", seed)
		prefetched += r.s.Counts().Prefetches
		refused += r.s.rejected[RejectKVMemory]
	}
	assert.Positive(t, deferred, "no request waited for the window: the rule was not exercised")
	assert.Positive(t, prefetched, "no run prefetched")
	assert.Positive(t, refused, "no request was refused: the refusal's walk was not exercised")
}

// prefetchWindowFault walks each node's waiting requests against the
// window's rule; it returns the first breach ("" if none) and how many
// requests wait beyond the window.
func prefetchWindowFault(s *System) (string, int64) {
	share := topTierBytes(s.pool) / int64(len(s.nodes))
	w := s.cfg.Mech.PrefetchWindowTurns
	var waits int64
	for _, n := range s.nodes {
		var staged, past int64
		stopped := false
		for i := range n.waiting.Len() {
			r := s.reqs.At(n.waiting.At(i))
			var b int64
			for _, x := range r.found.Extents {
				if x.Tier > 0 {
					b += x.Bytes
				}
			}
			switch {
			case b == 0 || r.load != loadAwaiting:
				continue
			case r.prefetch == prefetchNone:
				if !s.preloads.preloaded(r) && n.KV.BlocksFor(r.rec.PromptTokens+r.rec.OutputTokens) <= n.KV.Total() {
					return fmt.Sprintf("node %d: request %d, %d in line, found %d B below the top tier and has no prefetch", n.index, r.rec.ID, i, b), 0
				}
				continue
			}
			in := !stopped && (i < s.cfg.MaxBatch || (w == mech.AutoWindow && staged+b <= share) || (w != mech.AutoWindow && i < s.cfg.MaxBatch+w))
			stopped = !in
			switch {
			case in && r.prefetch == prefetchDeferred:
				return fmt.Sprintf("node %d: request %d, %d in line, lies in the window and waits for it", n.index, r.rec.ID, i), 0
			case !in && r.prefetch != prefetchDeferred:
				return fmt.Sprintf("node %d: request %d, %d in line beyond the window, has its prefetch %d", n.index, r.rec.ID, i, r.prefetch), 0
			case !in:
				waits++
				continue
			}
			staged += b
			if i >= s.cfg.MaxBatch {
				past += b
			}
		}
		if w == mech.AutoWindow && past > share {
			return fmt.Sprintf("node %d stages %d B past its next %d requests, over its %d B share of the top tier", n.index, past, s.cfg.MaxBatch, share), 0
		}
	}
	return "", waits
}

// stagedFault recounts each node's prefetched copies in host memory, from
// a prefetch's start until the load or pre-load that reads the copy lands
// (its waiting, running and resumable requests' and the pre-loads on it),
// against the node's count, and the greatest over the run, kept in peak,
// against summary.json's; it adds the requests waiting for the window to
// deferred. It returns "" if they agree.
func stagedFault(s *System, peak *int64, deferred map[int64]bool) string {
	for _, n := range s.nodes {
		var held int64
		for _, q := range []sim.FIFO[int]{n.waiting, n.resumable} {
			for i := range q.Len() {
				r := s.reqs.At(q.At(i))
				held += r.staged
				if r.prefetch == prefetchDeferred {
					deferred[r.rec.ID] = true
				}
			}
		}
		for _, slot := range n.running {
			held += s.reqs.At(slot).staged
		}
		for _, sess := range s.sessions {
			if sess.preload.node == n.index {
				held += sess.preload.staged
			}
		}
		if held != n.staged {
			return fmt.Sprintf("node %d: its prefetched copies hold %d B of host memory, counted %d B", n.index, held, n.staged)
		}
		*peak = max(*peak, held)
	}
	if got := s.counts.PrefetchStagedPeakBytes; got != *peak {
		return fmt.Sprintf("the most any node's prefetched copies held at once was %d B, counted %d B", *peak, got)
	}
	return ""
}

// TestAnAdmissionBeforeThePrefetchWindowFailsTheRun: the request next in
// line is always in an open loop's look-ahead window, and every pop from
// the queue advances it, so a request admitted while its prefetch still
// waits for the window means the walk was missed; startLoad fails the run
// (INV-42), naming the node and the request.
func TestAnAdmissionBeforeThePrefetchWindowFailsTheRun(t *testing.T) {
	cfg := rigConfig(t, "cachedattention")
	r := newRig(t, rigSpec{cfg: cfg, kvTokens: 4096, sessions: chats(1, 1, 10, 0, false)})
	for r.s.reqs.Len() == 0 && r.eng.Step() {
	}
	r.s.reqs.At(0).prefetch = prefetchDeferred // the first request's slot
	r.s.loads.startLoad(0)
	require.Error(t, r.s.Failure())
	assert.Contains(t, r.s.Failure().Error(), "node0: request 0 was admitted while its prefetch waited for the look-ahead window (INV-42)")
}

// TestPrefetchedKVLeftInHostMemoryFailsTheCheck: every byte an open
// loop's prefetch stages in host memory leaves it when its request is
// admitted or pre-loaded, so a run that ends with staged bytes still
// counted fails its conservation check (INV-43).
func TestPrefetchedKVLeftInHostMemoryFailsTheCheck(t *testing.T) {
	cfg := rigConfig(t, "cachedattention")
	r := newRig(t, rigSpec{cfg: cfg, kvTokens: 4096, sessions: chats(1, 2, 10, 0, false)})
	r.run(t) // its own conservation check passes
	r.s.nodes[0].staged = 4096
	_, err := r.s.Conservation()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "node 0: 4096 B of prefetched KV still counted in host memory when every request has ended")
}
