package fpga

import (
	"errors"
	"math/bits"

	"github.com/kvcosim/kvcosim/kvstore"
)

// Addresses of the engine's data in host memory (tokens, and the tables
// with PlaceHost) or in the card's HBM (the tables with PlaceHBM).

func (e *Engine) tokenAddr(session, bytes int64) int64 {
	window := e.ports.HostBytes / 2
	return (session * 64 << 10) % max(1, window-bytes) / 64 * 64
}

func (e *Engine) tableBase() int64 {
	if e.cfg.Placement == PlaceHBM {
		return e.ports.TablesBytes - e.cfg.TableBytes()
	}
	return e.ports.HostBytes / 2
}

func (e *Engine) bucketAddr(hash uint64) int64 {
	return e.tableBase() + int64(e.dir.Bucket(hash))*e.cfg.BucketBytes
}

// linkAddr and fifoAddr lie in the tables TableBytes sizes: as many links
// as Links (an unlimited store's 2^31-1 regions have 2^24), then the FIFOs.
func (e *Engine) linkAddr(hash uint64) int64 {
	return e.tableBase() + int64(e.dir.Buckets())*e.cfg.BucketBytes + int64(hash%uint64(e.cfg.Links()))*e.cfg.LinkBytes
}

func (e *Engine) fifoAddr() int64 {
	return e.tableBase() + int64(e.dir.Buckets())*e.cfg.BucketBytes + e.cfg.Links()*e.cfg.LinkBytes
}

// Operations a stage issues; each returns the bytes it moves.

func (e *Engine) hostRead(slot int32, addr, bytes int64) int64 {
	if bytes > 0 {
		e.start(slot, subOp{kind: subHostRead, addr: addr, bytes: bytes})
	}
	return bytes
}

func (e *Engine) table(slot int32, addr, bytes int64, count int, write bool) int64 {
	if count > 0 && bytes > 0 {
		e.start(slot, subOp{kind: subTable, addr: addr, bytes: bytes, count: count, write: write})
	}
	return int64(count) * bytes
}

func (e *Engine) compute(slot int32, cycles int64) {
	if cycles > 0 {
		e.start(slot, subOp{kind: subDelay, count: int(cycles)})
	}
}

func (e *Engine) extents(slot int32, kind subKind, xs []kvstore.Extent) int64 {
	total := int64(0)
	for _, x := range xs {
		e.start(slot, subOp{kind: kind, addr: x.Addr, bytes: x.Bytes})
		total += x.Bytes
	}
	return total
}

// chunked splits extents into pieces of at most chunk bytes (none: chunk
// 0), so that each goes on to the next hop as soon as the one before has
// passed it: a streamed import or export. A transfer of more than pieces
// chunks streams in that many larger pieces: each piece is events on every
// hop, and the pipeline's fill, all the pieces change, is a piece's time on
// the other hops, under 1/pieces of the transfer.
func chunked(xs []kvstore.Extent, chunk, pieces int64) []kvstore.Extent {
	if chunk == 0 {
		return xs
	}
	total := int64(0)
	for _, x := range xs {
		total += x.Bytes
	}
	chunk = max(chunk, (total+pieces-1)/pieces)
	var out []kvstore.Extent
	for _, x := range xs {
		for off := int64(0); off < x.Bytes; off += chunk {
			out = append(out, kvstore.Extent{Addr: x.Addr + off, Bytes: min(chunk, x.Bytes-off), Tier: x.Tier})
		}
	}
	return out
}

// maxStreamPieces bounds the pieces one import streams in: every piece's
// read is asked of the drives at once, as the whole extents' are, so the
// drives see the same reads either way (a 100 GB object in 4 MiB pieces
// cost 10 s of simulation for one import).
const maxStreamPieces = 1024

// maxExportPieces bounds the pieces one export streams in: each is a write
// the drives take on its own, when it has crossed the hops before, and
// every turn exports. The Mooncake replay of docs/workloads.md writes 47 TB
// in 12,031 exports: whole, it took 3.2-3.4 s of CPU; in up to 1,024
// pieces an export 2.3 times that, in 32 1.1-1.16 times, in 16 1.06 times
// (3.37 against 3.17 s before issue 42, the best of three each). The
// fill this adds is a 16th of the faster hops' time (2.5 ms of the peer
// link's 40 ms for a 485 MB export).
const maxExportPieces = 16

// hashCycles is the hash engine's time for a task's tokens: one task per
// block in the block scheme (chained), one for all tokens otherwise.
func (e *Engine) hashCycles(tokenBytes int64) int64 {
	if tokenBytes == 0 {
		return 0
	}
	h := e.cfg.Hash
	if e.cfg.Directory.Scheme == kvstore.SchemeBlock {
		block := e.cfg.Directory.BlockTokens * kvstore.TokenIDBytes
		blocks := (tokenBytes + block - 1) / block
		return blocks*int64(h.SetupCycles+h.FinalizeCycles) + int64(h.Cycles(8*blocks+tokenBytes)-h.SetupCycles-h.FinalizeCycles)
	}
	return int64(h.Cycles(tokenBytes))
}

