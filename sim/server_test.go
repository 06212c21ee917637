package sim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// poisson feeds a Server with Poisson arrivals and exponential service.
type poisson struct {
	eng          *Engine
	srv          *Server
	arrivalRNG   *Stream
	serviceRNG   *Stream
	interarrival *Exponential
	service      *Exponential
	left         int
	serviceSum   Time
}

func (p *poisson) Handle(Event) {
	s := p.service.Time(p.serviceRNG)
	p.serviceSum += s
	p.srv.Submit(Job{Service: s})
	if p.left--; p.left > 0 {
		p.eng.After(p.interarrival.Time(p.arrivalRNG), Event{Handler: p})
	}
}

// erlangC is the probability that an arrival waits in an M/M/c queue with
// offered load a = lambda/mu.
func erlangC(c int, a float64) float64 {
	term, sum := 1.0, 1.0
	for k := 1; k < c; k++ {
		term *= a / float64(k)
		sum += term
	}
	last := term * a / float64(c) * float64(c) / (float64(c) - a)
	return last / (sum + last)
}

func runMMc(t *testing.T, servers int, rho float64, customers int, seed uint64) (ServerStats, *poisson, Time) {
	eng := NewEngine(0)
	srv, err := NewServer(eng, "station", servers)
	require.NoError(t, err)
	meanService := float64(Microsecond)
	streams := NewStreams(seed)
	p := &poisson{eng: eng, srv: srv, left: customers,
		arrivalRNG: streams.Stream("arrivals"), serviceRNG: streams.Stream("service"),
		interarrival: MustExponential(meanService / (rho * float64(servers))),
		service:      MustExponential(meanService)}
	eng.Schedule(0, Event{Handler: p})
	eng.Run()
	return srv.Stats(eng.Now()), p, eng.Now()
}

func TestMMcAgainstClosedForm(t *testing.T) {
	if testing.Short() {
		t.Skip("1e6 customers per queue")
	}
	for _, c := range []struct {
		servers int
		rho     float64
	}{{1, 0.8}, {4, 0.8}} {
		stats, _, _ := runMMc(t, c.servers, c.rho, 1_000_000, 2026)
		mu := 1 / float64(Microsecond)
		lambda := c.rho * float64(c.servers) * mu
		wq := erlangC(c.servers, lambda/mu) / (float64(c.servers)*mu - lambda)
		want := wq + 1/mu
		got := stats.Sojourn.Mean
		t.Logf("M/M/%d rho %.1f: mean time in system %.5g ps vs closed form %.5g ps (%+.2f %%)", c.servers, c.rho, got, want, 100*(got/want-1))
		assert.InDelta(t, 1, got/want, 0.02, "M/M/%d rho %.1f: mean time in system %.4g ps, closed form %.4g ps", c.servers, c.rho, got, want)
		assert.InDelta(t, c.rho, stats.Utilisation, 0.01, "M/M/%d utilisation", c.servers)
		assert.Equal(t, int64(1_000_000), stats.Completions)
	}
}

func TestErlangCReducesToMM1(t *testing.T) {
	assert.InDelta(t, 0.8, erlangC(1, 0.8), 1e-12, "in M/M/1 an arrival waits with probability rho")
}

// TestLittlesLaw checks that the server's time-averaged queue length and
// occupancy equal arrival rate x mean wait and x mean service: exactly, for a
// run that ends with the station empty.
func TestLittlesLaw(t *testing.T) {
	for _, servers := range []int{1, 3} {
		stats, p, end := runMMc(t, servers, 0.7, 20000, 9)
		lambda := float64(stats.Arrivals) / float64(end)
		assert.InDelta(t, 1, stats.MeanQueueLen/(lambda*stats.Wait.Mean), 1e-9, "L_q = lambda W_q")
		assert.InDelta(t, 1, stats.MeanInService/(lambda*float64(p.serviceSum)/float64(stats.Arrivals)), 1e-9, "L_s = lambda S")
		l := stats.MeanQueueLen + stats.MeanInService
		assert.InDelta(t, 1, l/(lambda*stats.Sojourn.Mean), 1e-9, "L = lambda W")
	}
}

func TestServerFIFOAndCompletionEvents(t *testing.T) {
	eng := NewEngine(0)
	srv, err := NewServer(eng, "two", 2)
	require.NoError(t, err)
	l := &logger{eng: eng}
	for i, s := range []Time{10, 5, 7, 1} {
		srv.Submit(Job{Service: s, Done: Event{Handler: l, Op: int32(i)}})
	}
	assert.Equal(t, 2, srv.Busy())
	assert.Equal(t, 2, srv.QueueLen())
	eng.Run()
	// job 1 ends at 5, job 2 starts then and ends at 12; job 0 ends at 10,
	// job 3 starts then and ends at 11.
	assert.Equal(t, []string{"5ps:1", "10ps:0", "11ps:3", "12ps:2"}, l.got)
	stats := srv.Stats(eng.Now())
	assert.Equal(t, float64(23)/24, stats.Utilisation)
	assert.Equal(t, 10.0, stats.Wait.Max, "job 3 waits from 0 to 10")
	assert.Equal(t, 3.75, stats.Wait.Mean, "(0+0+5+10)/4")
}

func TestServerRejectsBadCount(t *testing.T) {
	for _, n := range []int{0, -3} {
		_, err := NewServer(NewEngine(0), "bad", n)
		assert.ErrorContains(t, err, "server count")
	}
}

// TestServerRefusesANegativeService: a job's service time is never
// negative (docs/invariants.md, INV-27); one that is, from a price that
// wrapped, stops the run naming the server and the time.
func TestServerRefusesANegativeService(t *testing.T) {
	s, err := NewServer(NewEngine(0), "cpu", 1)
	require.NoError(t, err)
	assert.PanicsWithValue(t, `sim: server "cpu" at 0s: negative service time -1ps`, func() { s.Submit(Job{Service: -1}) })
}

func TestServerStatsOfIdleStation(t *testing.T) {
	eng := NewEngine(0)
	srv, err := NewServer(eng, "idle", 1)
	require.NoError(t, err)
	stats := srv.Stats(eng.Now())
	assert.Zero(t, stats.Utilisation)
	assert.False(t, math.IsNaN(stats.MeanQueueLen))
}

func TestFIFO(t *testing.T) {
	var q FIFO[int]
	for round := range 3 {
		for i := range 10000 {
			q.Push(i + round)
		}
		assert.Equal(t, 10000, q.Len())
		assert.Equal(t, round, q.Peek())
		assert.Equal(t, round+5, q.At(5))
		for i := range 10000 {
			require.Equal(t, i+round, q.Pop())
		}
		assert.Zero(t, q.Len())
	}
	assert.Nil(t, q.buf, "a drained large queue frees its storage")
}
