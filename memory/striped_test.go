package memory

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

// recordingDrive notes every request and ends it at once.
type recordingDrive struct {
	eng  *sim.Engine
	seen []Request
}

func (d *recordingDrive) Access(r Request) {
	d.seen = append(d.seen, r)
	d.eng.Schedule(d.eng.Now(), r.Done)
}

func (d *recordingDrive) Traffic() Traffic { return Traffic{} }

// TestStripedSplitsAtStripes holds the split against a byte-by-byte
// reference: every byte of the access lands on drive (addr / stripe) mod N
// at (addr / stripe / N) x stripe + addr mod stripe, each drive gets one
// contiguous request, and the access ends once.
func TestStripedSplitsAtStripes(t *testing.T) {
	const stripe = 16
	for _, c := range []struct{ addr, bytes int64 }{
		{0, 16}, {0, 64}, {5, 3}, {5, 100}, {30, 2}, {48, 200}, {7, 16 * 3},
	} {
		eng := sim.NewEngine(0)
		drives := []*recordingDrive{{eng: eng}, {eng: eng}, {eng: eng}}
		s, err := NewStriped(eng, []Device{drives[0], drives[1], drives[2]}, stripe)
		require.NoError(t, err)
		done := newCompletions(eng)
		s.Access(Request{Addr: c.addr, Bytes: c.bytes, Done: done.done(1)})
		eng.Run()
		require.Len(t, done.at, 1, "%+v ends once", c)
		want := map[int]map[int64]bool{}
		for a := c.addr; a < c.addr+c.bytes; a++ {
			d := int(a / stripe % 3)
			if want[d] == nil {
				want[d] = map[int64]bool{}
			}
			want[d][a/stripe/3*stripe+a%stripe] = true
		}
		for d, drive := range drives {
			got := map[int64]bool{}
			for _, r := range drive.seen {
				for a := r.Addr; a < r.Addr+r.Bytes; a++ {
					got[a] = true
				}
			}
			assert.LessOrEqual(t, len(drive.seen), 1, "%+v: drive %d gets one request", c, d)
			assert.Equal(t, len(want[d]), len(got), "%+v: drive %d", c, d)
			for a := range want[d] {
				assert.True(t, got[a], "%+v: drive %d byte %d", c, d, a)
			}
		}
	}
}

// TestStripedAddsUpBandwidth: four drives read a long extent in about a
// quarter of one drive's time, and report the bytes of all four.
func TestStripedAddsUpBandwidth(t *testing.T) {
	read := func(n int) (sim.Time, Traffic) {
		eng := sim.NewEngine(0)
		var dev Device
		var drives []Device
		for range n {
			d, err := NewSSD(eng, tinySSD())
			require.NoError(t, err)
			drives = append(drives, d)
		}
		dev = drives[0]
		if n > 1 {
			s, err := NewStriped(eng, drives, StripeBytes)
			require.NoError(t, err)
			dev = s
		}
		done := newCompletions(eng)
		dev.Access(Request{Addr: 0, Bytes: 64 << 20, Done: done.done(1)})
		eng.Run()
		return done.at[1], dev.Traffic()
	}
	one, _ := read(1)
	four, traffic := read(4)
	assert.Equal(t, int64(64<<20), traffic.BytesRead)
	assert.InDelta(t, 0.25, float64(four)/float64(one), 0.02)
}

func TestStripedRejects(t *testing.T) {
	_, err := NewStriped(sim.NewEngine(0), []Device{&recordingDrive{}}, StripeBytes)
	assert.ErrorContains(t, err, "need at least 2 drives")
}

// wrappedSSD is an SSD the Striped does not know for one: each part it
// ends raises its own event, as every part did before partEnds.
type wrappedSSD struct{ *SSD }

// ending is an access's end as the requester saw it: which, when, and
// its place among the ends.
type ending struct {
	id int64
	at sim.Time
}

// endings records the ends in the order they are handled.
type endings struct {
	eng  *sim.Engine
	seen []ending
}

func (e *endings) Handle(ev sim.Event) { e.seen = append(e.seen, ending{ev.Arg, e.eng.Now()}) }

// TestStripedSSDsRaiseOnlyTheLastPart runs the same random reads and
// writes of whole pages, some overlapping, through striped SSDs and through the same
// SSDs wrapped so that every part raises its event: the accesses must end
// at the same times in the same order, and the striped SSDs handle an
// event fewer for every part that is not its access's last.
func TestStripedSSDsRaiseOnlyTheLastPart(t *testing.T) {
	for _, resolution := range []SSDResolution{ResolutionPage, ResolutionRequest} {
		run := func(wrap bool) ([]ending, uint64) {
			eng := sim.NewEngine(0)
			var drives []Device
			for range 3 {
				cfg := tinySSD()
				cfg.Resolution, cfg.WriteBufferBytes = resolution, 1<<20
				d, err := NewSSD(eng, cfg)
				require.NoError(t, err)
				if wrap {
					drives = append(drives, wrappedSSD{d})
				} else {
					drives = append(drives, d)
				}
			}
			s, err := NewStriped(eng, drives, 8192)
			require.NoError(t, err)
			ends := &endings{eng: eng}
			r := rand.New(rand.NewPCG(5, 6))
			for id := range int64(200) {
				eng.RunUntil(eng.Now() + sim.Time(r.Int64N(int64(30*sim.Microsecond))))
				s.Access(Request{Addr: r.Int64N(1 << 28), Bytes: 4096 * (1 + r.Int64N(16)), Write: r.IntN(3) == 0, Done: sim.Event{Handler: ends, Arg: id}})
			}
			eng.Run()
			return ends.seen, eng.Handled()
		}
		got, events := run(false)
		want, eventsEach := run(true)
		require.Len(t, want, 200)
		assert.Equal(t, want, got, "%v: the ends", resolution)
		assert.Less(t, events, eventsEach, "%v: the events", resolution)
	}
}
