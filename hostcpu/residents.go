package hostcpu

import (
	"iter"
	"maps"

	"github.com/google/btree"

	"github.com/kvcosim/kvcosim/sim"
)

// residents are the sessions whose KV a node's accelerator holds between
// their turns, in the order a device eviction takes them: least recently
// used first, the lowest id among equals. A map scanned at every eviction
// cost a cluster's day 2.3 s of its 67 (issue 41); the tree finds the
// victim at its front.
type residents struct {
	byID  map[int64]resident
	byUse *btree.BTreeG[residentKey]
}

// resident is a kept session and its place in the order.
type resident struct {
	sess *session
	key  residentKey
}

// residentKey orders a resident session by its last use, then its id.
type residentKey struct {
	lastUse sim.Time
	id      int64
}

func residentLess(a, b residentKey) bool {
	return a.lastUse < b.lastUse || (a.lastUse == b.lastUse && a.id < b.id)
}

func newResidents() residents {
	return residents{byID: map[int64]resident{}, byUse: btree.NewG(16, residentLess)}
}

// add keeps sess, used last at sess.lastUse.
func (rs residents) add(sess *session) {
	rs.remove(sess.id)
	key := residentKey{sess.lastUse, sess.id}
	rs.byID[sess.id] = resident{sess, key}
	rs.byUse.ReplaceOrInsert(key)
}

// remove lets session id go (nothing if it is not kept).
func (rs residents) remove(id int64) {
	if r, ok := rs.byID[id]; ok {
		delete(rs.byID, id)
		rs.byUse.Delete(r.key)
	}
}

// holds reports whether session id is kept.
func (rs residents) holds(id int64) bool { _, ok := rs.byID[id]; return ok }

// all are the kept sessions, in no order.
func (rs residents) all() iter.Seq[*session] {
	return func(yield func(*session) bool) {
		for r := range maps.Values(rs.byID) {
			if !yield(r.sess) {
				return
			}
		}
	}
}

// lruIdle is the least recently used of the sessions that are idle (the
// lowest id among equals), or nil when none is: one whose next turn is on
// the way is not.
func (rs residents) lruIdle() *session {
	var victim *session
	rs.byUse.Ascend(func(k residentKey) bool {
		if sess := rs.byID[k.id].sess; !sess.running {
			victim = sess
			return false
		}
		return true
	})
	return victim
}
