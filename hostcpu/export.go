package hostcpu

import (
	"fmt"
	"github.com/kvcosim/kvcosim/hostcpu/mech"
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"github.com/kvcosim/kvcosim/kvstore"
	"strconv"

	"github.com/kvcosim/kvcosim/accel/tinylm"
	"github.com/kvcosim/kvcosim/sim"
)

// exportTask stores a session's KV after a turn (write-through) or when the
// accelerator drops it (write-back).
type exportTask struct {
	sess    *session
	node    int
	record  int // the record that pays for it, or -1
	started sim.Time
	phase   int
	pending int
	key     kvstore.Key
	blocks  []kvstore.Key
	result  store.Outcome
	bytes   int64
	// tokens and cut are the session's history length and truncated
	// tokens when the export began: what the stored version holds
	tokens, cut int64
	// from is the first of the key's tokens stored (kvstore.Object.From)
	from int64
	// kv and ids are functional mode's snapshot of what is stored
	kv  *tinylm.Cache
	ids []uint32
}

// exporter is the export phases and the asynchronous save's buffer
// (store.save: async): the exports in flight, the bytes copied but not yet
// stored, and the exports blocked for room.
type exporter struct {
	s        *System
	tasks    sim.Slots[exportTask]
	buffered int64
	blocked  sim.FIFO[int]
}

// startExport begins an export of the session's whole history.
func (ex *exporter) startExport(sess *session, node int, record int) {
	s := ex.s
	if !s.cfg.Design.Stores || sess.storedTokens == sess.historyLen {
		return
	}
	if sess.exporting {
		sess.exportAgain = true
		return
	}
	sess.exporting = true
	s.counts.ExportsStarted++
	t := exportTask{sess: sess, node: node, record: record, started: s.eng.Now(), kv: sess.kv, ids: sess.history,
		tokens: sess.historyLen, cut: sess.cut}
	newTokens := sess.historyLen - sess.storedTokens
	if s.cfg.Scheme == kvstore.SchemeBlock {
		t.blocks = s.keys.hashedBlocks(sess, sess.history, sess.historyLen)
		if ids := s.keys.traceKeys(sess); ids != nil {
			t.blocks = ids
		}
	} else {
		t.key = s.keys.objectKey(sess)
		if s.cfg.Design.DecoupledPositions {
			t.from = sess.cut // a session key counts the truncated tokens too
		}
		if sess.exported == nil || s.cfg.ExportMode == kvstore.ExportFull || t.from > sess.storedFrom {
			newTokens = sess.historyLen // the whole object is rewritten (a delta too, after a truncation)
		}
	}
	t.bytes = newTokens * s.cfg.KVBytesPerToken
	if s.cfg.Mech.Save == mech.SaveAsync && !ex.bufferRoom(t.bytes) {
		if s.cfg.Mech.AsyncFull == mech.FullDrop {
			s.counts.ExportsDropped++
			sess.exporting = false
			return
		}
		s.counts.ExportsBlocked++
		ex.blocked.Push(ex.tasks.Put(t))
		return
	}
	if s.cfg.Mech.Save == mech.SaveAsync { // a synchronous save holds no buffer (its count grew for ever)
		ex.buffered += t.bytes
	}
	ex.exportStep(ex.tasks.Put(t))
}

// bufferRoom reports whether an asynchronous export of bytes may start:
// the buffer has room, or (an export larger than all of it) is empty and
// no export waits before it.
func (ex *exporter) bufferRoom(bytes int64) bool {
	return ex.blocked.Len() == 0 && ex.bufferFits(bytes)
}

// bufferFits reports whether bytes more fit the asynchronous buffer, or
// it is empty (an export larger than all of it goes alone).
func (ex *exporter) bufferFits(bytes int64) bool {
	s := ex.s
	return ex.buffered+bytes <= s.cfg.Mech.AsyncBufferBytes || ex.buffered == 0
}

// unblock starts the exports that waited for the buffer, in order, while
// it has room.
func (ex *exporter) unblock() {
	for ex.blocked.Len() > 0 {
		t := ex.tasks.At(ex.blocked.Peek())
		if !ex.bufferFits(t.bytes) {
			return
		}
		ex.buffered += t.bytes
		ex.exportStep(ex.blocked.Pop())
	}
}

