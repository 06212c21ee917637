package hostcpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/hostcpu/store"
	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
)

// ends keeps the events a mover raised, with their times.
type ends struct {
	eng *sim.Engine
	got []sim.Event
	at  []sim.Time
}

func (e *ends) Handle(ev sim.Event) { e.got, e.at = append(e.got, ev), append(e.at, e.eng.Now()) }

// TestStreamedTransferOverlapsItsHops: 1 MiB through a link, host memory
// and a link ends its ticket once, whole or streamed; streamed in 64 KiB
// chunks it overlaps the hops and ends sooner, by about two of the three
// hops' times.
func TestStreamedTransferOverlapsItsHops(t *testing.T) {
	run := func(chunk int64) (sim.Time, []sim.Event) {
		eng := sim.NewEngine(64)
		in, err := sim.NewLink(eng, "in", sim.LinkConfig{Bandwidth: 10 * sim.GBps})
		require.NoError(t, err)
		out, err := sim.NewLink(eng, "out", sim.LinkConfig{Bandwidth: 10 * sim.GBps})
		require.NoError(t, err)
		host, err := memory.NewFlatMemory(eng, "host", 10*sim.GBps, 0)
		require.NoError(t, err)
		e := &ends{eng: eng}
		m := &mover{owner: e, chunk: chunk}
		m.start(ticket(opImported, 7), []store.Hop{{Link: in}, {Dev: host, Write: true, Ring: 256 << 10}, {Link: out}}, 1<<20)
		eng.Run()
		require.Len(t, e.at, 1)
		return e.at[0], e.got
	}
	whole, got := run(0)
	assert.Equal(t, []sim.Event{{Handler: got[0].Handler, Op: opImported, Arg: 7}}, got, "the ticket's op and id come back")
	streamed, _ := run(64 << 10)
	assert.Less(t, streamed, whole)
	hop := whole / 3
	assert.InDelta(t, float64(hop+2*hop/16), float64(streamed), float64(hop/8), "one hop's time and two chunks' more")
}
