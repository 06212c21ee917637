package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/kvcosim/kvcosim/internal/golden"
)

func TestRollingTopKMatchesFullSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + r.IntN(3000)
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = float32(r.IntN(50)) // many ties
			if trial%2 == 0 {
				vals[i] = r.Float32()
			}
			if trial%3 == 0 && r.IntN(4) == 0 {
				vals[i] = float32(math.Inf(-1)) // masked tokens still fill a short row
			}
		}
		k := 1 + r.IntN(min(n, 100))
		seg := 1 + r.IntN(400)
		got, nan := rollingTopK(vals, k, seg, nil)
		require.Equal(t, -1, nan)
		want := fullSort(vals, nil)[:k]
		require.Equal(t, want, got, "trial %d n %d k %d segment %d", trial, n, k, seg)
	}
}

func TestRollingTopKReportsTheFirstNaN(t *testing.T) {
	vals := make([]float32, 100)
	for i := range vals {
		vals[i] = float32(i % 7)
	}
	for _, at := range []int{0, 3, 57, 99} { // in the seed, in a segment, at the tail
		v := slices.Clone(vals)
		v[at], v[min(at+10, 99)] = float32(math.NaN()), float32(math.NaN())
		_, nan := rollingTopK(v, 5, 16, nil)
		assert.Equal(t, at, nan)
	}
}

func TestRoundingToDTypes(t *testing.T) {
	cases := []struct {
		d    DType
		in   float32
		want float32
	}{
		{Float16, 1.0009765625, 1.0009765625}, // 1 + 2^-10 is a half
		{Float16, 1.00048828125, 1},           // halfway: ties to even
		{Float16, 1.000732421875, 1.0009765625},
		{Float16, 70000, float32(math.Inf(1))},
		{Float16, 65504, 65504},
		{Float16, 1e-7, 1.1920929e-07}, // the nearest subnormal: 2 x 2^-24
		{Float16, -3.14159, -3.140625},
		{BFloat16, 3.14159, 3.140625},
		{BFloat16, 1.00390625, 1},        // 1 + 2^-8: halfway, ties to even
		{BFloat16, 1.01171875, 1.015625}, // 1 + 3 x 2^-8: halfway, up to even
		{Float32, 0.1, 0.1},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.d.Round(c.in), "%v(%v)", c.d, c.in)
	}
	// every half value is a fixed point
	for _, h := range []float32{0.5, 2048, 0.000061035156, -100.5} {
		assert.Equal(t, h, Float16.Round(h))
	}
}
