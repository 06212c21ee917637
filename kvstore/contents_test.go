package kvstore

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/memory"
)

// randomKV is content for n tokens with random ids and values.
func randomKV(r *rand.Rand, s KVShape, n int64) *KVData {
	d := NewKVData(s, n)
	for i := range d.IDs {
		d.IDs[i] = r.Uint32()
	}
	for l := range d.K {
		for i := range d.K[l] {
			d.K[l][i] = r.Float32()
		}
		for i := range d.V[l] {
			d.V[l][i] = r.Float32()
		}
	}
	return d
}

// sub is tokens [from, to) of d, the rest zero.
func sub(s KVShape, d *KVData, from, to int64) *KVData {
	out := NewKVData(s, int64(len(d.IDs)))
	copy(out.IDs[from:to], d.IDs[from:to])
	for l := range d.K {
		kw, vw := int64(s.KWidth), int64(s.VWidth)
		copy(out.K[l][from*kw:to*kw], d.K[l][from*kw:to*kw])
		copy(out.V[l][from*vw:to*vw], d.V[l][from*vw:to*vw])
	}
	return out
}

func TestCodecRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, layout := range []Layout{LayoutClaim9, LayoutTokenMajor, LayoutLayerMajor} {
		for trial := range 50 {
			s := KVShape{Layers: 1 + r.IntN(3), KWidth: 1 + r.IntN(5), VWidth: r.IntN(5), ElemBytes: 4}
			start, cap := r.Int64N(20), 1+r.Int64N(30)
			from := start + r.Int64N(cap)
			to := from + 1 + r.Int64N(start+cap-from)
			data := randomKV(r, s, start+cap)
			p := Piece{Start: start, Cap: cap, From: from, To: to}
			b, err := layout.Encode(s, p, data)
			require.NoError(t, err)
			var want int64
			for _, run := range layout.extents(s, cap, from-start, to-start) {
				want += run.Bytes
			}
			require.Equal(t, want, int64(len(b)), "the bytes fill the piece's runs exactly")
			got := NewKVData(s, start+cap)
			require.NoError(t, layout.Decode(s, p, b, got))
			require.Equal(t, sub(s, data, from, to), got, "layout %d trial %d", layout, trial)
		}
	}
}

func TestClaim9BytesByHand(t *testing.T) {
	// two tokens, two layers, K width 2, V width 2: the ids, K of layer 0
	// in token order, K of layer 1, then V column by column per layer
	s := KVShape{Layers: 2, KWidth: 2, VWidth: 2, ElemBytes: 4}
	d := &KVData{IDs: []uint32{7, 8},
		K: [][]float32{{1, 2, 3, 4}, {5, 6, 7, 8}}, // token 0 then 1
		V: [][]float32{{10, 11, 12, 13}, {14, 15, 16, 17}}}
	b, err := LayoutClaim9.Encode(s, Piece{Cap: 2, To: 2}, d)
	require.NoError(t, err)
	var got []float32
	ids := []uint32{binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])}
	for off := 8; off < len(b); off += 4 {
		got = append(got, math.Float32frombits(binary.LittleEndian.Uint32(b[off:])))
	}
	assert.Equal(t, []uint32{7, 8}, ids)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 11, 13, 14, 16, 15, 17}, got)
}

func TestCodecErrors(t *testing.T) {
	s := KVShape{Layers: 1, KWidth: 2, VWidth: 2, ElemBytes: 2}
	_, err := LayoutClaim9.Encode(s, Piece{Cap: 1, To: 1}, NewKVData(s, 1))
	require.EqualError(t, err, "fpga: functional mode stores float32 K and V: elem_bytes = 2, want 4")
	s.ElemBytes = 4
	_, err = LayoutClaim9.Encode(s, Piece{Cap: 4, To: 4}, NewKVData(s, 2))
	require.EqualError(t, err, "fpga: piece of tokens [0, 4) beyond the 2 tokens given")
	require.EqualError(t, LayoutClaim9.Decode(s, Piece{Cap: 1, To: 1}, make([]byte, 3), NewKVData(s, 1)),
		"fpga: piece of tokens [0, 1): 3 bytes, want 20")
	require.EqualError(t, LayoutClaim9.Decode(s, Piece{Cap: 1, To: 1}, make([]byte, 21), NewKVData(s, 1)),
		"fpga: piece of tokens [0, 1): 21 bytes, want 20")
}

