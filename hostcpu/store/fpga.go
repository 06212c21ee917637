package store

import (
	"github.com/kvcosim/kvcosim/fpga"
	"github.com/kvcosim/kvcosim/kvstore"
)

// fpgaStore is the patent's design: the node's FPGA engine queries (tokens
// by DMA, hash, tables in host memory across PCIe, storage into the card's
// memory); the accelerator then pulls the imported KV over the
// peer-to-peer link. An export pushes the updated KV over the same link
// and the FPGA stores it.
type fpgaStore struct {
	h Host
	p Params
}

func newFPGA(h Host, p Params) Store { return &fpgaStore{h, p} }

// Query hands the lookup to the node's FPGA; its result comes back with
// its completion (queryReplies).
func (st *fpgaStore) Query(t Ticket, l Lookup) {
	q := fpga.QueryRequest{Session: l.Session, Key: l.Object.Key, Blocks: l.Object.Blocks, TokenBytes: 4 * l.HistoryTokens,
		Defer: st.p.DeferImport, Reply: fpga.Reply{To: (*queryReplies)(st), Arg: int64(t)}}
	if st.p.Scheme == kvstore.SchemeBlock {
		q.TokenBytes = 4 * l.PromptTokens
		if l.KeysGiven {
			q.TokenBytes = 0 // the trace gives the keys: nothing to hash
		}
	}
	st.h.Node(l.Node).FPGA.Query(q)
}

// Import has the FPGA import what its query found, when the query left it
// (a layer-wise load); else it pulls what the FPGA imported into its
// memory over the peer link (or nothing more, when the FPGA wrote
// straight into the accelerator's).
func (st *fpgaStore) Import(t Ticket, in Import) int {
	if st.p.DeferImport {
		st.h.Node(in.Node).FPGA.Import(fpga.ImportRequest{Session: in.Session, Extents: in.Extents,
			Reply: fpga.Reply{To: (*importReplies)(st), Arg: int64(t)}})
		return 1
	}
	var hops []Hop
	if p := st.h.Node(in.Node).P2PToGPU; p != nil {
		hops = []Hop{{Link: p}}
	}
	st.h.Move(t, hops, in.Bytes)
	return 1
}

// Offload pushes the KV over the peer link into the FPGA's memory.
func (st *fpgaStore) Offload(t Ticket, x Export) {
	var hops []Hop
	if p := st.h.Node(x.Node).P2PFromGPU; p != nil {
		hops = []Hop{{Link: p}}
	}
	st.h.Move(t, hops, x.Bytes)
}

// Save hands the export to the FPGA; its result comes back with its
// completion (exportReplies).
func (st *fpgaStore) Save(t Ticket, x Export) int {
	o := x.Object
	st.h.Node(x.Node).FPGA.Export(fpga.ExportRequest{Session: x.Session, Key: o.Key, Prev: o.Prev, Blocks: o.Blocks,
		HeldBlocks: o.Held, From: o.From, TokenBytes: 4 * x.HistoryTokens, KVBytes: x.Bytes, Reply: fpga.Reply{To: (*exportReplies)(st), Arg: int64(t)}})
	return 1
}

// Part is the FPGA.
func (*fpgaStore) Part() string { return PartFPGA }

// queryReplies takes the FPGA engine's query results back to the host.
type queryReplies fpgaStore

// Receive reports the lookup, and when the card began importing what it
// found (its import stage: the decision, hashing and table walk end
// there), and ends its step.
func (q *queryReplies) Receive(t int64, res fpga.Result) {
	q.h.Found(Ticket(t), kvstore.Found{Hit: res.Hit, MatchedBlocks: res.MatchedBlocks, Hops: res.Hops, Extents: res.Extents})
	if since, ok := res.Imported(); ok {
		q.h.Importing(Ticket(t), since)
	}
	q.h.End(Ticket(t))
}

// importReplies takes the FPGA engine's deferred imports' ends back to
// the host.
type importReplies fpgaStore

// Receive ends the import's step.
func (in *importReplies) Receive(t int64, _ fpga.Result) { in.h.End(Ticket(t)) }

// exportReplies takes the FPGA engine's export results back to the host.
type exportReplies fpgaStore

// Receive reports the export and ends its step.
func (x *exportReplies) Receive(t int64, res fpga.Result) {
	x.h.Saved(Ticket(t), Outcome{Export: res.Export, Err: res.Err})
	x.h.End(Ticket(t))
}
