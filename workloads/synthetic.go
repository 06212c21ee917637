package workloads

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kvcosim/kvcosim/sim"
)

// LengthFit is a lognormal given by its median and 90th percentile, the
// two figures published trace statistics give.
type LengthFit struct {
	Median, P90 float64
}

// SyntheticConfig is a multi-turn chat workload.
type SyntheticConfig struct {
	Sessions int
	// SessionRatePerS is the mean rate at which sessions start, by the
	// process Arrival gives (Poisson unless it says otherwise).
	SessionRatePerS float64
	Arrival         ArrivalConfig
	// Tenants, when given, share the sessions out, each session drawing
	// its tenant by their shares and its lengths from its tenant's fits
	// (FirstPrompt, FollowUpPrompt and Output are then not read).
	Tenants []Tenant
	// TurnsMean is the mean number of turns (geometric).
	TurnsMean float64
	// FirstPrompt, FollowUpPrompt and Output are token counts; Think and
	// Interruption are seconds.
	FirstPrompt, FollowUpPrompt, Output LengthFit
	Think, Interruption                 LengthFit
	// InterruptProbability is the chance that a gap is an interruption.
	InterruptProbability float64
	// SystemPromptTokens are shared by every session's first prompt.
	SystemPromptTokens int
	// MaxPromptTokens and MaxOutputTokens clamp the draws.
	MaxPromptTokens, MaxOutputTokens int
	Vocab                            int
	// MemoryLimitBytes bounds RunMemoryEstimate; 0: MaxSyntheticBytes.
	MemoryLimitBytes int64
}

// DefaultSynthetic is fitted to public statistics: 3.51 turns per
// conversation (ShareGPT); first prompts and outputs as Azure's 2023
// conversation trace (context tokens median 1,020, p90 2,734; generated
// median 129, p90 424); a follow-up turn adds the first prompt's fit scaled
// by 1/3.51 (Azure's context includes the history); think times as
// RAGPulse's inter-turn gaps (median 40 s, p90 302 s); one gap in ten an
// interruption of about 10 minutes.
func DefaultSynthetic() SyntheticConfig {
	return SyntheticConfig{Sessions: 400, SessionRatePerS: 0.5, TurnsMean: 3.51,
		FirstPrompt: LengthFit{1020, 2734}, FollowUpPrompt: LengthFit{1020 / 3.51, 2734 / 3.51}, Output: LengthFit{129, 424},
		Think: LengthFit{40, 302}, Interruption: LengthFit{600, 1800}, InterruptProbability: 0.1,
		MaxPromptTokens: 8192, MaxOutputTokens: 2048, Vocab: 32000, Arrival: DefaultArrival()}
}

// Validate checks the configuration.
func (c SyntheticConfig) Validate() error {
	switch {
	case c.Sessions < 1:
		return fmt.Errorf("workload.sessions = %d: must be at least 1", c.Sessions)
	case !(c.SessionRatePerS > 0) || math.IsInf(c.SessionRatePerS, 0):
		return fmt.Errorf("workload.session_rate_per_s = %v: must be positive", c.SessionRatePerS)
	case !(c.TurnsMean >= 1):
		return fmt.Errorf("workload.turns_mean = %v: must be at least 1", c.TurnsMean)
	case !(c.InterruptProbability >= 0 && c.InterruptProbability <= 1):
		return fmt.Errorf("workload.interrupt_probability = %v: must be in [0, 1]", c.InterruptProbability)
	case c.SystemPromptTokens < 0:
		return fmt.Errorf("workload.system_prompt_tokens = %d: must be at least 0", c.SystemPromptTokens)
	case c.MaxPromptTokens < 1 || c.MaxOutputTokens < 1:
		return fmt.Errorf("workload: max_prompt_tokens %d and max_output_tokens %d: each must be at least 1", c.MaxPromptTokens, c.MaxOutputTokens)
	case c.Vocab < 2:
		return fmt.Errorf("model: a vocabulary of %d tokens: the generator draws token ids from at least 2", c.Vocab)
	}
	if err := checkFits("workload.", []namedFit{{"first_prompt_median_tokens", "first_prompt_p90_tokens", c.FirstPrompt},
		{"follow_up_median_tokens", "follow_up_p90_tokens", c.FollowUpPrompt},
		{"output_median_tokens", "output_p90_tokens", c.Output},
		{"think_median_s", "think_p90_s", c.Think}, {"interruption_s", "interruption_s", c.Interruption}}); err != nil {
		return err
	}
	if err := c.Arrival.Validate(float64(c.Sessions) / c.SessionRatePerS); err != nil {
		return err
	}
	if err := validateTenants(c.Tenants); err != nil {
		return err
	}
	return c.checkSize()
}

