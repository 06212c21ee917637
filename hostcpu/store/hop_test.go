package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A staging hop's chunks wrap round host memory in whole chunks; any
// other hop's chunks lie one after the other from its address.
func TestStagingChunksWrapRoundHostMemory(t *testing.T) {
	const chunk = 4 << 20
	cases := []struct {
		name      string
		h         Hop
		off, want int64
	}{
		{"a device's chunks follow its address", Hop{Addr: 1 << 30}, 40 * chunk, 1<<30 + 40*chunk},
		{"inside host memory", Hop{Ring: 10 * chunk}, 9 * chunk, 9 * chunk},
		{"past it, round again", Hop{Ring: 10 * chunk}, 10 * chunk, 0},
		{"and on", Hop{Ring: 10 * chunk}, 23 * chunk, 3 * chunk},
		{"a ring not of whole chunks keeps the whole ones", Hop{Ring: 10*chunk + 1}, 10 * chunk, 0},
		{"a ring of less than a chunk has one", Hop{Ring: chunk / 2}, 5 * chunk, 0},
	}
	for _, c := range cases {
		got := c.h.At(c.off, chunk)
		assert.Equal(t, c.want, got, c.name)
		if c.h.Ring > 0 {
			assert.LessOrEqual(t, got+chunk, max(c.h.Ring/chunk*chunk, chunk), c.name)
		}
	}
}
