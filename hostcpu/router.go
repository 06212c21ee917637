package hostcpu

import "github.com/kvcosim/kvcosim/sim"

// router keeps a session on the node it last ran on, except for the
// migrating fraction of resumed turns, which go to another node chosen at
// random (what a migration study asks of the store: the KV must follow).
type router struct {
	nodes   int
	migrate float64 // the share of resumed turns moved
	rng     *sim.Stream
}

// route returns the node of a turn of session id, last on node last (-1:
// a first turn), pinned by its trace to node pinned (-1: not pinned), and
// whether the turn moved.
func (r router) route(id int64, last, pinned int) (node int, moved bool) {
	switch {
	case pinned >= 0:
		return pinned % r.nodes, false
	case last < 0:
		return int(id % int64(r.nodes)), false
	case r.nodes > 1 && r.migrate > 0 && r.rng.Float64() < r.migrate:
		return (last + 1 + r.rng.IntN(r.nodes-1)) % r.nodes, true
	}
	return last, false
}
