package sim

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/bits"
	"math/rand/v2"
	"sort"
)

// Streams derives independent named random streams from one master seed.
// A stream depends only on the seed and its own name, so adding a component
// (and its stream) never changes the draws of another.
type Streams struct {
	seed uint64
}

// NewStreams returns the stream factory of a master seed.
func NewStreams(seed uint64) Streams { return Streams{seed: seed} }

// Seed returns the master seed.
func (s Streams) Seed() uint64 { return s.seed }

// Stream returns a fresh stream for name; the same name gives the same
// sequence of draws.
func (s Streams) Stream(name string) *Stream {
	h := fnv.New64a()
	h.Write([]byte(name))
	pcg := rand.NewPCG(splitmix64(s.seed), splitmix64(h.Sum64()))
	return &Stream{Rand: rand.New(pcg), pcg: pcg}
}

// splitmix64 scrambles a seed so that nearby seeds give unrelated states.
func splitmix64(z uint64) uint64 {
	z += 0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// Stream is one named sequence of random draws (a PCG generator).
type Stream struct {
	*rand.Rand
	pcg *rand.PCG // Rand's source, drawn from directly by FillIntN
}

// FillIntN sets out to len(out) draws of IntN(n) in turn, truncated to 32
// bits: the same draws IntN makes, by math/rand/v2's method on the
// generator called directly rather than through Rand's interface (a day's
// synthetic prompts draw a billion token ids). A draw is the high word of
// the generator's 64 bits times n, drawn again while the low word is below
// 2^64 mod n (uint64n's unbiased reduction; a mask for a power of two).
func (s *Stream) FillIntN(out []uint32, n int) {
	if n <= 0 || bits.UintSize == 32 { // IntN panics, or draws 32 bits at a time
		for i := range out {
			out[i] = uint32(s.IntN(n))
		}
		return
	}
	u := uint64(n)
	for i := range out {
		if u&(u-1) == 0 {
			out[i] = uint32(s.pcg.Uint64() & (u - 1))
			continue
		}
		hi, lo := bits.Mul64(s.pcg.Uint64(), u)
		if lo < u {
			for thresh := -u % u; lo < thresh; {
				hi, lo = bits.Mul64(s.pcg.Uint64(), u)
			}
		}
		out[i] = uint32(hi)
	}
}

// Dist is a distribution of non-negative or real values that draws from a
// Stream. Draws are float64; Time converts a draw for models that need one.
type Dist interface {
	Sample(r *Stream) float64
	Mean() float64
}

// TimeOf converts a draw in picoseconds to Time, rounding to the nearest
// picosecond and clamping at MaxTime. NaN is a programming error (0/0 in a
// model: a part with no work priced at no efficiency) and panics: as a
// Time it would wrap to the most negative one and vanish from a sum.
func TimeOf(ps float64) Time {
	if ps != ps {
		panic("sim: TimeOf(NaN): a time from undefined arithmetic")
	}
	if ps >= float64(MaxTime) {
		return MaxTime
	}
	if ps >= 0 { // math.Round's half away from zero, without its bit work: ps - its truncation is exact
		t := Time(ps)
		if ps-float64(t) >= 0.5 {
			t++
		}
		return t
	}
	return Time(math.Round(ps))
}

// Uniform is the continuous uniform distribution on [Lo, Hi).
type Uniform struct{ lo, hi float64 }

// NewUniform requires finite lo <= hi.
func NewUniform(lo, hi float64) (*Uniform, error) {
	if !finite(lo) || !finite(hi) || lo > hi {
		return nil, fmt.Errorf("uniform [%v, %v): bounds must be finite with lo <= hi", lo, hi)
	}
	return &Uniform{lo, hi}, nil
}

// Sample draws one value.
func (u *Uniform) Sample(r *Stream) float64 { return u.lo + (u.hi-u.lo)*r.Float64() }

// Mean returns (lo+hi)/2.
func (u *Uniform) Mean() float64 { return (u.lo + u.hi) / 2 }

// Exponential is the exponential distribution with a given mean.
type Exponential struct{ mean float64 }

// NewExponential requires a positive finite mean.
func NewExponential(mean float64) (*Exponential, error) {
	if !finite(mean) || mean <= 0 {
		return nil, fmt.Errorf("exponential mean %v: must be positive and finite", mean)
	}
	return &Exponential{mean}, nil
}

// MustExponential is NewExponential for constants in code.
func MustExponential(mean float64) *Exponential { return must(NewExponential(mean)) }

// Sample draws one value.
func (d *Exponential) Sample(r *Stream) float64 { return d.mean * r.ExpFloat64() }

// Time draws one value as a Time, the mean being in picoseconds.
func (d *Exponential) Time(r *Stream) Time { return TimeOf(d.Sample(r)) }

// Mean returns the mean.
func (d *Exponential) Mean() float64 { return d.mean }

// LogNormal is exp(N(Mu, Sigma^2)).
type LogNormal struct{ mu, sigma float64 }

// NewLogNormal requires finite mu and sigma >= 0.
func NewLogNormal(mu, sigma float64) (*LogNormal, error) {
	if !finite(mu) || !finite(sigma) || sigma < 0 {
		return nil, fmt.Errorf("lognormal mu %v sigma %v: need finite mu and sigma >= 0", mu, sigma)
	}
	return &LogNormal{mu, sigma}, nil
}

// LogNormalFromMedianP90 fits a lognormal to a median and a 90th percentile,
// the two figures trace studies usually publish.
func LogNormalFromMedianP90(median, p90 float64) (*LogNormal, error) {
	if !(median > 0) || !(p90 >= median) || !finite(p90) {
		return nil, fmt.Errorf("lognormal median %v p90 %v: need 0 < median <= p90", median, p90)
	}
	const z90 = 1.2815515655446004 // the standard normal's 90th percentile
	return NewLogNormal(math.Log(median), math.Log(p90/median)/z90)
}

// Sample draws one value.
func (d *LogNormal) Sample(r *Stream) float64 { return math.Exp(d.mu + d.sigma*r.NormFloat64()) }

// Mean returns exp(mu + sigma^2/2).
func (d *LogNormal) Mean() float64 { return math.Exp(d.mu + d.sigma*d.sigma/2) }

// Gamma is the gamma distribution by its shape k and scale theta: mean
// k x theta, coefficient of variation 1/sqrt(k). Inter-arrival times of
// shape 1/CV^2 make a renewal process of that CV (bursty for CV > 1), as
// Vidur's and BLIS's gamma arrivals do.
type Gamma struct{ shape, scale float64 }

// NewGamma requires a finite shape and scale > 0.
func NewGamma(shape, scale float64) (*Gamma, error) {
	if !(shape > 0) || !(scale > 0) || !finite(shape) || !finite(scale) {
		return nil, fmt.Errorf("gamma shape %v scale %v: need finite shape > 0 and scale > 0", shape, scale)
	}
	return &Gamma{shape, scale}, nil
}

// Sample draws one value by Marsaglia and Tsang's method ("A simple
// method for generating gamma variables", ACM TOMS 26(3), 2000); a shape
// under 1 draws Gamma(k+1) x U^(1/k).
func (d *Gamma) Sample(r *Stream) float64 {
	k, boost := d.shape, 1.0
	if k < 1 {
		boost, k = math.Pow(r.Float64(), 1/k), k+1
	}
	dd := k - 1.0/3
	c := 1 / math.Sqrt(9*dd)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < x*x/2+dd*(1-v+math.Log(v)) {
			return dd * v * d.scale * boost
		}
	}
}

