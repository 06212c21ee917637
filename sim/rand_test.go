package sim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func draws(s *Stream, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = s.Uint64()
	}
	return out
}

func TestStreamsAreNamedAndIndependent(t *testing.T) {
	a := NewStreams(1)
	assert.Equal(t, draws(a.Stream("ssd"), 8), draws(NewStreams(1).Stream("ssd"), 8), "same seed and name")
	assert.NotEqual(t, draws(a.Stream("ssd"), 8), draws(a.Stream("dram"), 8), "names differ")
	assert.NotEqual(t, draws(a.Stream("ssd"), 8), draws(NewStreams(2).Stream("ssd"), 8), "seeds differ")
	// Creating other streams in between changes nothing of this one.
	first := a.Stream("ssd")
	_ = a.Stream("new-component")
	assert.Equal(t, draws(first, 8), draws(a.Stream("ssd"), 8))
}

func sampleMean(d Dist, s *Stream, n int) float64 {
	sum := 0.0
	for range n {
		sum += d.Sample(s)
	}
	return sum / float64(n)
}

func TestDistributionMeans(t *testing.T) {
	mk := func(d Dist, err error) Dist {
		require.NoError(t, err)
		return d
	}
	z, err := NewZipf(1.1, 1000)
	require.NoError(t, err)
	cases := []struct {
		name string
		d    Dist
		want float64
	}{
		{"uniform", mk(NewUniform(2, 6)), 4},
		{"exponential", mk(NewExponential(3)), 3},
		{"lognormal", mk(NewLogNormal(1, 0.5)), math.Exp(1.125)},
		{"geometric", mk(NewGeometric(0.25)), 4},
		{"gamma", mk(NewGamma(2.5, 3)), 7.5},
		{"gamma below shape 1", mk(NewGamma(0.25, 8)), 2},
		{"zipf", z, z.Mean()},
		{"empirical", mk(NewEmpirical([]float64{1, 2, 3, 10})), 4},
	}
	for _, c := range cases {
		assert.InDelta(t, c.want, c.d.Mean(), 1e-9*c.want, "%s closed-form mean", c.name)
		got := sampleMean(c.d, NewStreams(5).Stream(c.name), 400_000)
		assert.InDelta(t, 1, got/c.want, 0.02, "%s sample mean %v, want %v", c.name, got, c.want)
	}
}

func TestZipfFrequencies(t *testing.T) {
	z, err := NewZipf(1, 10)
	require.NoError(t, err)
	s := NewStreams(11).Stream("zipf")
	counts := make([]int, 11)
	const n = 300_000
	for range n {
		counts[int(z.Sample(s))]++
	}
	h10 := 0.0
	for k := 1; k <= 10; k++ {
		h10 += 1 / float64(k)
	}
	for k := 1; k <= 10; k++ {
		want := n / (float64(k) * h10)
		assert.InDelta(t, want, float64(counts[k]), 5*math.Sqrt(want), "rank %d", k)
	}
	assert.Zero(t, counts[0])
}

func TestLogNormalFromMedianP90(t *testing.T) {
	d, err := LogNormalFromMedianP90(40, 302) // RAGPulse inter-turn gaps, seconds
	require.NoError(t, err)
	dist := NewDistribution()
	s := NewStreams(1).Stream("gaps")
	for range 200_000 {
		dist.Add(d.Sample(s))
	}
	assert.InDelta(t, 40, dist.Quantile(0.5), 1)
	assert.InDelta(t, 302, dist.Quantile(0.9), 8)
}

func TestDistributionConstructorsReject(t *testing.T) {
	bad := []error{
		second(NewUniform(3, 1)), second(NewUniform(math.NaN(), 1)),
		second(NewExponential(0)), second(NewExponential(-1)),
		second(NewLogNormal(0, -1)), second(NewGamma(0, 1)), second(NewGamma(1, math.Inf(1))), second(NewGeometric(0)), second(NewGeometric(1.5)),
		second(NewZipf(0, 10)), second(NewZipf(1, 0)),
		second(NewEmpirical(nil)), second(NewEmpirical([]float64{1, math.Inf(1)})),
		second(LogNormalFromMedianP90(10, 5)),
	}
	for i, err := range bad {
		assert.Error(t, err, "case %d", i)
	}
}

func second[T any](_ T, err error) error { return err }

func TestTimeOfRoundsClampsAndRefusesNaN(t *testing.T) {
	for _, c := range []struct {
		ps   float64
		want Time
	}{{0, 0}, {1.4, 1}, {1.5, 2}, {-2.6, -3}, {1e30, MaxTime}, {math.Inf(1), MaxTime}} {
		assert.Equal(t, c.want, TimeOf(c.ps), "%v ps", c.ps)
	}
	assert.PanicsWithValue(t, "sim: TimeOf(NaN): a time from undefined arithmetic", func() { TimeOf(math.NaN()) })
}

// TestTimeOfIsMathRound holds TimeOf's rounding to math.Round's on ties,
// their neighbours, every binade and random values.
func TestTimeOfIsMathRound(t *testing.T) {
	values := []float64{0.49999999999999994, 0.5, 2.5, 3.5, 1<<52 - 0.5, 1 << 52, 1<<53 + 2, math.SmallestNonzeroFloat64, -0.5, -1.5}
	for e := range 63 {
		x := math.Ldexp(1, e)
		values = append(values, x, math.Nextafter(x, 0), math.Nextafter(x, math.Inf(1)), x+0.5, x-0.5)
	}
	s := NewStreams(7).Stream("timeof")
	for range 100_000 {
		values = append(values, math.Ldexp(float64(s.Uint64()>>11), int(s.Uint64()%60)-53))
	}
	for _, v := range values {
		if v < float64(MaxTime) {
			require.Equal(t, Time(math.Round(v)), TimeOf(v), "%v ps", v)
		}
	}
}

// TestFillIntNDrawsAsIntN holds FillIntN to IntN's draws, and the stream's
// state after them, for bounds of every kind: a power of two, a vocabulary,
// one near 2^63 (redraws are likely) and 1.
func TestFillIntNDrawsAsIntN(t *testing.T) {
	for _, n := range []int{1, 2, 1024, 128_256, 1000, 1<<62 + 12345, math.MaxInt64} {
		a, b := NewStreams(3).Stream("fill"), NewStreams(3).Stream("fill")
		got := make([]uint32, 5000)
		a.FillIntN(got, n)
		for i := range got {
			require.Equal(t, uint32(b.IntN(n)), got[i], "n %d, draw %d", n, i)
		}
		assert.Equal(t, b.Uint64(), a.Uint64(), "n %d: the stream goes on alike", n)
	}
	assert.Panics(t, func() { NewStreams(3).Stream("fill").FillIntN(make([]uint32, 1), 0) })
}
