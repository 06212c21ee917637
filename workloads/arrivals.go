package workloads

import (
	"fmt"
	"math"

	"github.com/kvcosim/kvcosim/internal/names"
	"github.com/kvcosim/kvcosim/sim"
)

// Arrival is the process the synthetic sessions start by
// (workload.arrival).
type Arrival int

// The arrival processes, each at a mean of SyntheticConfig.SessionRatePerS
// sessions a second.
const (
	// ArrivalPoisson: exponential gaps (CV 1), the default.
	ArrivalPoisson Arrival = iota
	// ArrivalGamma: a renewal process of gamma gaps with ArrivalConfig.GammaCV.
	ArrivalGamma
	// ArrivalDiurnal: a Poisson process whose rate swings as a cosine
	// between trough and peak over ArrivalConfig.DiurnalPeriodS.
	ArrivalDiurnal
	// ArrivalSpike: a Poisson process whose rate is SpikeHeight times the
	// mean from SpikeAtS for SpikeLengthS.
	ArrivalSpike
)

// Arrivals names the arrival processes.
var Arrivals = names.New("arrival process", map[Arrival]string{
	ArrivalPoisson: "poisson", ArrivalGamma: "gamma", ArrivalDiurnal: "diurnal", ArrivalSpike: "spike"})

func (a Arrival) String() string { return Arrivals.Name(a) }

// ArrivalConfig is how sessions start: the process and its parameters
// (docs/workloads.md, "Arrivals", gives each one's source).
type ArrivalConfig struct {
	Process Arrival
	// GammaCV is the gamma gaps' coefficient of variation.
	GammaCV float64
	// DiurnalPeriodS is the diurnal cycle in seconds, and
	// DiurnalPeakToTrough its peak rate over its trough rate (the trough at
	// time 0, the peak half a period later).
	DiurnalPeriodS, DiurnalPeakToTrough float64
	// SpikeAtS and SpikeLengthS are when the spike begins and how long it
	// lasts, in seconds; SpikeHeight is the rate during it over the mean.
	SpikeAtS, SpikeLengthS, SpikeHeight float64
}

// DefaultArrival is Poisson, with each other process's parameters at their
// defaults: a gamma CV of 3.5 (BLIS's bursty preset, ScenarioBurstyTraffic),
// a day's cycle with a peak three times its trough (BLIS's diurnal cohort
// example), and a spike of 10x for 60 s from 200 s (a quarter into the
// default workload's 800 s of arrivals: our choice).
func DefaultArrival() ArrivalConfig {
	return ArrivalConfig{Process: ArrivalPoisson, GammaCV: 3.5, DiurnalPeriodS: 86400, DiurnalPeakToTrough: 3,
		SpikeAtS: 200, SpikeLengthS: 60, SpikeHeight: 10}
}

// The parameters' ranges: a CV past 10 is a gamma shape under 0.01, where
// BLIS falls back to Poisson; a spike of more than 1,000x or a diurnal
// swing of more than 1,000:1 is no longer a serving load.
const (
	MaxGammaCV        = 10
	MaxPeakToTrough   = 1000
	MaxSpikeHeight    = 1000
	minArrivalPeriodS = 1
)

// Validate checks the parameters of the process chosen; spanS is the
// sessions' expected arrival span (sessions / rate), which a spike must
// begin within.
func (a ArrivalConfig) Validate(spanS float64) error {
	horizon := sim.Horizon.Seconds()
	switch a.Process {
	case ArrivalGamma:
		if !(a.GammaCV > 0 && a.GammaCV <= MaxGammaCV) {
			return fmt.Errorf("workload.gamma_cv = %v: must be in (0, %d]", a.GammaCV, MaxGammaCV)
		}
	case ArrivalDiurnal:
		switch {
		case !(a.DiurnalPeriodS >= minArrivalPeriodS && a.DiurnalPeriodS <= horizon):
			return fmt.Errorf("workload.diurnal_period_s = %v: must be in [%d, %v] s", a.DiurnalPeriodS, minArrivalPeriodS, horizon)
		case !(a.DiurnalPeakToTrough >= 1 && a.DiurnalPeakToTrough <= MaxPeakToTrough):
			return fmt.Errorf("workload.diurnal_peak_to_trough = %v: must be in [1, %d]", a.DiurnalPeakToTrough, MaxPeakToTrough)
		}
	case ArrivalSpike:
		switch {
		case !(a.SpikeAtS > 0 && a.SpikeAtS < spanS):
			return fmt.Errorf("workload.spike_at_s = %v: must be in (0, %.6g) s, before the sessions' expected arrival span (workload.sessions / workload.session_rate_per_s) ends", a.SpikeAtS, spanS)
		case !(a.SpikeLengthS > 0 && a.SpikeLengthS <= horizon):
			return fmt.Errorf("workload.spike_length_s = %v: must be in (0, %v] s", a.SpikeLengthS, horizon)
		case !(a.SpikeHeight >= 1 && a.SpikeHeight <= MaxSpikeHeight):
			return fmt.Errorf("workload.spike_height = %v: must be in [1, %d]", a.SpikeHeight, MaxSpikeHeight)
		}
	}
	return nil
}

