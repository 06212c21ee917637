package fpga

import (
	"github.com/kvcosim/kvcosim/kvstore"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/internal/golden"
	"github.com/kvcosim/kvcosim/sim"
)

// The canonical operations, each kept in testdata/ with its stages in FPGA
// cycles and picoseconds. Any change of a cycle count fails with a diff;
// `go test ./fpga/... -update` rewrites them.

func TestGoldenPatentQueryHit4096(t *testing.T) {
	s := newTestSystem(t, DefaultConfig(goldenDirectory(kvstore.SchemePatent, kvstore.ExportFull)))
	tokens := tokenRange(4096, 1)
	key := kvstore.PatentKey(0, tokens)
	_, err := s.fpga.Directory().Export(0, key, nil) // stored earlier
	require.NoError(t, err)
	r := s.query(QueryRequest{Session: 1, Key: key, TokenBytes: 4096 * 4})
	require.True(t, r.Hit)
	require.Equal(t, int64(4096)*llama3_8b.BytesPerToken(), r.Bytes)
	golden.Check(t, "testdata/patent_query_hit_4096.golden",
		render("patent query hit at 4,096 tokens: Llama-3-8B bf16, tables in host memory, CM6 SSD, U55C XDMA, HBM2 exchange", r, s.fpga.Clock()))
}

func TestGoldenPatentQueryMiss(t *testing.T) {
	s := newTestSystem(t, DefaultConfig(goldenDirectory(kvstore.SchemePatent, kvstore.ExportFull)))
	r := s.query(QueryRequest{Session: 1, Key: kvstore.PatentKey(0, tokenRange(4096, 1)), TokenBytes: 4096 * 4})
	require.False(t, r.Hit)
	golden.Check(t, "testdata/patent_query_miss.golden",
		render("patent query miss at 4,096 tokens (empty bucket): tables in host memory", r, s.fpga.Clock()))
}

func TestGoldenChainWalkThreeDeep(t *testing.T) {
	s := newTestSystem(t, DefaultConfig(goldenDirectory(kvstore.SchemePatent, kvstore.ExportFull)))
	// three versions whose hashes share a bucket; links enter at the head,
	// so the first one stored is the third link of the chain
	keys := []kvstore.Key{{Tokens: 512, Hash: 0xabc}, {Tokens: 512, Hash: 0xabc + 1<<20}, {Tokens: 512, Hash: 0xabc + 2<<20}}
	for _, k := range keys {
		_, err := s.fpga.Directory().Export(0, k, nil)
		require.NoError(t, err)
	}
	r := s.query(QueryRequest{Session: 1, Key: keys[0], TokenBytes: 512 * 4})
	require.True(t, r.Hit)
	require.Equal(t, 3, r.Hops)
	golden.Check(t, "testdata/chain_walk_three_deep.golden",
		render("patent query hit three links deep at 512 tokens: tables in host memory", r, s.fpga.Clock()))
}

func exportGolden(t *testing.T, mode kvstore.ExportMode, name, title string) {
	s := newTestSystem(t, DefaultConfig(goldenDirectory(kvstore.SchemePatent, mode)))
	tokens := tokenRange(4608, 1)
	prev := kvstore.PatentKey(0, tokens[:4096])
	_, err := s.fpga.Directory().Export(0, prev, nil)
	require.NoError(t, err)
	r := s.export(ExportRequest{Session: 1, Key: kvstore.PatentKey(0, tokens), Prev: &prev, TokenBytes: 4608 * 4})
	require.NoError(t, r.Err)
	require.Equal(t, 1, r.Export.Superseded)
	golden.Check(t, "testdata/"+name+".golden", render(title, r, s.fpga.Clock()))
}

func TestGoldenExportFull(t *testing.T) {
	exportGolden(t, kvstore.ExportFull, "export_512_full",
		"export of 512 new tokens on 4,096, full mode: the whole 4,608-token object rewritten")
}

func TestGoldenExportDelta(t *testing.T) {
	exportGolden(t, kvstore.ExportDelta, "export_512_delta",
		"export of 512 new tokens on 4,096, delta mode: claim-9 appends (1 K run per layer, 1,024 V runs per layer)")
}

func TestGoldenBlockQuery20With12Hits(t *testing.T) {
	s := newTestSystem(t, DefaultConfig(goldenDirectory(kvstore.SchemeBlock, kvstore.ExportFull)))
	tokens := tokenRange(20*512, 1)
	keys := kvstore.BlockKeys(0, tokens, 512)
	require.Len(t, keys, 20)
	_, err := s.fpga.Directory().ExportBlocks(0, keys[:12], 0)
	require.NoError(t, err)
	r := s.query(QueryRequest{Session: 1, Blocks: keys, TokenBytes: int64(len(tokens)) * 4})
	require.Equal(t, 12, r.MatchedBlocks)
	golden.Check(t, "testdata/block_query_20_blocks_12_hits.golden",
		render("block query of 20 blocks of 512 tokens with 12 stored: tables in host memory", r, s.fpga.Clock()))
}

// TestPlacementsOrderQueryLatency checks what the placements are for: the
// same miss is slowest with tables in host memory and fastest on chip.
func TestPlacementsOrderQueryLatency(t *testing.T) {
	var took []sim.Time
	for _, p := range []Placement{PlaceHost, PlaceHBM, PlaceURAM} {
		cfg := DefaultConfig(goldenDirectory(kvstore.SchemePatent, kvstore.ExportFull))
		cfg.Directory.StorageBytes = 4 << 40
		cfg.Placement = p
		if p == PlaceURAM {
			cfg.Directory.StorageBytes, cfg.Directory.BucketsLog2 = 1<<40, 16
		}
		s := newTestSystem(t, cfg)
		keys := []kvstore.Key{{Tokens: 1, Hash: 5}, {Tokens: 2, Hash: 5 + 1<<20}}
		if p == PlaceURAM {
			keys[1].Hash = 5 + 1<<16
		}
		_, err := s.fpga.Directory().Export(0, keys[0], nil)
		require.NoError(t, err)
		r := s.query(QueryRequest{Session: 1, Key: keys[1]})
		took = append(took, r.End-r.Start)
	}
	require.Greater(t, took[0], took[1], "host tables cost PCIe round trips")
	require.Greater(t, took[1], took[2], "HBM is slower than URAM")
}