// namedFit is a length fit and its two keys.
type namedFit struct {
	median, p90 string
	fit         LengthFit
}

// checkFits checks each fit: a positive, finite median and a finite p90 no
// less, naming its keys after prefix.
func checkFits(prefix string, fits []namedFit) error {
	for _, f := range fits {
		switch {
		case !(f.fit.Median > 0) || math.IsInf(f.fit.Median, 0):
			return fmt.Errorf("%s%s: median %v: must be positive and finite", prefix, f.median, f.fit.Median)
		case !(f.fit.P90 >= f.fit.Median) || math.IsInf(f.fit.P90, 0): // either key may be the one given
			return fmt.Errorf("%s%s,%s%s: p90 %v (%s%s) must be finite and at least the median %v (%s%s)",
				prefix, f.p90, prefix, f.median, f.fit.P90, prefix, f.p90, f.fit.Median, prefix, f.median)
		}
	}
	return nil
}

// MaxSyntheticBytes bounds the memory a run of a synthetic workload is
// estimated to take (RunMemoryEstimate, before anything is drawn), unless
// MemoryLimitBytes says otherwise (workload.memory_limit_gib, for a
// machine with room: a simulated day of a cluster held 17.6 GiB of heap,
// 12.1 GiB since the history grows in place, and is estimated at 23 GB).
const MaxSyntheticBytes = 4 << 30

// MaxMemoryLimitGiB is the most a run's memory limit may be raised to
// (workload.memory_limit_gib, functional.memory_limit_gib). The simulator
// does not know the machine's memory; 256 GiB is a large server's, eleven
// times the largest run the project has measured (a simulated day of 64
// nodes, estimated at 23 GB). It used to be 1 PiB, which let a run grow
// until the machine gave out.
const MaxMemoryLimitGiB = 256