// starts draws the sessions' start times, one after another, from one
// stream: Poisson exactly as the generator always drew it (one exponential
// a session), so its workloads are unchanged.
type starts struct {
	c    ArrivalConfig
	rate float64 // the mean, sessions a second
	r    *sim.Stream
	gaps *sim.Gamma
	at   sim.Time
}

func newStarts(c ArrivalConfig, rate float64, r *sim.Stream) (*starts, error) {
	s := &starts{c: c, rate: rate, r: r}
	if c.Process == ArrivalGamma {
		shape := 1 / (c.GammaCV * c.GammaCV)
		g, err := sim.NewGamma(shape, 1/(rate*shape))
		if err != nil {
			return nil, err
		}
		s.gaps = g
	}
	return s, nil
}

// next is the next session's start.
func (s *starts) next() sim.Time {
	switch s.c.Process {
	case ArrivalGamma:
		s.at += sim.TimeOf(s.gaps.Sample(s.r) * 1e12)
	case ArrivalDiurnal:
		s.at = s.thinned()
	case ArrivalSpike:
		s.at = s.piecewise()
	default:
		s.at += sim.TimeOf(s.r.ExpFloat64() / s.rate * 1e12)
	}
	return s.at
}

// diurnalSwing is the cosine's amplitude over the mean: peak/trough =
// (1+a)/(1-a).
func (c ArrivalConfig) diurnalSwing() float64 {
	return (c.DiurnalPeakToTrough - 1) / (c.DiurnalPeakToTrough + 1)
}

// DiurnalRate is the diurnal process's rate at t seconds, over its mean:
// 1 - a cos(2 pi t / period), the trough at 0.
func (c ArrivalConfig) DiurnalRate(t float64) float64 {
	return 1 - c.diurnalSwing()*math.Cos(2*math.Pi*t/c.DiurnalPeriodS)
}

// thinned is the diurnal process's next arrival by thinning (Lewis and
// Shedler, 1979): candidates at the peak rate, each kept with the rate at
// its time over the peak's.
func (s *starts) thinned() sim.Time {
	peak := 1 + s.c.diurnalSwing()
	at := s.at
	for {
		at += sim.TimeOf(s.r.ExpFloat64() / (s.rate * peak) * 1e12)
		if s.r.Float64()*peak < s.c.DiurnalRate(at.Seconds()) {
			return at
		}
	}
}

// piecewise is the spike process's next arrival: an exponential gap at the
// rate where it starts; one that passes the spike's start or end begins
// again from there at the new rate (exact: a Poisson process has no memory).
func (s *starts) piecewise() sim.Time {
	from, to := sim.TimeOf(s.c.SpikeAtS*1e12), sim.TimeOf((s.c.SpikeAtS+s.c.SpikeLengthS)*1e12)
	at := s.at
	for {
		rate, edge := s.rate, sim.MaxTime
		switch {
		case at < from:
			edge = from
		case at < to:
			rate, edge = s.rate*s.c.SpikeHeight, to
		}
		next, ok := sim.AddTime(at, sim.TimeOf(s.r.ExpFloat64()/rate*1e12))
		switch {
		case !ok:
			return sim.MaxTime // past the horizon: Synthetic refuses it
		case next < edge:
			return next
		}
		at = edge
	}
}