// exportStep advances an export: move the KV off the accelerator, then
// store it; the parts of the store's work count down.
func (ex *exporter) exportStep(id int) {
	s := ex.s
	t := ex.tasks.At(id)
	t.phase++
	switch {
	case t.phase == 1:
		s.store.Offload(ticket(opExportStep, id), ex.exportOf(t))
	case t.phase == 2:
		// Save, then let a turn parked behind the export go (async): a
		// CPU-run store looks up on the spot and enters the new version
		// in its index as the save begins, so the turn finds the version
		// being saved, as LMCache's lookup finds the chunks a store has
		// just put in its CPU cache and CachedAttention's the KV still in
		// host memory; the bytes not yet in their tier come from the
		// buffer (store.cpuStore.Import). Let go before the save, the turn
		// found the previous version and recomputed its whole history.
		t.pending = s.store.Save(ticket(opExportStep, id), ex.exportOf(t)) // t stays put: a slot table's values never move
		if s.cfg.Mech.Save == mech.SaveAsync {
			t.sess.buffered = true // the next turn need not wait
			// a CPU-run store's writes (the FPGA's result comes at its end)
			t.sess.saving = t.result.Export.Writes
			ex.unpark(t.sess)
		}
		if t.pending == 0 {
			ex.exported(id)
		}
	case t.phase == 3 && t.pending > 1:
		t.pending--
		t.phase--
	default:
		ex.exported(id)
	}
}

// object is what the export stores: the session's new patent key (and its
// previous version), or its block keys.
func (t *exportTask) object() kvstore.Object {
	return kvstore.Object{Key: t.key, Prev: t.sess.exported, Blocks: t.blocks, Held: t.sess.heldBlocks, From: t.from}
}

// exportOf is what the store is handed of an export.
func (ex *exporter) exportOf(t *exportTask) store.Export {
	return store.Export{Session: t.sess.id, Node: t.node, Bytes: t.bytes, Object: t.object(), HistoryTokens: t.sess.historyLen}
}

// exported ends an export: the session's stored version is now its
// history, and a request waiting for it proceeds.
func (ex *exporter) exported(id int) {
	s := ex.s
	t := ex.tasks.Take(id)
	sess := t.sess
	sess.exporting, sess.buffered, sess.saving = false, false, nil
	if s.cfg.Mech.Save == mech.SaveAsync {
		ex.buffered -= t.bytes
		defer ex.unblock()
	}
	if s.fn != nil {
		s.fn.writeExport(&t)
	}
	s.counts.Exports++
	if t.result.Err != nil {
		s.counts.ExportFailed++
	} else {
		sess.storedTokens = s.window.stillValid(t.tokens, sess.cut-t.cut)
		if s.cfg.Scheme == kvstore.SchemeBlock {
			sess.heldBlocks = len(t.blocks)
		} else {
			k := t.key
			sess.exported, sess.storedFrom = &k, t.from
		}
	}
	if t.record >= 0 {
		x := t.result.Export
		first := "none"
		if len(x.Writes) > 0 {
			first = fmt.Sprintf("%#x", x.Writes[0].Addr)
		}
		attrs := []string{"regions", strconv.Itoa(x.Regions), "inserted", strconv.Itoa(x.Inserted), "superseded", strconv.Itoa(x.Superseded),
			"evicted", strconv.Itoa(x.Evicted), "first_address", first}
		if t.result.Err != nil {
			attrs = append(attrs, "error", t.result.Err.Error())
		}
		s.span(t.node, s.store.Part(), TaskExport, "", sess.id, s.records[t.record].Turn, t.started, t.bytes, attrs...)
		s.records[t.record].Export = s.eng.Now() - t.started
		s.records[t.record].ExportBytes = t.bytes
	}
	if sess.exportAgain {
		sess.exportAgain = false
		ex.startExport(sess, t.node, sess.lastRecord)
	}
	ex.unpark(sess)
	s.release(sess)
	ex.forget(sess)
	s.preloads.waitingChanged() // a request looked up during the export may be pre-loaded now
}

// forget lets the history of a session that has ended go once its last
// export is stored: written through (store.export: after_turn), nothing
// reads its tokens again, and a cluster's day holds a million sessions'
// (issue 41: 3 GB of a day's 13 GB heap, when every history was a copy).
// A history borrowed from the workload's array (promptOf) stays with the
// workload. Functional mode keeps them.
func (ex *exporter) forget(sess *session) {
	s := ex.s
	if sess.turn < len(sess.plan.Turns) || sess.exporting || s.cfg.Export != AfterTurn || s.fn != nil {
		return
	}
	sess.history, sess.keyed = nil, kvstore.HistoryKeys{}
}

// unpark lets a request parked behind the session's export decide again
// once the store holds the latest version, or (asynchronous save) its
// buffer does.
func (ex *exporter) unpark(sess *session) {
	s := ex.s
	if p := sess.parked; p >= 0 && (!sess.exporting || sess.buffered) {
		sess.parked = -1
		s.decide(p)
	}
}
