package memory

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

// ssdDriver issues a fixed list of requests at fixed times.
type ssdDriver struct {
	ssd  *SSD
	reqs []Request
}

func (d *ssdDriver) Handle(ev sim.Event) { d.ssd.Access(d.reqs[ev.Arg]) }

// runSSDWorkload runs the timed requests on a fresh drive and returns it
// with every request's completion time.
func runSSDWorkload(t testing.TB, cfg SSDConfig, at []sim.Time, reqs []Request) (*SSD, map[int64]sim.Time, sim.Time) {
	eng, s, c := newTestSSD(t, cfg)
	d := &ssdDriver{ssd: s}
	for i, r := range reqs {
		r.Done = c.done(int64(i))
		d.reqs = append(d.reqs, r)
		eng.Schedule(at[i], sim.Event{Handler: d, Arg: int64(i)})
	}
	eng.Run()
	return s, c.at, eng.Now()
}

// TestSSDFastPathMatchesEventByEvent runs random mixes of writes (single
// commands and long split ones, often several at the same instant, as an
// export issues its extents) and reads, mostly writes or mostly reads, on
// drives with the closed-form paths and without them (EventByEvent), three
// draws a case: every completion time, every total and the drive's final
// state must be the same.
func TestSSDFastPathMatchesEventByEvent(t *testing.T) {
	// the tiny drive with room for a command beside a part-filled page (with
	// less, a write can wait for ever behind bytes no page will take)
	tiny := tinySSD()
	tiny.WriteBufferBytes = 4 * tiny.MaxIOBytes
	small := KioxiaCM6()
	small.Name, small.QueueDepthMax, small.WriteBufferBytes, small.MaxIOBytes = "cm6-small", 16, 8<<20, 256<<10
	cases := []struct {
		cfg            SSDConfig
		gap            sim.Time // mean gap between bursts
		maxCmds, reads int      // commands per request at most; reads per 100 requests
	}{
		{tiny, 20 * sim.Microsecond, 6, 15},
		{tiny, 200 * sim.Microsecond, 3, 5},
		{small, 2 * sim.Millisecond, 40, 10},
		{small, 20 * sim.Millisecond, 80, 2},
		{KioxiaCM6(), 50 * sim.Millisecond, 300, 10},
		{SamsungPM1743(), 20 * sim.Millisecond, 300, 20},
		{SmartSSDP2P(), 5 * sim.Millisecond, 20, 20},
		// mostly or only reads, which run in closed form until a write
		// arrives or the queue would overflow (cm6-small: 16 slots)
		{tiny, 50 * sim.Microsecond, 6, 85},
		{small, 1 * sim.Millisecond, 40, 90},
		{small, 1 * sim.Millisecond, 12, 100},
		{small, 300 * sim.Microsecond, 40, 97},
		{KioxiaCM6(), 2 * sim.Millisecond, 100, 80},
		{KioxiaCM6(), 20 * sim.Millisecond, 100, 90},
		{KioxiaCM6(), 2 * sim.Millisecond, 100, 100},
		{SamsungPM1743(), 5 * sim.Millisecond, 200, 95},
	}
	for ci, c := range cases {
		t.Run(fmt.Sprintf("%s/%d", c.cfg.Name, ci), func(t *testing.T) {
			var writeRuns, readRuns int64
			for seed := range uint64(3) {
				at, reqs := randomSSDWorkload(c.cfg, rand.New(rand.NewPCG(uint64(ci), 19+seed)), c.gap, c.maxCmds, c.reads)
				got := requireSamePaths(t, c.cfg, at, reqs)
				writeRuns, readRuns = writeRuns+got.page().run.nextID, readRuns+got.page().readRun.nextID
			}
			if c.cfg.SmallIOLatency == 0 && c.reads < 50 {
				assert.Positive(t, writeRuns, "writes took the closed-form path")
			}
			if c.cfg.SmallIOLatency == 0 && c.reads >= 50 {
				assert.Positive(t, readRuns, "reads took the closed-form path")
			}
			t.Logf("%d writes and %d reads in closed form", writeRuns, readRuns)
		})
	}
}

// TestBookedAdmissionWaitsWithoutEvents: writes that queue behind a read,
// and so go event by event, and that overfill the buffer are admitted by
// booking: the same completions as stage by stage, without the controller
// event of each command and the release events of those that wait.
func TestBookedAdmissionWaitsWithoutEvents(t *testing.T) {
	cfg := KioxiaCM6()
	cfg.WriteBufferBytes = 8 << 20
	at := []sim.Time{0, 0, 0}
	reqs := []Request{{Addr: 0, Bytes: 4096}, {Addr: 1 << 30, Bytes: 48 << 20, Write: true}, {Addr: 2 << 30, Bytes: 16 << 20, Write: true}}
	booked := requireSamePaths(t, cfg, at, reqs)
	require.Zero(t, booked.page().run.nextID, "the writes went event by event")
	slow := cfg
	slow.EventByEvent = true
	stage, _, _ := runSSDWorkload(t, slow, at, reqs)
	commands := uint64(64)
	waited := uint64(48) // at least: 8 MiB of the 64 find room at once
	assert.LessOrEqual(t, booked.eng.Handled()+commands+waited, stage.eng.Handled(),
		"no controller event for a write command, no release event for one that waits")
}