// What a run of a synthetic workload keeps resident (the most a run's
// process holds, /usr/bin/time's %M), per token, per request (turn) and
// per session, measured on 2026-11-26 (Go 1.26, GOGC unset) with
//
//	/usr/bin/time -f "%M KB %e s" simrun run -o OUT --set workload.sessions=N [--set system.design=D] [--set KEY=V]
//
// one run at a time, N = 10,000, 20,000 and 40,000; a heap profile of
// the same runs (scenario.Build and Execute, then Rows and requests.csv)
// says where it goes:
//
//   - a token is 4 B in the workload (Turn.NewTokens, Turn.Output; a
//     system prompt copied into each session's first turn) and 4 B again
//     in its session's history (the prompt the last turn built, which
//     append grows by up to 1.25x), so the live heap holds about 8.6 B a
//     token (pprof: 132 MiB workload + 144 MiB histories for 10,000
//     default sessions, 3,049 tokens each); the collector lets the heap
//     grow to twice the live heap (GOGC=100) and every turn copies its
//     history into a new prompt, so a token costs 19.7-21.8 B resident
//     (lmcache, the design that keeps the most: default fits 19.9 B,
//     system_prompt_tokens=4000 19.7 B, turns_mean=7 21.8 B); 24 B;
//   - a request is its Turn (120 B), its Record (224 B, in a slice that
//     grows by 1.25x), its requests.csv row (192 B, and some 170 B of
//     text), the store's directory entries for its export: 1.4 KB (fpga)
//     to 1.8 KB (lmcache) of live heap a request with the session table
//     and measured 1.77 KB resident a request with one-token prompts and
//     outputs (first_prompt, follow_up and output median and p90 1,
//     20,000 sessions, 69,785 requests: 143.6 MB, estimate 191 MB; fpga
//     130 MB); 2 KiB;
//   - a session is its table (368 B), its workload Session (48 B; 72 B with Tokens) and
//     their slices' growth: 512 B;
//   - a run of 10 sessions holds 19.9 MB; 32 MiB.
//
// Since 2026-11-27 (issue 41 part 3) a session's history grows in place,
// in one array with room for its turns, where every turn copied it into a
// new prompt, and the records are reserved up front: a run holds less
// than the table below (the cluster day 12.1 GiB of heap, not 17.6); the
// estimate is left as it was, an upper bound. Since that day's fourth
// session a synthetic session's history is a piece of its workload array
// (Session.Tokens), so a token's second 4 B are gone too (the day 8.5 GiB).
//
// Measured against the estimate (resident, MB = 1e6 B; estimate/resident):
//
//	sessions  workload            estimate  fpga          lmcache
//	10,000    default                 842   596 (1.41)    708 (1.19)
//	20,000    default                1651  1177 (1.40)   1366 (1.21)
//	40,000    default                3268  2271 (1.44)   2688 (1.22)
//	10,000    system prompt 4000     1802  1380 (1.31)   1474 (1.22)
//	10,000    turns_mean 7           1407  1199 (1.17)   1259 (1.12)
//
// (recompute, cpu, cachedattention and fpga with block hashing took 597,
// 604, 712 and 600 MB at 10,000 default sessions; 40,000 at
// session_rate_per_s 1, fpga, 2376 MB.)
const (
	runTokenBytes   = 24
	runRequestBytes = 2 << 10
	runSessionBytes = 512
	runFixedBytes   = 32 << 20
)

// TokensPerSession is a session's expected tokens, prompts and outputs,
// from the fits' means (clamped to the maxima): the system prompt and the
// first prompt, turns_mean-1 follow-ups and turns_mean outputs.
// With tenants, it is their mean by their shares.
func (c SyntheticConfig) TokensPerSession() float64 {
	if len(c.Tenants) > 0 {
		return c.tenantTokens()
	}
	return c.tokensWith(c.FirstPrompt, c.FollowUpPrompt, c.Output)
}

// tokensWith is TokensPerSession for these length fits.
func (c SyntheticConfig) tokensWith(first, followUp, output LengthFit) float64 {
	return float64(c.SystemPromptTokens) + first.mean(c.MaxPromptTokens) +
		(c.TurnsMean-1)*followUp.mean(c.MaxPromptTokens) + c.TurnsMean*output.mean(c.MaxOutputTokens)
}

// RunMemoryEstimate is the memory, in bytes, a run of the workload is
// estimated to keep resident: an upper bound for the measured runs above,
// by 1.1x to 1.45x.
func (c SyntheticConfig) RunMemoryEstimate() float64 {
	perSession := runSessionBytes + c.TurnsMean*runRequestBytes + runTokenBytes*c.TokensPerSession()
	return runFixedBytes + float64(c.Sessions)*perSession
}

