package sim

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exactEdge is the reference rule floor(k * 1e12 / hz) in arbitrary precision.
func exactEdge(k, hz int64) int64 {
	n := new(big.Int).Mul(big.NewInt(k), big.NewInt(1e12))
	return n.Quo(n, big.NewInt(hz)).Int64()
}

var testClocksHz = []int64{250_000_000, 300_000_000, 322_265_625, 1_600_000_000, 3_000_000_000}

func TestClockEdgesDoNotDrift(t *testing.T) {
	const horizon = 1_000_000_000 // cycles
	for _, hz := range testClocksHz {
		c, err := NewClock(hz)
		require.NoError(t, err)
		r := NewStreams(uint64(hz)).Stream("edges")
		ks := []int64{0, 1, 2, 3, horizon - 1, horizon, horizon + 1}
		for range 20000 {
			ks = append(ks, r.Int64N(horizon+1))
		}
		lo, hi := 1e12/hz, (1e12+hz-1)/hz // floor and ceil of the period
		for _, k := range ks {
			edge := c.Edge(Cycles(k))
			require.Equal(t, exactEdge(k, hz), int64(edge), "%v edge %d", c, k)
			if k > 0 {
				period := int64(edge - c.Edge(Cycles(k-1)))
				require.True(t, period == lo || period == hi, "%v period before edge %d is %d", c, k, period)
			}
			require.Equal(t, Cycles(k), c.CyclesAt(edge), "%v CyclesAt(edge %d)", c, k)
			require.Equal(t, Cycles(k), c.FirstEdgeAtOrAfter(edge), "%v FirstEdgeAtOrAfter(edge %d)", c, k)
			if k > 0 {
				require.Equal(t, Cycles(k-1), c.CyclesAt(edge-1), "%v just before edge %d", c, k)
				require.Equal(t, edge, c.NextEdge(c.Edge(Cycles(k-1))+1), "%v NextEdge after edge %d", c, k-1)
			}
		}
		// After 1e9 cycles the clock is exactly where 1e9 periods put it.
		assert.Equal(t, exactEdge(horizon, hz), int64(c.After(0, horizon)), "%v after 1e9 cycles", c)
	}
}

func TestClockAfterAlignsToEdge(t *testing.T) {
	c := MustClockMHz(300) // period 3333.33 ps
	assert.Equal(t, Time(3333), c.Edge(1))
	assert.Equal(t, Time(6666), c.Edge(2))
	assert.Equal(t, Time(10000), c.Edge(3))
	assert.Equal(t, c.Edge(1)+0, c.After(1, 0), "a zero-cycle operation waits for the next edge")
	assert.Equal(t, c.Edge(4), c.After(3334, 2))
	assert.Equal(t, Time(33333333), c.Duration(10000))
}

func TestClockRejects(t *testing.T) {
	for _, hz := range []int64{0, -1} {
		_, err := NewClock(hz)
		assert.ErrorContains(t, err, "must be positive")
	}
	for _, mhz := range []float64{0, -250, 0.1234567} {
		_, err := NewClockMHz(mhz)
		assert.Error(t, err, "%v MHz", mhz)
	}
	c, err := NewClockMHz(322.265625)
	require.NoError(t, err)
	assert.Equal(t, int64(322_265_625), c.Hz())
	assert.Equal(t, "322.265625MHz", c.String())
}