// TestBookedArrivalTiesWithARead: on the SmartSSD, whose commands all go
// event by event, a write that completes a page arrives at the very
// picosecond a read leaves the controller, the read issued while the
// write is in the controller (after its transfer is booked, before it
// would have started stage by stage). The write's arrival goes first
// both ways (PriorityEarly), so the read senses plane 0 after the page
// is programmed on it both ways; with the arrival ordered by when it was
// scheduled, the read went first stage by stage and 1.5 ms later booked.
func TestBookedArrivalTiesWithARead(t *testing.T) {
	cfg := SmartSSDP2P()
	link := cfg.Host.linkConfig(cfg.Host.HostToCard)
	arrive := sim.Millisecond + cfg.CommandTime + link.WireTime(1<<10) + link.Latency
	at := []sim.Time{0, sim.Millisecond, arrive - cfg.CommandTime}
	require.Less(t, at[2], sim.Millisecond+cfg.CommandTime, "the read is issued while the write is in the controller")
	reqs := []Request{{Addr: 0, Bytes: 15 << 10, Write: true}, {Addr: 1 << 30, Bytes: 1 << 10, Write: true}, {Addr: 0, Bytes: 16 << 10}}
	requireSamePaths(t, cfg, at, reqs)
}

// randomSSDWorkload draws 400 requests or so in bursts (often several at
// one instant) a mean gap apart: reads per 100 of them, each of up to
// maxCmds commands or, one in three, up to a page.
func randomSSDWorkload(cfg SSDConfig, r *rand.Rand, gap sim.Time, maxCmds, reads int) ([]sim.Time, []Request) {
	var at []sim.Time
	var reqs []Request
	now := sim.Time(0)
	for len(reqs) < 400 {
		now += sim.Time(r.Int64N(int64(2 * gap)))
		for range 1 + r.IntN(4)*r.IntN(2) {
			bytes := 1 + r.Int64N(int64(maxCmds)*cfg.MaxIOBytes)
			if r.IntN(3) == 0 {
				bytes = 1 + r.Int64N(cfg.PageBytes)
			}
			at = append(at, now)
			reqs = append(reqs, Request{Addr: r.Int64N(cfg.CapacityBytes - bytes), Bytes: bytes, Write: r.IntN(100) >= reads})
		}
	}
	return at, reqs
}

// requireSamePaths runs the requests with the closed-form paths and
// without them and requires the same completions, totals and final
// drive state; it returns the drive of the closed-form run. The buffer's
// occupancy is compared net of the releases not yet applied, which the
// two runs may have looked at a different number of times.
func requireSamePaths(t *testing.T, cfg SSDConfig, at []sim.Time, reqs []Request) *SSD {
	slow := cfg
	slow.EventByEvent = true
	want, wantAt, wantEnd := runSSDWorkload(t, slow, at, reqs)
	got, gotAt, gotEnd := runSSDWorkload(t, cfg, at, reqs)
	require.Len(t, wantAt, len(reqs), "the event path finishes every request")
	require.Len(t, gotAt, len(reqs))
	for i := range reqs {
		require.Equal(t, wantAt[int64(i)], gotAt[int64(i)], "request %d (%+v at %v)", i, reqs[i], at[i])
	}
	assert.Equal(t, wantEnd, gotEnd, "the last event")
	assert.Equal(t, want.Stats(), got.Stats())
	wantDrive, gotDrive := want.page(), got.page()
	assert.Equal(t, wantDrive.planes.free(), gotDrive.planes.free())
	assert.Equal(t, orderBits(gotDrive.planes.free()), gotDrive.planes.desc)
	assert.Equal(t, settled(wantDrive), settled(gotDrive))
	assert.Equal(t, []any{wantDrive.planes.pos, wantDrive.planes.lap, wantDrive.pendingBytes, netBuffer(wantDrive), want.lastRelease, wantDrive.ctrl},
		[]any{gotDrive.planes.pos, gotDrive.planes.lap, gotDrive.pendingBytes, netBuffer(gotDrive), got.lastRelease, gotDrive.ctrl})
	assert.False(t, gotDrive.run.active || gotDrive.readRun.active, "every run is written out by the end")
	return got
}

// netBuffer is the write buffer's occupancy once every pending release
// is applied.
func netBuffer(s *pageDrive) int64 {
	used := s.bufferUsed
	for i := range s.pendingReleases.Len() {
		used -= s.pendingReleases.At(i).bytes
	}
	return used
}

// stageRecorder takes only stages (sim.StageSink).
type stageRecorder struct{ sim.SpanRecorder }

func (*stageRecorder) StagesOnly() {}

// TestSSDFastPathBesideStageSinks: a sink that takes only stages leaves the
// closed-form path on and gets no device span (the drive's and its link's
// spans are not stages); one that takes every span turns the path off and
// gets the commands' and transfers' spans.
func TestSSDFastPathBesideStageSinks(t *testing.T) {
	for _, all := range []bool{false, true} {
		eng, s, c := newTestSSD(t, KioxiaCM6())
		var sink sim.Sink = &stageRecorder{}
		if all {
			sink = &sim.SpanRecorder{}
		}
		eng.Trace().AddSink(sink)
		s.Access(Request{Addr: 0, Bytes: 4 << 20, Write: true, Done: c.done(1)})
		eng.Run()
		require.Contains(t, c.at, int64(1))
		if all {
			assert.Zero(t, s.page().run.nextID, "every span wanted: event by event")
			assert.Len(t, sink.(*sim.SpanRecorder).Spans, 8, "a link transfer and a command per MiB")
		} else {
			assert.Equal(t, int64(1), s.page().run.nextID, "the write ran in closed form")
			assert.Empty(t, sink.(*stageRecorder).Spans)
		}
	}
}