// record keeps a directory error: an invariant violation stops the
// simulation; a store too small for the object fails only this task.
func (e *Engine) record(t *task, err error) bool {
	if err == nil {
		return true
	}
	var inv *kvstore.InvariantError
	if errors.As(err, &inv) {
		e.fail(err)
	}
	t.out.Err = err
	return false
}

func signal(e *Engine, t *task, slot int32) int64 {
	e.start(slot, subOp{kind: subSignal})
	return e.cfg.SignalBytes
}

func dmaTokens(e *Engine, t *task, slot int32) int64 {
	bytes, session := t.query.TokenBytes, t.query.Session
	if t.export {
		bytes, session = t.exp.TokenBytes, t.exp.Session
	}
	return e.hostRead(slot, e.tokenAddr(session, bytes), bytes)
}

func hashTokens(e *Engine, t *task, slot int32) int64 {
	bytes := t.query.TokenBytes
	if t.export {
		bytes = t.exp.TokenBytes
	}
	e.compute(slot, e.hashCycles(bytes))
	return bytes
}

func (e *Engine) queryKey(t *task) uint64 {
	if len(t.query.Blocks) > 0 {
		return t.query.Blocks[0].Hash
	}
	return t.query.Key.Hash
}

// Part names the FPGA in spans; TaskQuery and TaskExport are its tasks,
// and the Stage constants their steps, in the order they run.
const (
	Part       = "fpga"
	TaskQuery  = "query"
	TaskExport = "export"

	StageDMATokens    = "dma-tokens"
	StageHash         = "hash"
	StageBucketRead   = "bucket-read"
	StageChainWalk    = "chain-walk"
	StageImport       = "import"
	StageSignalCPU    = "signal-cpu"
	StageExchangeRead = "exchange-read"
	StageFIFOAllocate = "fifo-allocate"
	StageStorageWrite = "storage-write"
	StageStreamOut    = "stream-out"
	StageChainInsert  = "chain-insert"
	StageFIFOFree     = "fifo-free"
)

// queryStages: read the tokens from host memory, hash them, read the
// bucket, walk the chain, import on a hit, tell the CPU (claims 3-6).
func (e *Engine) queryStages() []stage {
	return []stage{
		{StageDMATokens, dmaTokens},
		{StageHash, hashTokens},
		{StageBucketRead, func(e *Engine, t *task, slot int32) int64 {
			f, err := e.dir.Find(e.eng.Now(), kvstore.Object{Key: t.query.Key, Blocks: t.query.Blocks})
			e.record(t, err)
			t.out.Hit, t.out.MatchedBlocks, t.out.Hops = f.Hit, f.MatchedBlocks, f.Hops
			t.hops, t.bucketReads, t.reads = f.Hops, f.BucketReads, f.Extents
			if t.query.Defer {
				t.out.Extents = f.Extents // Import reads them
			}
			return e.table(slot, e.bucketAddr(e.queryKey(t)), e.cfg.BucketBytes, t.bucketReads, false)
		}},
		{StageChainWalk, func(e *Engine, t *task, slot int32) int64 {
			return e.table(slot, e.linkAddr(e.queryKey(t)), e.cfg.LinkBytes, t.hops, false)
		}},
		{StageImport, importFound},
		{StageSignalCPU, signal},
	}
}

// importStages are a deferred query's import: read and forward what it
// found, tell the CPU.
var importStages = []stage{{StageImport, importFound}, {StageSignalCPU, signal}}

// importFound reads the found extents from storage into the exchange
// memory and on to the accelerator (claim 6).
func importFound(e *Engine, t *task, slot int32) int64 {
	t.out.Bytes = e.extents(slot, subImport, chunked(t.reads, e.cfg.ChunkBytes, maxStreamPieces))
	return t.out.Bytes
}

func (e *Engine) exportKey(t *task) uint64 {
	if len(t.exp.Blocks) > 0 {
		return t.exp.Blocks[0].Hash
	}
	return t.exp.Key.Hash
}

