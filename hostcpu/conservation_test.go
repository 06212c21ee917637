package hostcpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/workloads"
)

// TestConservationNamesEveryBrokenCount breaks each count the run's
// conservation check adds up (docs/invariants.md, INV-1 to INV-7) after a
// run whose counts hold, and checks that the check fails naming the
// simulated time and the count.
func TestConservationNamesEveryBrokenCount(t *testing.T) {
	cases := []struct {
		name    string
		corrupt func(s *System)
		want    string
	}{
		{"a decision counted twice", func(s *System) { s.counts.Decisions["first_tokens"]++ },
			"decision first_tokens counted 3 times for 2 requests; 3 decisions for 2 requests"},
		{"a query neither hit nor miss", func(s *System) { s.counts.Queries++ }, "1 queries but 0 hits + 0 misses"},
		{"a hit no request had", func(s *System) { s.counts.Queries++; s.counts.QueryHits++ }, "0 requests hit but 1 query hits counted"},
		{"a prefetch never settled", func(s *System) { s.counts.Prefetches++ }, "1 prefetches but 0 used + 0 late"},
		{"a pre-load never settled", func(s *System) { s.counts.Preloads++ }, "1 pre-loads but 0 used + 0 wasted"},
		{"a look-ahead never settled", func(s *System) { s.counts.LookAheads++ }, "1 look-aheads but 0 used + 0 wasted"},
		{"a closed-loop slot still held", func(s *System) { s.closed.inFlight++ }, "1 closed-loop slots still held when every request has ended"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := recomputeConfig()
			cfg.MaxConcurrency = 1 // a closed loop
			s, _, eng := newTestSystem(t, cfg, 1000,
				workloads.Session{ID: 0, Turns: []workloads.Turn{turn(100, 2, 0)}},
				workloads.Session{ID: 1, Turns: []workloads.Turn{turn(100, 2, 0)}})
			eng.Run()
			_, err := s.Conservation()
			require.NoError(t, err, "the run's own counts hold")
			c.corrupt(s)
			_, err = s.Conservation()
			require.Error(t, err)
			assert.Regexp(t, `^hostcpu: at \d.*s: counts not conserved: `, err.Error())
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
