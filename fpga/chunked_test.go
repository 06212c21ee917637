package fpga

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvcosim/kvcosim/kvstore"
)

// An import streams in store.chunk's pieces, at most maxStreamPieces of
// them, an export at most maxExportPieces: a larger object in fewer,
// larger pieces, every byte once.
func TestChunkedBoundsThePieces(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name                string
		bytes, chunk, limit int64
		pieces, piece       int
	}{
		{"store-and-forward", 485 * mib, 0, maxStreamPieces, 1, 485 * mib},
		{"the default object in 4 MiB pieces", 485 * mib, 4 * mib, maxStreamPieces, 122, 4 * mib},
		{"a 100 GiB object", 100 << 30, 4 * mib, maxStreamPieces, maxStreamPieces, 100 * mib},
		{"an export of 64 MiB in 4 MiB pieces", 64 * mib, 4 * mib, maxExportPieces, 16, 4 * mib},
		{"an export of 512 MiB", 512 * mib, 4 * mib, maxExportPieces, maxExportPieces, 32 * mib},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := chunked([]kvstore.Extent{{Addr: 4096, Bytes: c.bytes}}, c.chunk, c.limit)
			assert.Len(t, out, c.pieces)
			assert.Equal(t, int64(c.piece), out[0].Bytes)
			sum, next := int64(0), int64(4096)
			for _, x := range out {
				assert.Equal(t, next, x.Addr, "pieces follow one another")
				sum, next = sum+x.Bytes, x.Addr+x.Bytes
			}
			assert.Equal(t, c.bytes, sum)
		})
	}
}