// Mean returns shape x scale.
func (d *Gamma) Mean() float64 { return d.shape * d.scale }

// Geometric counts Bernoulli(p) trials up to and including the first
// success: values 1, 2, 3, ... with mean 1/p.
type Geometric struct{ p float64 }

// NewGeometric requires 0 < p <= 1.
func NewGeometric(p float64) (*Geometric, error) {
	if !(p > 0 && p <= 1) {
		return nil, fmt.Errorf("geometric p %v: must be in (0, 1]", p)
	}
	return &Geometric{p}, nil
}

// Sample draws one value.
func (d *Geometric) Sample(r *Stream) float64 {
	if d.p == 1 {
		return 1
	}
	u := 1 - r.Float64() // in (0, 1]
	return math.Max(1, math.Ceil(math.Log(u)/math.Log1p(-d.p)))
}

// Mean returns 1/p.
func (d *Geometric) Mean() float64 { return 1 / d.p }

// Zipf draws ranks 1..n with probability proportional to 1/rank^s, for any
// s > 0 (math/rand's Zipf needs s > 1), by inverting a cumulative table.
type Zipf struct {
	cum  []float64
	mean float64
}

// NewZipf requires s > 0 and 1 <= n <= 1e7 (the table holds n floats).
func NewZipf(s float64, n int) (*Zipf, error) {
	if !(s > 0) || !finite(s) || n < 1 || n > 10_000_000 {
		return nil, fmt.Errorf("zipf s %v n %d: need s > 0 and 1 <= n <= 1e7", s, n)
	}
	cum := make([]float64, n)
	total, weighted := 0.0, 0.0
	for i := range n {
		w := math.Pow(float64(i+1), -s)
		total += w
		weighted += w * float64(i+1)
		cum[i] = total
	}
	return &Zipf{cum: cum, mean: weighted / total}, nil
}

// Sample draws one rank.
func (d *Zipf) Sample(r *Stream) float64 {
	u := r.Float64() * d.cum[len(d.cum)-1]
	return float64(sort.SearchFloat64s(d.cum, u) + 1)
}

// Mean returns the mean rank.
func (d *Zipf) Mean() float64 { return d.mean }

// Empirical resamples the given values uniformly (a bootstrap of measured
// data).
type Empirical struct{ values []float64 }

// NewEmpirical requires at least one finite value; it keeps a copy.
func NewEmpirical(values []float64) (*Empirical, error) {
	if len(values) == 0 {
		return nil, fmt.Errorf("empirical distribution: no values")
	}
	for i, v := range values {
		if !finite(v) {
			return nil, fmt.Errorf("empirical distribution: value %d is %v", i, v)
		}
	}
	return &Empirical{values: append([]float64(nil), values...)}, nil
}

// Sample draws one of the values.
func (d *Empirical) Sample(r *Stream) float64 { return d.values[r.IntN(len(d.values))] }

// Mean returns the mean of the values.
func (d *Empirical) Mean() float64 {
	sum := 0.0
	for _, v := range d.values {
		sum += v
	}
	return sum / float64(len(d.values))
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
