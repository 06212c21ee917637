package hostcpu

import (
	"fmt"
	"github.com/kvcosim/kvcosim/kvstore"
	"strconv"

	"github.com/kvcosim/kvcosim/accel/tinylm"
	"github.com/kvcosim/kvcosim/fpga"
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
	result  fpga.Result
	bytes   int64
	// kv and ids are functional mode's snapshot of what is stored
	kv  *tinylm.Cache
	ids []uint32
}

// startExport begins an export of the session's whole history.
func (s *System) startExport(sess *session, node int, record int) {
	if !s.storing() || sess.storedTokens == sess.historyLen {
		return
	}
	if sess.exporting {
		sess.exportAgain = true
		return
	}
	sess.exporting = true
	t := exportTask{sess: sess, node: node, record: record, started: s.eng.Now(), kv: sess.kv, ids: sess.history}
	newTokens := sess.historyLen - sess.storedTokens
	if s.cfg.Scheme == kvstore.SchemeBlock {
		t.blocks = s.hashedBlocks(sess, sess.history, sess.historyLen)
		if ids := s.traceKeys(sess); ids != nil {
			t.blocks = ids
		}
	} else {
		t.key = s.patentKey(sess)
		if sess.exported == nil || s.cfg.ExportMode == kvstore.ExportFull {
			newTokens = sess.historyLen // the whole object is rewritten
		}
	}
	t.bytes = newTokens * s.cfg.KVBytesPerToken
	id := s.exports.Put(t)
	s.exportStep(id)
}

// traceKeys are the block keys a trace gave for the session's last turn.
func (s *System) traceKeys(sess *session) []kvstore.Key {
	last := sess.plan.Turns[sess.turn-1]
	if len(last.BlockKeys) == 0 {
		return nil
	}
	return kvstore.TraceBlockKeys(last.BlockKeys, int(s.cfg.BlockTokens), sess.historyLen-last.OutputCount)
}

// exportStep advances an export: move the KV off the accelerator, then
// store it (the FPGA engine, or the CPU's hashing, tables and writes).
func (s *System) exportStep(id int) {
	t := s.exports.At(id)
	n := s.nodes[t.node]
	t.phase++
	switch {
	case t.phase == 1 && s.cfg.Design == FPGAStore:
		var hops []hop
		if n.P2PFromGPU != nil {
			hops = []hop{{link: n.P2PFromGPU}}
		}
		s.moveExtent(id, hops, t.bytes, opExportStep)
	case t.phase == 1:
		s.moveExtent(id, []hop{{link: n.FromGPU}, {dev: n.HostMemory, write: true}}, t.bytes, opExportStep)
	case t.phase == 2 && s.cfg.Design == FPGAStore:
		x := fpga.ExportRequest{Session: t.sess.id, Reply: fpga.Reply{To: exportReplies{s}, Arg: int64(id)}}
		if s.cfg.Scheme == kvstore.SchemeBlock {
			x.Blocks, x.HeldBlocks, x.TokenBytes = t.blocks, t.sess.heldBlocks, 4*t.sess.historyLen
		} else {
			x.Key, x.Prev, x.TokenBytes = t.key, t.sess.exported, 4*t.sess.historyLen
		}
		n.FPGA.Export(x)
	case t.phase == 2:
		s.cpuExport(id, t, n)
	case t.phase == 3 && t.pending > 1:
		t.pending--
		t.phase--
	default:
		s.exported(id)
	}
}

// exportReplies takes the FPGA engine's export results back to their
// exports.
type exportReplies struct{ s *System }

// Receive keeps the result with its export and goes on.
func (x exportReplies) Receive(id int64, res fpga.Result) {
	x.s.exports.At(int(id)).result = res
	x.s.exportStep(int(id))
}

// cpuExport stores the KV with the CPU: the directory update at once, a
// core for hashing and table walks, then the storage writes.
func (s *System) cpuExport(id int, t *exportTask, n *nodeState) {
	now := s.eng.Now()
	var res kvstore.ExportResult
	var err error
	if s.cfg.Scheme == kvstore.SchemeBlock {
		res, err = s.dir.ExportBlocks(now, t.blocks, t.sess.heldBlocks)
	} else {
		res, err = s.dir.Export(now, t.key, t.sess.exported)
	}
	t.result = fpga.Result{Export: res, Err: err}
	if _, bad := err.(*kvstore.InvariantError); bad {
		s.check(err)
	}
	service := s.cfg.CPUHashBandwidth.TransferTime(4*t.sess.historyLen) +
		sim.Time(res.Hops+3*res.Inserted+2*res.Superseded+1)*s.cfg.HostAccessLatency
	// one core's work and the writes run together; each completion comes
	// back as phase 3 and counts down
	t.pending = len(res.Writes) + 1
	n.cpu.Submit(sim.Job{Service: service, Done: sim.Event{Handler: s, Op: opExportStep, Arg: int64(id)}})
	for _, w := range res.Writes {
		s.moveExtent(id, []hop{{dev: n.HostMemory}, {dev: n.Storage, addr: w.Addr, write: true}}, w.Bytes, opExportStep)
	}
}

// exported ends an export: the session's stored version is now its
// history, and a request waiting for it proceeds.
func (s *System) exported(id int) {
	t := s.exports.Take(id)
	sess := t.sess
	sess.exporting = false
	if s.fn != nil {
		s.writeExport(&t)
	}
	s.counts.Exports++
	if t.result.Err != nil {
		s.counts.ExportFailed++
	} else {
		sess.storedTokens = sess.historyLen
		if s.cfg.Scheme == kvstore.SchemeBlock {
			sess.heldBlocks = len(t.blocks)
		} else {
			k := t.key
			sess.exported = &k
		}
	}
	if t.record >= 0 {
		x := t.result.Export
		first := "none"
		if len(x.Writes) > 0 {
			first = fmt.Sprintf("%#x", x.Writes[0].Addr)
		}
		s.span(t.node, s.storePart(), "export", sess.id, s.records[t.record].Turn, t.started, t.bytes,
			"regions", strconv.Itoa(x.Regions), "inserted", strconv.Itoa(x.Inserted), "superseded", strconv.Itoa(x.Superseded),
			"evicted", strconv.Itoa(x.Evicted), "first_address", first)
		s.records[t.record].Export = s.eng.Now() - t.started
		s.records[t.record].ExportBytes = t.bytes
	}
	if sess.exportAgain {
		sess.exportAgain = false
		s.startExport(sess, t.node, sess.lastRecord)
	}
	if p := sess.parked; p >= 0 && !sess.exporting {
		sess.parked = -1
		s.decide(p)
	}
	s.release(sess)
}
