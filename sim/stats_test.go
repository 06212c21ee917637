package sim

import (
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDistributionQuantilesWithinAccuracy compares the sketch with the exact
// nearest-rank quantiles of the same samples, for several shapes of data.
func TestDistributionQuantilesWithinAccuracy(t *testing.T) {
	s := NewStreams(17).Stream("q")
	ln, err := NewLogNormal(math.Log(1e6), 2)
	require.NoError(t, err)
	gens := map[string]func() float64{
		"lognormal heavy tail": func() float64 { return ln.Sample(s) },
		"uniform":              func() float64 { return 1 + 1e3*s.Float64() },
		"integers with zeros":  func() float64 { return float64(s.IntN(50)) },
	}
	for name, gen := range gens {
		d := NewDistribution()
		vals := make([]float64, 200_000)
		for i := range vals {
			vals[i] = gen()
			d.Add(vals[i])
		}
		sort.Float64s(vals)
		for _, q := range []float64{0, 0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 1} {
			rank := max(int(math.Ceil(q*float64(len(vals)))), 1)
			exact := vals[rank-1]
			got := d.Quantile(q)
			assert.LessOrEqual(t, math.Abs(got-exact), 0.001*exact, "%s q=%v: sketch %v exact %v", name, q, got, exact)
		}
		sum := 0.0
		for _, v := range vals {
			sum += v
		}
		assert.InDelta(t, sum/float64(len(vals)), d.Mean(), 1e-9*sum, name)
		assert.Equal(t, vals[0], d.Min())
		assert.Equal(t, vals[len(vals)-1], d.Max())
	}
}

func TestDistributionMemoryIsBoundedByRange(t *testing.T) {
	d := NewDistribution()
	s := NewStreams(1).Stream("m")
	for range 1_000_000 {
		d.AddTime(Nanosecond + Time(s.Int64N(int64(Second))))
	}
	// 9 decades at ~4,600 buckets per decade, whatever the sample count
	assert.Less(t, len(d.counts), 9*4700)
	assert.Equal(t, int64(1_000_000), d.Count())
}

func TestDistributionEmptyAndRejects(t *testing.T) {
	d := NewDistribution()
	assert.Zero(t, d.Quantile(0.5))
	assert.Zero(t, d.Mean())
	assert.Panics(t, func() { d.Add(-1) })
	assert.Panics(t, func() { d.Add(math.NaN()) })
}

func TestGaugeTimeAverage(t *testing.T) {
	g := NewGauge(0, 0)
	g.Set(10, 4)
	g.Add(30, -2)
	assert.Equal(t, 4.0*20+2*10, g.Area(40))
	assert.Equal(t, 100.0/40, g.Mean(40))
	assert.Equal(t, 4.0, g.Max())
	assert.Equal(t, 2.0, g.Value())
	assert.Panics(t, func() { g.Set(5, 1) }, "time going backwards is a programming error")
}

func TestCounter(t *testing.T) {
	var c Counter
	c.Add(3)
	c.Add(4)
	assert.Equal(t, int64(7), c.Value())
}

// TestFastBucketMatchesMathLog: every sample lands in the bucket
// ceil(math.Log(v) / log(gamma)) puts it in, for values across the range
// and for values a few ulps either side of bucket edges.
func TestFastBucketMatchesMathLog(t *testing.T) {
	d := NewDistribution()
	exact := func(v float64) int { return int(math.Ceil(math.Log(v) * d.invLogGamma)) }
	rng := NewStreams(7).Stream("fastlog")
	for range 200_000 {
		v := math.Exp(rng.Float64()*80 - 20) // 2e-9 .. 5e25
		require.Equal(t, exact(v), d.index(v), "v = %v", v)
		edge := math.Exp(math.Round(math.Log(v)*d.invLogGamma) * d.logGamma)
		for k := -3; k <= 3; k++ {
			w := edge
			for range max(k, -k) {
				w = math.Nextafter(w, math.Inf(k))
			}
			require.Equal(t, exact(w), d.index(w), "v = %v (an edge %+d ulps)", w, k)
		}
	}
	for _, v := range []float64{math.SmallestNonzeroFloat64, 1e-310, 1, 2, 1e12, math.MaxFloat64} {
		require.Equal(t, exact(v), d.index(v), "v = %v", v)
	}
}

// TestFastLogError holds fastLog within its stated 1e-12 of math.Log.
func TestFastLogError(t *testing.T) {
	rng := NewStreams(8).Stream("fastlog")
	for range 200_000 {
		v := math.Exp(rng.Float64()*1400 - 700)
		require.InDelta(t, math.Log(v), fastLog(v), 1e-12, "v = %v", v)
	}
}

// BenchmarkDistributionAdd adds latencies that rarely repeat, as an SSD's
// commands under load give.
func BenchmarkDistributionAdd(b *testing.B) {
	d := NewDistribution()
	rng := NewStreams(9).Stream("latency")
	vs := make([]float64, 4096)
	for i := range vs {
		vs[i] = float64(Time(rng.Int64N(int64(10 * Millisecond))))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		d.Add(vs[i%len(vs)])
	}
}
