package hostcpu

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
		h         hop
		off, want int64
	}{
		{"a device's chunks follow its address", hop{addr: 1 << 30}, 40 * chunk, 1<<30 + 40*chunk},
		{"inside host memory", hop{ring: 10 * chunk}, 9 * chunk, 9 * chunk},
		{"past it, round again", hop{ring: 10 * chunk}, 10 * chunk, 0},
		{"and on", hop{ring: 10 * chunk}, 23 * chunk, 3 * chunk},
		{"a ring not of whole chunks keeps the whole ones", hop{ring: 10*chunk + 1}, 10 * chunk, 0},
		{"a ring of less than a chunk has one", hop{ring: chunk / 2}, 5 * chunk, 0},
	}
	for _, c := range cases {
		got := c.h.at(c.off, chunk)
		assert.Equal(t, c.want, got, c.name)
		if c.h.ring > 0 {
			assert.LessOrEqual(t, got+chunk, max(c.h.ring/chunk*chunk, chunk), c.name)
		}
	}
}