// exportStages: read the updated cache from the exchange memory, hash the
// computed tokens, find the chain, allocate regions from the FIFOs, write
// storage, insert the new link, free what is superseded, tell the CPU
// (claims 7-10). The directory is updated when the engine reads it. A
// streamed export (Config.ChunkBytes) updates the directory as it begins,
// takes its regions first, and then streams the cache from the
// accelerator through the exchange memory to storage in pieces, in the
// order of their addresses (claim 9's layout: every layer's K, then every
// layer's V), each hop taking a piece while the next hop writes the last.
func (e *Engine) exportStages() []stage {
	if e.cfg.ChunkBytes > 0 {
		return e.streamedExportStages()
	}
	return append([]stage{{StageExchangeRead, func(e *Engine, t *task, slot int32) int64 {
		bytes := e.saveExport(t)
		if bytes > 0 {
			e.start(slot, subOp{kind: subExchangeRead, bytes: bytes})
		}
		return bytes
	}}}, e.exportTail(StageStorageWrite, func(e *Engine, t *task, slot int32) int64 {
		return e.extents(slot, subStorageWrite, t.writes)
	})...)
}

// streamedExportStages are a streamed export's: the directory and the
// regions first, then the data in pieces (streamOut).
func (e *Engine) streamedExportStages() []stage {
	tail := e.exportTail(StageStreamOut, streamOut)
	tail[0].run = func(e *Engine, t *task, slot int32) int64 { // the token read, the task's first stage
		e.saveExport(t)
		return dmaTokens(e, t, slot)
	}
	return tail
}

// streamOut streams the export's writes in pieces, each piece pulling its
// share of the accelerator's bytes (ExportRequest.KVBytes) over the peer
// link.
func streamOut(e *Engine, t *task, slot int32) int64 {
	pieces := chunked(t.writes, e.cfg.ChunkBytes, maxExportPieces)
	total := int64(0)
	for _, x := range pieces {
		total += x.Bytes
	}
	kv := t.exp.KVBytes
	if kv == 0 {
		kv = total
	}
	done, pulled := int64(0), int64(0)
	for _, x := range pieces {
		done += x.Bytes
		share := shareOf(done, kv, total) - pulled // the shares add up to kv
		pulled += share
		e.start(slot, subOp{kind: subStreamOut, addr: x.Addr, bytes: x.Bytes, pulled: share})
	}
	return total
}

// shareOf is part/whole of n, rounded down (part <= whole), without
// overflow.
func shareOf(part, n, whole int64) int64 {
	hi, lo := bits.Mul64(uint64(part), uint64(n))
	q, _ := bits.Div64(hi, lo, uint64(whole))
	return int64(q)
}

// saveExport updates the directory with the export's object and keeps
// what the stages after need: the regions written, the links walked and
// freed. It returns the bytes to write.
func (e *Engine) saveExport(t *task) int64 {
	freed := e.dir.Stats().RegionsFreed
	res, err := e.dir.Save(e.eng.Now(), kvstore.Object{Key: t.exp.Key, Prev: t.exp.Prev, Blocks: t.exp.Blocks, Held: t.exp.HeldBlocks, From: t.exp.From})
	t.bucketReads = len(t.exp.Blocks)
	if e.cfg.Directory.Scheme == kvstore.SchemePatent {
		t.bucketReads = 1 + map[bool]int{true: 1}[t.exp.Prev != nil]
	}
	e.record(t, err)
	t.out.Export, t.hops, t.writes = res, res.Hops, res.Writes
	t.out.Hops = res.Hops
	t.regions, t.freed = res.Regions, int(e.dir.Stats().RegionsFreed-freed)
	bytes := int64(0)
	for _, w := range t.writes {
		bytes += w.Bytes
	}
	t.out.Bytes = bytes
	return bytes
}

// exportTail is an export's stages from the token read on, its data
// written by the stage write names.
func (e *Engine) exportTail(name string, write func(e *Engine, t *task, slot int32) int64) []stage {
	return []stage{
		{StageDMATokens, dmaTokens},
		{StageHash, hashTokens},
		{StageBucketRead, func(e *Engine, t *task, slot int32) int64 {
			return e.table(slot, e.bucketAddr(e.exportKey(t)), e.cfg.BucketBytes, t.bucketReads, false)
		}},
		{StageChainWalk, func(e *Engine, t *task, slot int32) int64 {
			return e.table(slot, e.linkAddr(e.exportKey(t)), e.cfg.LinkBytes, t.hops, false)
		}},
		{StageFIFOAllocate, func(e *Engine, t *task, slot int32) int64 {
			return e.table(slot, e.fifoAddr(), int64(t.regions)*4, 1, false)
		}},
		{name, write},
		{StageChainInsert, func(e *Engine, t *task, slot int32) int64 {
			// per new link: the link, the bucket head, the old head's prev;
			// per deleted version: its two neighbours' pointers
			writes := 3*t.out.Export.Inserted + 2*t.out.Export.Superseded
			return e.table(slot, e.linkAddr(e.exportKey(t)), e.cfg.LinkBytes, writes, true)
		}},
		{StageFIFOFree, func(e *Engine, t *task, slot int32) int64 {
			return e.table(slot, e.fifoAddr(), int64(t.freed)*4, 1, true)
		}},
		{StageSignalCPU, signal},
	}
}