// checkSize refuses, before anything is drawn, a workload whose sessions
// would arrive past sim.Horizon or whose run would not fit
// MaxSyntheticBytes (RunMemoryEstimate).
func (c SyntheticConfig) checkSize() error {
	limit := float64(c.MemoryLimitBytes)
	if limit == 0 {
		limit = MaxSyntheticBytes
	}
	if est := c.RunMemoryEstimate(); est > limit {
		key := "workload.sessions"
		switch system := runTokenBytes * float64(c.SystemPromptTokens); {
		case system > (est-runFixedBytes)/float64(c.Sessions)-system:
			key = "workload.system_prompt_tokens"
		case c.TurnsMean > float64(c.Sessions):
			key = "workload.turns_mean"
		}
		return fmt.Errorf("%s: %d sessions of %v turns (system prompt %d tokens) would take about %.3g GB in a run, more than the %.3g GiB limit (workload.memory_limit_gib, on a machine with room)",
			key, c.Sessions, c.TurnsMean, c.SystemPromptTokens, est/1e9, limit/(1<<30))
	}
	if span := float64(c.Sessions) / c.SessionRatePerS; span > sim.Horizon.Seconds()/2 {
		return fmt.Errorf("workload.session_rate_per_s = %v: %d sessions arrive over about %.3g s, past half the %v limit of a run",
			c.SessionRatePerS, c.Sessions, span, sim.Horizon)
	}
	return nil
}

// mean is the lognormal's mean, clamped to maxTokens: sigma from the p90's
// z-score of 1.2816.
func (f LengthFit) mean(maxTokens int) float64 {
	sigma := math.Log(f.P90/f.Median) / 1.2815515655446004
	return min(f.Median*math.Exp(sigma*sigma/2), float64(maxTokens))
}

// SyntheticKind is the synthetic generator's name among the kinds of
// workload (Kinds).
const SyntheticKind = "synthetic"

// Synthetic draws a workload; each session draws from its own stream, so a
// session does not change when others are added. The sessions' starts and
// tenants come first, in order, from streams of their own; then the
// sessions are drawn on every CPU at once (a day of a cluster draws a
// billion token ids), each into its place, so the workload is the same
// however many CPUs draw it.
func Synthetic(c SyntheticConfig, streams sim.Streams) (*Workload, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	d, err := newSessionDrawer(c, streams)
	if err != nil {
		return nil, err
	}
	heads, late, err := d.heads()
	if err != nil {
		return nil, err
	}
	w := &Workload{Sessions: make([]Session, len(heads))}
	errs := make([]error, len(heads))
	d.drawAll(heads, w.Sessions, errs)
	for _, err := range errs {
		if err != nil {
			return nil, err // the first session's, as a draw in order would stop at
		}
	}
	return w, late
}

// sessionDrawer draws a synthetic session's turns from the session's own
// stream; it holds only what every session reads.
type sessionDrawer struct {
	c                SyntheticConfig
	streams          sim.Streams
	think, interrupt *sim.LogNormal
	turns            *sim.Geometric
	system           []uint32 // the system prompt's ids
}

// newSessionDrawer builds the distributions and the system prompt.
func newSessionDrawer(c SyntheticConfig, streams sim.Streams) (*sessionDrawer, error) {
	think, err := sim.LogNormalFromMedianP90(c.Think.Median, c.Think.P90)
	if err != nil {
		return nil, err
	}
	interrupt, err := sim.LogNormalFromMedianP90(c.Interruption.Median, c.Interruption.P90)
	if err != nil {
		return nil, err
	}
	turns, err := sim.NewGeometric(1 / c.TurnsMean)
	if err != nil {
		return nil, err
	}
	system := make([]uint32, c.SystemPromptTokens)
	sysRNG := streams.Stream("workload/system-prompt")
	for i := range system {
		system[i] = uint32(sysRNG.IntN(c.Vocab))
	}
	return &sessionDrawer{c: c, streams: streams, think: think, interrupt: interrupt, turns: turns, system: system}, nil
}

// sessionHead is what a session draws before its turns: its start and
// tenant.
type sessionHead struct {
	start  sim.Time
	tenant *tenantDists
}

