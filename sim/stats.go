package sim

import (
	"fmt"
	"math"
)

// Counter counts events or units (requests, bytes).
type Counter struct{ n int64 }

// Add adds d.
func (c *Counter) Add(d int64) { c.n += d }

// Value returns the count.
func (c *Counter) Value() int64 { return c.n }

// Gauge is a time-weighted level (queue length, busy servers, occupancy): it
// integrates its value over simulated time so that Mean is the time average.
type Gauge struct {
	start, last Time
	value       float64
	area        float64 // value x picoseconds, up to last
	max         float64
}

// NewGauge starts a gauge at value v at time t.
func NewGauge(t Time, v float64) *Gauge { return &Gauge{start: t, last: t, value: v, max: v} }

// Set changes the level at time t (t must not go backwards).
func (g *Gauge) Set(t Time, v float64) {
	if t < g.last {
		panic(fmt.Sprintf("sim: gauge set at %v, before its last update %v", t, g.last))
	}
	g.area += g.value * float64(t-g.last)
	g.last, g.value = t, v
	g.max = math.Max(g.max, v)
}

// Add changes the level by d at time t.
func (g *Gauge) Add(t Time, d float64) { g.Set(t, g.value+d) }

// Value returns the current level.
func (g *Gauge) Value() float64 { return g.value }

// Max returns the highest level seen.
func (g *Gauge) Max() float64 { return g.max }

// Area returns the integral of the level from the start to t, in value x
// picoseconds.
func (g *Gauge) Area(t Time) float64 { return g.area + g.value*float64(t-g.last) }

// Mean returns the time average of the level from the start to t.
func (g *Gauge) Mean(t Time) float64 {
	if t <= g.start {
		return g.value
	}
	return g.Area(t) / float64(t-g.start)
}

// DistAccuracy is the relative error bound of Distribution's quantiles.
const DistAccuracy = 0.0005

// Distribution summarises non-negative samples (latencies in picoseconds,
// sizes): exact count, mean, min and max, and quantiles within DistAccuracy
// relative error (a log-bucket sketch, as DDSketch). Memory is bounded by the
// range of the values, not their number: about 4,600 buckets per decade
// spanned, so 1e8 samples between 1 ns and 1 s need about 330 KB.
type Distribution struct {
	count         int64
	zeros         int64
	sum           float64
	min, max      float64
	offset        int // bucket index of counts[0]
	counts        []int64
	logGamma      float64
	invLogGamma   float64
	reprNumerator float64
	// lastValue and lastBucket memoise the logarithm: simulated latencies
	// repeat exactly (same-size transfers on an idle path).
	lastValue  float64
	lastBucket int
}

// NewDistribution returns an empty distribution.
func NewDistribution() *Distribution {
	gamma := (1 + DistAccuracy) / (1 - DistAccuracy)
	lg := math.Log(gamma)
	return &Distribution{logGamma: lg, invLogGamma: 1 / lg, reprNumerator: 2 * gamma / (gamma + 1)}
}

// Add records one sample; a negative or NaN sample is a programming error.
func (d *Distribution) Add(v float64) {
	if !(v >= 0) || math.IsInf(v, 0) {
		panic(fmt.Sprintf("sim: distribution sample %v is not a finite non-negative value", v))
	}
	if d.count == 0 || v < d.min {
		d.min = v
	}
	if d.count == 0 || v > d.max {
		d.max = v
	}
	d.count++
	d.sum += v
	if v == 0 {
		d.zeros++
		return
	}
	if v != d.lastValue {
		d.lastValue, d.lastBucket = v, d.index(v)
	}
	d.bucket(d.lastBucket)
}

// index is the bucket of a positive v: ceil(log(v) / log(gamma)), by
// fastLog unless that lands within bucketGuard of a bucket's edge, where
// math.Log decides; so every sample lands where math.Log puts it.
func (d *Distribution) index(v float64) int {
	if b := math.Float64bits(v) >> 52; b != 0 && b < 0x7ff { // normal
		x := fastLog(v) * d.invLogGamma
		if c := math.Ceil(x); c-x > bucketGuard && x-(c-1) > bucketGuard {
			return int(c)
		}
	}
	return int(math.Ceil(math.Log(v) * d.invLogGamma))
}

