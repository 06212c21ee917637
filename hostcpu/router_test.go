package hostcpu

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvcosim/kvcosim/sim"
)

func TestRouterKeepsSessionsOnTheirNodeAndMovesTheMigratingShare(t *testing.T) {
	rng := func() *sim.Stream { return sim.NewStreams(1).Stream("routing") }
	cases := []struct {
		name                string
		r                   router
		id                  int64
		last, pinned        int
		wantNode            int
		wantMoved, anyOther bool
	}{
		{"a first turn goes by session id", router{nodes: 4, rng: rng()}, 10, -1, -1, 2, false, false},
		{"a pinned turn goes where the trace says", router{nodes: 4, migrate: 1, rng: rng()}, 10, 1, 7, 3, false, false},
		{"sticky without migration", router{nodes: 4, rng: rng()}, 10, 1, -1, 1, false, false},
		{"one node cannot migrate", router{nodes: 1, migrate: 1, rng: rng()}, 10, 0, -1, 0, false, false},
		{"everything migrates at fraction 1", router{nodes: 4, migrate: 1, rng: rng()}, 10, 1, -1, 0, true, true},
	}
	for _, c := range cases {
		node, moved := c.r.route(c.id, c.last, c.pinned)
		assert.Equal(t, c.wantMoved, moved, c.name)
		if c.anyOther {
			assert.NotEqual(t, c.last, node, c.name)
			assert.True(t, node >= 0 && node < c.r.nodes, c.name)
			continue
		}
		assert.Equal(t, c.wantNode, node, c.name)
	}
}

// TestRouterMigratesItsShare: over many resumed turns the share moved is
// the fraction asked for, and a moved turn never stays.
func TestRouterMigratesItsShare(t *testing.T) {
	r := router{nodes: 3, migrate: 0.25, rng: sim.NewStreams(7).Stream("routing")}
	moves := 0
	for i := range 20000 {
		node, moved := r.route(int64(i), i%3, -1)
		if moved {
			moves++
			assert.NotEqual(t, i%3, node)
		}
	}
	assert.InDelta(t, 0.25, float64(moves)/20000, 0.01)
}
