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

// TestTTLAndFreeDelayLateInARun: a link accessed a second ago does not
// expire, and a region freed a second ago stays in FIFO 2, however late in
// the run (past MaxTime less the delay, 83 days with fpga.ttl and
// fpga.free_delay at their limit of sim.Horizon): lastAccess + TTL and
// freedAt + FreeDelay wrapped to negative times there, and every link
// expired (a hit became a miss) and every freed region matured at once.
func TestTTLAndFreeDelayLateInARun(t *testing.T) {
	const day = 86_400 * sim.Second
	for _, at := range []sim.Time{sim.Second, 50 * day, 95 * day, sim.MaxTime - 2*sim.Second} {
		t.Run(at.String(), func(t *testing.T) {
			cfg := DirectoryConfig{BucketsLog2: 4, RegionBytes: 4096, StorageBytes: 64 * 4096, Layout: LayoutClaim9, DeleteSuperseded: true,
				FreeDelay: sim.Horizon, TTL: sim.Horizon, Shape: KVShape{Layers: 1, KWidth: 4, VWidth: 4, ElemBytes: 2}}
			d, err := NewDirectory(cfg)
			require.NoError(t, err)
			a, b := Key{Tokens: 10, Hash: 1}, Key{Tokens: 20, Hash: 2}
			_, err = d.Save(at, Object{Key: a})
			require.NoError(t, err)
			_, err = d.Save(at, Object{Key: b, Prev: &a}) // supersedes a: its region goes to FIFO 2
			require.NoError(t, err)
			_, fifo2 := d.FIFOLevels()
			require.Equal(t, 1, fifo2)
			r, err := d.Lookup(at+sim.Second, b)
			require.NoError(t, err)
			assert.True(t, r.Hit, "a link accessed a second ago")
			assert.Zero(t, d.Stats().Expirations)
			_, err = d.Save(at+sim.Second, Object{Key: Key{Tokens: 30, Hash: 3}}) // allocates: matures FIFO 2 first
			require.NoError(t, err)
			_, fifo2 = d.FIFOLevels()
			assert.Equal(t, 1, fifo2, "a region freed a second ago")
		})
	}
}
