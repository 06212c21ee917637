package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/scenario"
)

// Off a terminal, progress is one line a finished unit, with the time
// since the start and an estimate of the time left.
func TestProgressLinesHaveTimes(t *testing.T) {
	var b bytes.Buffer
	p := progress(&b, 3, "run")
	for done := 1; done <= 3; done++ {
		p(done)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 3)
	for i, l := range lines {
		assert.Regexp(t, fmt.Sprintf(`^run %d/3 done, [0-9.mhs]+ elapsed, about [0-9.mhs]+ left$`, i+1), l)
	}
}

// fakeClock is a meter's clock that moves only when told.
type fakeClock struct{ at time.Time }

func (c *fakeClock) now() time.Time           { return c.at }
func (c *fakeClock) advance(by time.Duration) { c.at = c.at.Add(by) }

// newFakeMeter is a meter on b with a clock the test moves.
func newFakeMeter(b *bytes.Buffer, every time.Duration, terminal bool) (*meter, *fakeClock) {
	c := &fakeClock{at: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)}
	m := newMeter(b, "request", every)
	m.now, m.start, m.last, m.terminal = c.now, c.at, c.at, terminal
	return m, c
}

// A log gets a line at most every interval, the estimate from the pace so
// far, and always the last unit's.
func TestMeterLogsEveryInterval(t *testing.T) {
	var b bytes.Buffer
	m, clock := newFakeMeter(&b, 10*time.Second, false)
	for _, step := range []struct {
		after time.Duration
		done  int
	}{{time.Second, 0}, {9 * time.Second, 25}, {5 * time.Second, 30}, {5 * time.Second, 50}, {time.Second, 100}} {
		clock.advance(step.after)
		m.show(step.done, 100, "3 s simulated")
	}
	m.end()
	assert.Equal(t, "request 25/100 done, 3 s simulated, 10s elapsed, about 30s left\n"+
		"request 50/100 done, 3 s simulated, 20s elapsed, about 20s left\n"+
		"request 100/100 done, 3 s simulated, 21s elapsed, about 0s left\n", b.String())
}

// On a terminal the meter redraws one line in place and ends it once.
func TestMeterRedrawsOneLineOnATerminal(t *testing.T) {
	var b bytes.Buffer
	m, clock := newFakeMeter(&b, time.Second, true)
	clock.advance(time.Second)
	m.show(0, 3, "")
	clock.advance(time.Second)
	m.show(1, 3, "")
	m.end()
	m.end()
	assert.Equal(t, "\r[..............................] 0/3 requests, 1s elapsed, estimating the time left "+
		"\r[##########....................] 1/3 requests, 2s elapsed, about 4s left \n", b.String())
}

// A watched run shows its requests over, rising, and the simulated time,
// on the meter (here a line each watch).
func TestRunShowsItsProgress(t *testing.T) {
	l, err := scenario.Load("", []string{"workload.sessions=120"})
	require.NoError(t, err)
	run, err := scenario.Build(l)
	require.NoError(t, err)
	var b bytes.Buffer
	res, err := executeWatched(run, newMeter(&b, "request", 0))
	require.NoError(t, err)
	requests := res.Summary().RequestsCompleted
	line := regexp.MustCompile(`^request (\d+)/` + strconv.Itoa(requests) + ` done, (\d+) s simulated, \d+s elapsed, (about \d+s left|estimating the time left)$`)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Greater(t, len(lines), 2, b.String())
	last := [2]int{-1, -1}
	for _, l := range lines {
		m := line.FindStringSubmatch(l)
		require.NotNil(t, m, l)
		done, _ := strconv.Atoi(m[1])
		simulated, _ := strconv.Atoi(m[2])
		assert.GreaterOrEqual(t, done, last[0], l)
		assert.GreaterOrEqual(t, simulated, last[1], l)
		last = [2]int{done, simulated}
	}
	assert.Less(t, last[0], requests, "no line for the last request: the summary follows")
}
