package workloads

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

// startTimes draws n session starts of process c at rate, in seconds.
func startTimes(t *testing.T, c ArrivalConfig, rate float64, seed uint64, n int) []float64 {
	s, err := newStarts(c, rate, sim.NewStreams(seed).Stream("workload/arrivals"))
	require.NoError(t, err)
	out := make([]float64, n)
	for i := range out {
		out[i] = s.next().Seconds()
	}
	return out
}

// TestPoissonStartsAreTheOldDraws holds the default process to the draws
// the generator made before there were others: one exponential a session,
// so that every Poisson workload (and every output made from one) stays
// byte for byte what it was.
func TestPoissonStartsAreTheOldDraws(t *testing.T) {
	s, err := newStarts(DefaultArrival(), 0.5, sim.NewStreams(7).Stream("workload/arrivals"))
	require.NoError(t, err)
	old := sim.NewStreams(7).Stream("workload/arrivals")
	at := sim.Time(0)
	for range 1000 {
		at += sim.TimeOf(old.ExpFloat64() / 0.5 * 1e12)
		require.Equal(t, at, s.next())
	}
}

// TestGammaGapsMatchRateAndCV: over many draws the gaps' mean gives the
// rate and their spread the CV asked for, bursty and smooth.
func TestGammaGapsMatchRateAndCV(t *testing.T) {
	for _, cv := range []float64{0.5, 2, 3.5} {
		t.Run(fmt.Sprint(cv), func(t *testing.T) {
			c := DefaultArrival()
			c.Process, c.GammaCV = ArrivalGamma, cv
			times := startTimes(t, c, 0.5, 1, 200_000)
			var sum, sq float64
			prev := 0.0
			for _, at := range times {
				gap := at - prev
				sum, sq, prev = sum+gap, sq+gap*gap, at
			}
			n := float64(len(times))
			mean := sum / n
			sd := math.Sqrt(sq/n - mean*mean)
			assert.InDelta(t, 0.5, 1/mean, 0.5*0.03, "sessions per second")
			assert.InDelta(t, cv, sd/mean, cv*0.05, "coefficient of variation")
		})
	}
}

// TestDiurnalRateSwingsPeakToTrough: the arrivals near the cycle's peak
// and near its trough are in the ratio the cosine gives their windows,
// and over whole cycles the rate is the mean asked for.
func TestDiurnalRateSwingsPeakToTrough(t *testing.T) {
	c := DefaultArrival()
	c.Process, c.DiurnalPeriodS, c.DiurnalPeakToTrough = ArrivalDiurnal, 1000, 4
	const rate, cycles = 2.0, 100
	var trough, peak, all float64
	w := c.DiurnalPeriodS / 10
	for _, at := range startTimes(t, c, rate, 3, 250_000) {
		if at >= cycles*c.DiurnalPeriodS {
			break
		}
		all++
		phase := math.Mod(at, c.DiurnalPeriodS)
		switch {
		case phase < w/2 || phase >= c.DiurnalPeriodS-w/2:
			trough++
		case math.Abs(phase-c.DiurnalPeriodS/2) < w/2:
			peak++
		}
	}
	a := c.diurnalSwing()
	swing := a * c.DiurnalPeriodS / math.Pi * math.Sin(math.Pi*w/c.DiurnalPeriodS) // the cosine's integral over a window
	assert.InDelta(t, (w+swing)/(w-swing), peak/trough, 0.05*(w+swing)/(w-swing), "peak over trough")
	assert.InDelta(t, rate, all/(cycles*c.DiurnalPeriodS), rate*0.01, "the mean rate over whole cycles")
	assert.InDelta(t, 4, c.DiurnalRate(c.DiurnalPeriodS/2)/c.DiurnalRate(0), 1e-12, "the rate's own peak over trough")
}

// TestSpikeAddsItsExtraArrivals: over many seeds the spike's window holds
// height x rate x length arrivals, the extra (height-1) x rate x length
// over the flat rate outside it.
func TestSpikeAddsItsExtraArrivals(t *testing.T) {
	c := DefaultArrival()
	c.Process, c.SpikeAtS, c.SpikeLengthS, c.SpikeHeight = ArrivalSpike, 100, 50, 5
	const rate, seeds = 1.0, 400
	var before, during float64
	for seed := range uint64(seeds) {
		for _, at := range startTimes(t, c, rate, seed, 600) {
			switch {
			case at < c.SpikeAtS:
				before++
			case at < c.SpikeAtS+c.SpikeLengthS:
				during++
			}
		}
	}
	flat := rate * c.SpikeAtS * seeds
	assert.InDelta(t, flat, before, 0.02*flat, "before the spike, the mean rate")
	extra := (c.SpikeHeight - 1) * rate * c.SpikeLengthS * seeds
	assert.InDelta(t, extra, during-rate*c.SpikeLengthS*seeds, 0.03*extra, "the spike's extra arrivals")
}

// TestArrivalsAreDeterministicPerSeed: every process draws the same
// starts from the same seed, and others from another.
func TestArrivalsAreDeterministicPerSeed(t *testing.T) {
	for _, p := range []Arrival{ArrivalPoisson, ArrivalGamma, ArrivalDiurnal, ArrivalSpike} {
		c := DefaultArrival()
		c.Process, c.DiurnalPeriodS = p, 100
		a, b := startTimes(t, c, 0.5, 9, 500), startTimes(t, c, 0.5, 9, 500)
		assert.Equal(t, a, b, p.String())
		assert.NotEqual(t, a, startTimes(t, c, 0.5, 10, 500), p.String())
	}
}

// TestTenantsShareTheSessionsWithTheirLengths: sessions fall to the
// tenants by their shares, carry their tenant, and draw their tenant's
// lengths; the same seed draws the same workload.
func TestTenantsShareTheSessionsWithTheirLengths(t *testing.T) {
	c := DefaultSynthetic()
	c.Sessions = 3000
	c.Tenants = []Tenant{
		{Name: "chat", Share: 0.7, FirstPrompt: LengthFit{1000, 2000}, FollowUpPrompt: LengthFit{200, 400}, Output: LengthFit{100, 300}},
		{Name: "code", Share: 0.3, FirstPrompt: LengthFit{4000, 6000}, FollowUpPrompt: LengthFit{500, 900}, Output: LengthFit{20, 40}},
	}
	w, err := Synthetic(c, sim.NewStreams(4))
	require.NoError(t, err)
	count := map[string]float64{}
	firsts := map[string][]float64{}
	for _, s := range w.Sessions {
		count[s.Tenant]++
		firsts[s.Tenant] = append(firsts[s.Tenant], float64(s.Turns[0].NewTokenCount))
	}
	assert.InDelta(t, 0.7, count["chat"]/3000, 0.03)
	assert.InDelta(t, 0.3, count["code"]/3000, 0.03)
	assert.InDelta(t, 1000, median(firsts["chat"]), 60)
	assert.InDelta(t, 4000, median(firsts["code"]), 200)
	again, err := Synthetic(c, sim.NewStreams(4))
	require.NoError(t, err)
	assert.Equal(t, w.Sessions, again.Sessions)
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}