// heads draws the sessions' starts and tenants in order, up to the first
// that would start past sim.Horizon: late is that session's error (nil
// if none), returned after any error of the sessions before it.
func (d *sessionDrawer) heads() (heads []sessionHead, late, err error) {
	c, streams := d.c, d.streams
	tenants, err := c.tenantLengths()
	if err != nil {
		return nil, nil, err
	}
	arrivals, err := newStarts(c.Arrival, c.SessionRatePerS, streams.Stream("workload/arrivals"))
	if err != nil {
		return nil, nil, err
	}
	tenantRNG := streams.Stream("workload/tenants")
	heads = make([]sessionHead, 0, c.Sessions)
	for id := range c.Sessions {
		start := arrivals.next()
		if start > sim.Horizon {
			return heads, fmt.Errorf("workload.session_rate_per_s = %v: session %d would start past the %v limit of a run", c.SessionRatePerS, id, sim.Horizon), nil
		}
		heads = append(heads, sessionHead{start: start, tenant: c.tenantOf(tenantRNG, tenants)})
	}
	return heads, nil, nil
}

// drawAll draws session i from heads[i] into out[i] (its error into
// errs[i]), on as many goroutines as the process has CPUs, each taking
// the next batch of sessions.
func (d *sessionDrawer) drawAll(heads []sessionHead, out []Session, errs []error) {
	const batch = 64
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			var scratch []uint32 // a session's ids as they are drawn, before layOut
			for {
				first := int(next.Add(batch)) - batch
				if first >= len(heads) {
					return
				}
				for id := first; id < min(first+batch, len(heads)); id++ {
					out[id], scratch, errs[id] = d.session(id, heads[id], scratch)
				}
			}
		})
	}
	wg.Wait()
}

// session draws session id's turns from its own stream (scratch: room
// for its ids, returned grown for the next session).
func (d *sessionDrawer) session(id int, h sessionHead, scratch []uint32) (Session, []uint32, error) {
	c, tenant := d.c, h.tenant
	r := d.streams.Stream(fmt.Sprintf("workload/session/%d", id))
	s, end := Session{ID: int64(id), Start: h.start, Tenant: tenant.name}, h.start
	ids := scratch[:0]
	for t := range int(d.turns.Sample(r)) {
		fit, prefix := tenant.follow, []uint32(nil)
		if t == 0 {
			fit, prefix = tenant.first, d.system
		}
		turn := Turn{Node: -1}
		n := draw(r, fit, c.MaxPromptTokens)
		ids = drawTokens(r, append(ids, prefix...), n, c.Vocab) // the prefix and the drawn tokens
		turn.NewTokenCount = int64(len(prefix) + n)
		out := draw(r, tenant.output, c.MaxOutputTokens)
		ids = drawTokens(r, ids, out, c.Vocab)
		turn.OutputCount = int64(out)
		if t > 0 {
			gap := d.think.Sample(r)
			if r.Float64() < c.InterruptProbability {
				gap, turn.Interrupted = gap+d.interrupt.Sample(r), true
			}
			turn.Gap = sim.TimeOf(gap * 1e12)
			var ok bool
			if end, ok = sim.AddTime(end, turn.Gap); !ok || end > sim.Horizon {
				return s, ids, fmt.Errorf("workload.think_median_s = %v, think_p90_s = %v, turns_mean = %v: session %d's turn %d would arrive past the %v limit of a run (its think times add up past it)",
					c.Think.Median, c.Think.P90, c.TurnsMean, id, t, sim.Horizon)
			}
		}
		s.Turns = append(s.Turns, turn)
	}
	s.layOut(ids)
	return s, ids, nil
}

// draw is a token count from d, from 1 to maxTokens. It clamps the draw
// before converting it: a draw past what an int holds (a heavy tail's, or
// a median of 1e19) converts to an undefined int, the most negative one on
// amd64, which made a single token of it.
func draw(r *sim.Stream, d *sim.LogNormal, maxTokens int) int {
	return int(math.Round(min(max(1, d.Sample(r)), float64(maxTokens))))
}

// drawTokens appends n token ids drawn from r below vocab to ids.
func drawTokens(r *sim.Stream, ids []uint32, n, vocab int) []uint32 {
	at := len(ids)
	ids = slices.Grow(ids, n)[:at+n]
	r.FillIntN(ids[at:], vocab)
	return ids
}
