package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/kvcosim/kvcosim/scenario"
)

// meter shows how far a long command has come: units done of a total,
// the time since it started and an estimate of the time left, as a bar
// redrawn in place on a terminal and as plain lines otherwise (a log file,
// a CI job). The times are the host's: they go to the console (stderr, or
// a sweep's stdout), never into a file the command writes.
type meter struct {
	w        io.Writer
	unit     string
	terminal bool
	// every is the least time between two lines (0: a line each call);
	// the last unit's line is always shown.
	every       time.Duration
	start, last time.Time
	drawn       bool // a terminal's line is open
	now         func() time.Time
}

// Intervals between a run's progress lines: a terminal's line is redrawn
// about every second, a log gets a line every ten.
const (
	redrawEvery = time.Second
	logEvery    = 10 * time.Second
)

// newMeter starts a meter of unit (a word: "run", "request") on w that
// shows at most a line per every.
func newMeter(w io.Writer, unit string, every time.Duration) *meter {
	m := &meter{w: w, unit: unit, terminal: isTerminal(w), every: every, now: time.Now}
	m.start = m.now()
	m.last = m.start
	return m
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// show reports done of total units, detail (if any) after them, when
// every has passed since the last line or done is total.
func (m *meter) show(done, total int, detail string) {
	now := m.now()
	if done < total && now.Sub(m.last) < m.every {
		return
	}
	m.last = now
	elapsed := now.Sub(m.start)
	times := fmt.Sprintf("%s elapsed, %s", elapsed.Round(time.Second), estimate(elapsed, done, total))
	if detail != "" {
		detail = ", " + detail
	}
	if !m.terminal {
		fmt.Fprintf(m.w, "%s %d/%d done%s, %s\n", m.unit, done, total, detail, times)
		return
	}
	const width = 30
	filled := min(done, total) * width / max(total, 1)
	bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
	fmt.Fprintf(m.w, "\r[%s] %d/%d %ss%s, %s ", bar, done, total, m.unit, detail, times)
	m.drawn = true
	if done >= total {
		m.end()
	}
}

// estimate is the time left if the units left go at the pace of those
// done.
func estimate(elapsed time.Duration, done, total int) string {
	if done <= 0 {
		return "estimating the time left"
	}
	left := time.Duration(float64(elapsed) / float64(done) * float64(max(total-done, 0)))
	return fmt.Sprintf("about %s left", left.Round(time.Second))
}

// end closes a terminal's line, so that what is printed next starts on
// its own.
func (m *meter) end() {
	if m.drawn {
		fmt.Fprintln(m.w)
		m.drawn = false
	}
}

// progress reports finished units (a sweep's points, the study's runs):
// a line for each.
func progress(w io.Writer, total int, unit string) func(done int) {
	m := newMeter(w, unit, 0)
	return func(done int) { m.show(done, total, "") }
}

// runMeter is the meter of one long run on w (stderr): redrawn about every
// second on a terminal and a line every ten seconds otherwise, so that a
// short run prints nothing to a log.
func runMeter(w io.Writer) *meter {
	m := newMeter(w, "request", logEvery)
	if m.terminal {
		m.every = redrawEvery
	}
	return m
}

// executeWatched runs run with its progress on m as it goes: the requests
// over (completed or rejected) of the workload's, with the simulated time.
// The watch costs the run a clock read every sim.WatchEvents events and
// changes none of its outputs.
func executeWatched(run *scenario.Run, m *meter) (*scenario.Result, error) {
	run.Watch(func(p scenario.Progress) {
		// a run's last request is over only when the run is, and its
		// summary follows: no line for it
		if p.Finished < p.Requests {
			m.show(p.Finished, p.Requests, fmt.Sprintf("%.0f s simulated", p.Now.Seconds()))
		}
	})
	defer m.end()
	return run.Execute()
}