// bucketGuard bounds how far fastLog's bucket position may be from
// math.Log's: fastLog is within 1e-12 of the natural logarithm, and
// |log(v) / log(gamma)| is below 1e6 for every float64, so the two differ
// by far less than this.
const bucketGuard = 1e-6

// fastLog returns log(v) for a positive normal v to within 1e-12: with v =
// m 2^e, m in [1, 2), and m0 = 1 + i/256 the table point at or below m,
// log(v) = e ln 2 + log(m0) + log(1 + t), t = (m - m0) / m0 < 2^-8, the
// last by its series to t^5.
func fastLog(v float64) float64 {
	bits := math.Float64bits(v)
	e := int(bits>>52) - 1023
	i := bits >> 44 & 0xff
	m := math.Float64frombits(bits&(1<<52-1) | 1023<<52)
	t := (m - logTable.start[i]) * logTable.inv[i]
	series := t * (1 - t*(1.0/2-t*(1.0/3-t*(1.0/4-t/5))))
	return float64(e)*math.Ln2 + logTable.log[i] + series
}

// logTable holds fastLog's table points m0 = 1 + i/256, their logarithms
// and reciprocals.
var logTable = func() (tab struct{ start, log, inv [256]float64 }) {
	for i := range tab.start {
		tab.start[i] = 1 + float64(i)/256
		tab.log[i], tab.inv[i] = math.Log(tab.start[i]), 1/tab.start[i]
	}
	return tab
}()

// AddTime records a duration.
func (d *Distribution) AddTime(t Time) { d.Add(float64(t)) }

// bucket increments bucket i, growing the dense window as needed.
func (d *Distribution) bucket(i int) {
	switch {
	case len(d.counts) == 0:
		d.offset = i
		d.counts = make([]int64, 1, 64)
	case i < d.offset:
		grow := d.offset - i
		d.counts = append(make([]int64, grow, grow+len(d.counts)), d.counts...)
		d.offset = i
	case i >= d.offset+len(d.counts):
		d.counts = append(d.counts, make([]int64, i-d.offset-len(d.counts)+1)...)
	}
	d.counts[i-d.offset]++
}

// Count returns the number of samples.
func (d *Distribution) Count() int64 { return d.count }

// Sum returns the exact sum of the samples.
func (d *Distribution) Sum() float64 { return d.sum }

// Mean returns the exact mean (0 with no samples).
func (d *Distribution) Mean() float64 {
	if d.count == 0 {
		return 0
	}
	return d.sum / float64(d.count)
}

// Min returns the smallest sample.
func (d *Distribution) Min() float64 { return d.min }

// Max returns the largest sample.
func (d *Distribution) Max() float64 { return d.max }

// Quantile returns the q-quantile (0 <= q <= 1) by the nearest-rank rule
// (the sample of rank ceil(q*n)), within DistAccuracy relative error; the
// extremes q=0 and q=1 are exact. With no samples it returns 0.
func (d *Distribution) Quantile(q float64) float64 {
	if d.count == 0 {
		return 0
	}
	if q <= 0 {
		return d.min
	}
	if q >= 1 {
		return d.max
	}
	rank := max(int64(math.Ceil(q*float64(d.count))), 1)
	if rank <= d.zeros {
		return 0
	}
	seen := d.zeros
	for j, c := range d.counts {
		seen += c
		if seen >= rank {
			v := d.reprNumerator * math.Exp(float64(j+d.offset-1)*d.logGamma)
			return math.Min(math.Max(v, d.min), d.max)
		}
	}
	return d.max
}

// Summary is the usual digest of a distribution.
type Summary struct {
	Count                               int64
	Mean, Min, P50, P90, P99, P999, Max float64
}

// Summary returns count, mean, min, p50, p90, p99, p99.9 and max.
func (d *Distribution) Summary() Summary {
	return Summary{Count: d.count, Mean: d.Mean(), Min: d.min, P50: d.Quantile(0.5), P90: d.Quantile(0.9),
		P99: d.Quantile(0.99), P999: d.Quantile(0.999), Max: d.max}
}
