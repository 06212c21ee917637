package hostcpu

import (
	"fmt"
	"strings"
)

// Conservation is a run's count check: every request's claim-2 outcome is
// counted exactly once, every store query ends a hit or a miss, as the
// records and the counters both tell it, and every export started ends or
// is dropped.
type Conservation struct {
	Requests, Decided     int64
	Queries, Hits, Misses int64
	// ExportsStarted = ExportsEnded (stored or failed) + ExportsDropped
	ExportsStarted, ExportsEnded, ExportsDropped int64
}

// Conservation counts the run's outcomes from the records and the
// counters and returns an error naming every count that does not add up
// and everything the run still holds (leftovers). It holds only once
// every request has ended.
func (s *System) Conservation() (Conservation, error) {
	c := Conservation{Requests: int64(len(s.records)), Queries: s.counts.Queries,
		Hits: s.counts.QueryHits, Misses: s.counts.QueryMiss,
		ExportsStarted: s.counts.ExportsStarted, ExportsEnded: s.counts.Exports, ExportsDropped: s.counts.ExportsDropped}
	if err := s.stalled(); err != nil {
		return c, err
	}
	byDecision := map[string]int64{}
	var hitRecords int64
	for _, r := range s.records {
		byDecision[r.Decision.String()]++
		if r.Hit {
			hitRecords++
		}
	}
	var faults []string
	for _, name := range Decisions.Names() {
		c.Decided += s.counts.Decisions[name]
		if got, want := s.counts.Decisions[name], byDecision[name]; got != want {
			faults = append(faults, fmt.Sprintf("decision %s counted %d times for %d requests", name, got, want))
		}
	}
	if c.Decided != c.Requests {
		faults = append(faults, fmt.Sprintf("%d decisions for %d requests", c.Decided, c.Requests))
	}
	if c.Hits+c.Misses != c.Queries {
		faults = append(faults, fmt.Sprintf("%d queries but %d hits + %d misses", c.Queries, c.Hits, c.Misses))
	}
	if hitRecords != c.Hits {
		faults = append(faults, fmt.Sprintf("%d requests hit but %d query hits counted", hitRecords, c.Hits))
	}
	if p := s.counts; p.Prefetches != p.PrefetchUsed+p.PrefetchLate {
		faults = append(faults, fmt.Sprintf("%d prefetches but %d used + %d late", p.Prefetches, p.PrefetchUsed, p.PrefetchLate))
	}
	for _, n := range s.nodes {
		if n.staged != 0 {
			faults = append(faults, fmt.Sprintf("node %d: %d B of prefetched KV still counted in host memory when every request has ended", n.index, n.staged)) // INV-43
		}
	}
	if p := s.counts; p.Preloads != p.PreloadUsed+p.PreloadWasted {
		faults = append(faults, fmt.Sprintf("%d pre-loads but %d used + %d wasted", p.Preloads, p.PreloadUsed, p.PreloadWasted))
	}
	if n := s.preloads.unsettledPreloads(); n > 0 {
		faults = append(faults, fmt.Sprintf("%d pre-loads whose session's next turn never came", n))
	}
	if p := s.counts; p.LookAheads != p.LookAheadUsed+p.LookAheadWasted {
		faults = append(faults, fmt.Sprintf("%d look-aheads but %d used + %d wasted", p.LookAheads, p.LookAheadUsed, p.LookAheadWasted))
	}
	if n := s.ahead.unsettledRaises(); n > 0 {
		faults = append(faults, fmt.Sprintf("%d look-ahead raises whose session's next turn never came", n))
	}
	if s.closed != nil && s.closed.inFlight != 0 {
		faults = append(faults, fmt.Sprintf("%d closed-loop slots still held when every request has ended", s.closed.inFlight))
	}
	for _, n := range s.nodes {
		if err := n.KV.Audit(func(seq int64) bool { return n.residents.holds(seq) }); err != nil {
			faults = append(faults, fmt.Sprintf("node %d: %v", n.index, err)) // INV-40
		}
	}
	faults = append(append(faults, s.counts.exportFaults()...), s.leftovers()...)
	if len(faults) > 0 {
		return c, fmt.Errorf("hostcpu: at %v: counts not conserved: %s", s.eng.Now(), strings.Join(faults, "; "))
	}
	return c, nil
}

// stalled reports a node whose requests still wait for admission when no
// event is left: the request at the head of its queue needs device KV
// memory that only resident sessions hold, and they are not idle, since
// their next turns are on the way or wait behind it. Nothing running will
// free memory, so nothing is admitted again. Without this the run ended in
// counts that did not add up (the requests never decided), naming nothing.
func (s *System) stalled() error {
	for _, n := range s.nodes {
		queue := &n.waiting
		if n.resumable.Len() > 0 { // a preempted request goes first
			queue = &n.resumable
		}
		if queue.Len() == 0 || len(n.running) > 0 {
			continue
		}
		r := s.reqs.At(queue.Peek())
		tokens := s.pages.admissionTokens(r)
		remedy := "give the accelerator more KV memory (accelerator.kv_capacity) or run fewer sessions at once (workload.max_concurrency)"
		if s.preloads.on {
			remedy = "give the accelerator more KV memory (accelerator.kv_capacity), a smaller pre-load buffer (store.preload_buffer, set aside from it) or run fewer sessions at once (workload.max_concurrency)"
		}
		return fmt.Errorf("hostcpu: at %v: node %d stalled with %d requests waiting and none running: "+
			"the first (session %d, turn %d) needs %d more KV blocks, %d of %d are free, and the sessions "+
			"holding the rest have turns on the way or queued behind it; %s",
			s.eng.Now(), n.index, n.waiting.Len()+n.resumable.Len(), r.sess.id, r.rec.Turn, n.KV.Extra(r.sess.id, tokens), n.KV.Free(), n.KV.Total(), remedy)
	}
	return nil
}
