package kvstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

// TestSegmentsPast2To31Tokens: a segment's token positions do not wrap at
// 2^31. A delta segment's room is its regions over the bytes per token
// (one 16 GiB region of a 6 B-a-token object holds 2.9e9 tokens), and an
// object of a model without a context window grows past 2^31 tokens; as
// int32 both wrapped, and the writes went to negative addresses. Every
// version's writes and reads stay in the store and cover its tokens.
func TestSegmentsPast2To31Tokens(t *testing.T) {
	shape := KVShape{Layers: 1, KWidth: 1, VWidth: 1, ElemBytes: 1} // 6 B a token
	for _, c := range []struct {
		name     string
		region   int64
		regions  int64
		mode     ExportMode
		versions []int64 // each version's tokens, each a delta on the last
	}{
		{"a delta segment's room past 2^31", 1 << 34, 4, ExportDelta, []int64{100, 150, 1 << 20}},
		{"an object past 2^31 tokens", 1 << 30, 16, ExportFull, []int64{1<<31 + 128}},
		{"a delta past 2^31 tokens", 1 << 30, 32, ExportDelta, []int64{1<<31 - 64, 1<<31 + 128}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DirectoryConfig{BucketsLog2: 4, RegionBytes: c.region, StorageBytes: c.regions * c.region, Layout: LayoutClaim9,
				Mode: c.mode, DeleteSuperseded: true, Shape: shape}
			d, err := NewDirectory(cfg)
			require.NoError(t, err)
			var prev *Key
			from := int64(0)
			for i, tokens := range c.versions {
				k := Key{Tokens: tokens, Hash: uint64(i + 1)}
				res, err := d.Save(sim.Time(i), Object{Key: k, Prev: prev})
				require.NoError(t, err)
				for _, x := range res.Writes {
					assert.True(t, x.Addr >= 0 && x.Addr+x.Bytes <= cfg.StorageBytes, "version %d writes %+v outside the store", i, x)
				}
				assert.Equal(t, (tokens-from)*shape.BytesPerToken(), extentBytes(res.Writes), "version %d's writes", i)
				r, err := d.Lookup(sim.Time(i), k)
				require.NoError(t, err)
				assert.Equal(t, tokens*shape.BytesPerToken(), extentBytes(d.ReadExtents(r)), "version %d's reads", i)
				require.NoError(t, d.Check(sim.Time(i), "save"))
				if c.mode == ExportDelta {
					from = tokens
				}
				prev = &k
			}
		})
	}
}