// contentsFor is a small functional store: 128 B regions, so objects span
// several regions and delta versions share them.
func contentsFor(t *testing.T, scheme Scheme, mode ExportMode, layout Layout) (*Directory, *Contents, *memory.ByteStore) {
	cfg := DirectoryConfig{Scheme: scheme, BlockTokens: 4, BucketsLog2: 4, RegionBytes: 128, StorageBytes: 256 * 128,
		Layout: layout, Mode: mode, DeleteSuperseded: true, Shape: KVShape{Layers: 2, KWidth: 2, VWidth: 2, ElemBytes: 4}, CheckInvariants: true}
	d, err := NewDirectory(cfg)
	require.NoError(t, err)
	store, err := memory.NewByteStore("ssd", cfg.StorageBytes, 64, true)
	require.NoError(t, err)
	c, err := NewContents(d, store)
	require.NoError(t, err)
	return d, c, store
}

func TestContentsPatentVersionsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, mode := range []ExportMode{ExportFull, ExportDelta} {
		for _, layout := range []Layout{LayoutClaim9, LayoutTokenMajor, LayoutLayerMajor} {
			d, c, _ := contentsFor(t, SchemePatent, mode, layout)
			s := d.cfg.Shape
			data := randomKV(r, s, 60)
			var prev *Key
			for _, n := range []int64{5, 11, 12, 30, 60} {
				k := PatentKey(0, data.IDs[:n])
				res, err := d.Export(0, k, prev)
				require.NoError(t, err)
				require.Len(t, res.Written, 1)
				require.NoError(t, c.Write(res.Written[0], data))
				got := NewKVData(s, n)
				require.NoError(t, c.Read(k, 0, got), "mode %d layout %d, %d tokens", mode, layout, n)
				want := sub(s, data, 0, n)
				want.IDs, want.K[0], want.K[1] = want.IDs[:n], want.K[0][:2*n], want.K[1][:2*n]
				want.V[0], want.V[1] = want.V[0][:2*n], want.V[1][:2*n]
				require.Equal(t, want, got, "mode %d layout %d, %d tokens", mode, layout, n)
				prev = &k
			}
		}
	}
}

func TestContentsDetectCorruption(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	d, c, _ := contentsFor(t, SchemePatent, ExportDelta, LayoutClaim9)
	data := randomKV(r, d.cfg.Shape, 20)
	k := PatentKey(0, data.IDs)
	res, err := d.Export(0, k, nil)
	require.NoError(t, err)
	require.NoError(t, c.Write(res.Written[0], data))
	require.NoError(t, c.Corrupt(k, 1))
	err = c.Read(k, 0, NewKVData(d.cfg.Shape, 20))
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, "region")
	require.ErrorIs(t, c.Read(PatentKey(0, data.IDs[:3]), 0, NewKVData(d.cfg.Shape, 3)), ErrNotStored)
}

func TestContentsBlocksShareAcrossSessions(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	d, c, _ := contentsFor(t, SchemeBlock, ExportFull, LayoutClaim9)
	s := d.cfg.Shape
	data := randomKV(r, s, 16)
	keys := BlockKeys(0, data.IDs, 4)
	res, err := d.ExportBlocks(0, keys[:2], 0)
	require.NoError(t, err)
	res2, err := d.ExportBlocks(0, keys, 0) // a second session: two blocks new
	require.NoError(t, err)
	require.Len(t, res2.Written, 2)
	for _, w := range append(res.Written, res2.Written...) {
		require.NoError(t, c.Write(w, data))
	}
	got := NewKVData(s, 16)
	for _, k := range keys {
		require.NoError(t, c.Read(k, 0, got))
	}
	require.Equal(t, data, got)
}
