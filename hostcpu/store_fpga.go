package hostcpu

import (
	"github.com/kvcosim/kvcosim/fpga"
	"github.com/kvcosim/kvcosim/kvstore"
)

// fpgaStore is the patent's design: the node's FPGA engine queries (tokens
// by DMA, hash, tables in host memory across PCIe, storage into the card's
// memory); the accelerator then pulls the imported KV over the
// peer-to-peer link. An export pushes the updated KV over the same link
// and the FPGA stores it.
type fpgaStore struct{ s *System }

func newFPGAStore(s *System) Store { return fpgaStore{s} }

// Query hands the lookup to the node's FPGA; its result comes back with
// its completion (Receive).
func (st fpgaStore) Query(slot int) {
	s := st.s
	r := s.reqs.At(slot)
	o := s.queryObject(r)
	q := fpga.QueryRequest{Session: r.sess.id, Key: o.Key, Blocks: o.Blocks, TokenBytes: 4 * r.sess.historyLen,
		Reply: fpga.Reply{To: fpgaQueryReplies{s}, Arg: int64(slot)}}
	if s.cfg.Scheme == kvstore.SchemeBlock {
		q.TokenBytes = 4 * r.promptLen
		if len(r.sess.plan.Turns[r.sess.turn].BlockKeys) > 0 {
			q.TokenBytes = 0 // the trace gives the keys: nothing to hash
		}
	}
	s.nodes[r.node].FPGA.Query(q)
}

// Import pulls what the FPGA imported into its memory over the peer link
// (or nothing more, when the FPGA wrote straight into the accelerator's).
func (st fpgaStore) Import(slot int) int {
	s := st.s
	r := s.reqs.At(slot)
	n := s.nodes[r.node]
	var hops []hop
	if n.P2PToGPU != nil {
		hops = []hop{{link: n.P2PToGPU}}
	}
	s.moveExtent(slot, hops, r.rec.ImportBytes, opImported)
	return 1
}

// Offload pushes the KV over the peer link into the FPGA's memory.
func (st fpgaStore) Offload(id int) {
	s := st.s
	t := s.exports.At(id)
	var hops []hop
	if p := s.nodes[t.node].P2PFromGPU; p != nil {
		hops = []hop{{link: p}}
	}
	s.moveExtent(id, hops, t.bytes, opExportStep)
}

// Save hands the export to the FPGA; its result comes back with its
// completion.
func (st fpgaStore) Save(id int) int {
	s := st.s
	t := s.exports.At(id)
	o := t.object()
	s.nodes[t.node].FPGA.Export(fpga.ExportRequest{Session: t.sess.id, Key: o.Key, Prev: o.Prev, Blocks: o.Blocks,
		HeldBlocks: o.Held, From: o.From, TokenBytes: 4 * t.sess.historyLen, Reply: fpga.Reply{To: fpgaExportReplies{s}, Arg: int64(id)}})
	return 1
}

// Part is the FPGA.
func (fpgaStore) Part() string { return PartFPGA }

// fpgaQueryReplies takes the FPGA engine's query results back to their
// requests.
type fpgaQueryReplies struct{ s *System }

// Receive keeps the result with its request and goes on.
func (q fpgaQueryReplies) Receive(slot int64, res fpga.Result) {
	q.s.reqs.At(int(slot)).found = kvstore.Found{Hit: res.Hit, MatchedBlocks: res.MatchedBlocks, Hops: res.Hops}
	q.s.queried(int(slot))
}

// fpgaExportReplies takes the FPGA engine's export results back to their
// exports.
type fpgaExportReplies struct{ s *System }

// Receive keeps the result with its export and goes on.
func (x fpgaExportReplies) Receive(id int64, res fpga.Result) {
	x.s.exports.At(int(id)).result = exportOutcome{Export: res.Export, Err: res.Err}
	x.s.exportStep(int(id))
}
