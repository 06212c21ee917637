package reports

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kvcosim/kvcosim/sim"
)

// ChromeTrace is a trace sink that writes spans in the Chrome trace event
// format as they come (complete events, "ph": "X"), which Perfetto
// (ui.perfetto.dev) and chrome://tracing open: one process per node
// ("node0", "node1", ...; components outside a node in "shared") and one
// thread per component. A component whose operations overlap (a link's
// pipelined transfers, a drive's queued commands) gets as many threads as
// it has operations under way at once, "name", "name [2]", ...: complete
// events on one thread must nest, and these do not. Each span carries a
// number of its own ("span"), since many share a request id. Close ends
// the file.
type ChromeTrace struct {
	w       *bufio.Writer
	first   bool
	threads map[string]*component
	procs   map[int]bool
	tids    int // threads named so far
	spans   int64
	err     error
}

// component is one component's threads: each lane's tid and the end of
// the latest span put on it.
type component struct {
	order int // the component's place in the trace, for sorting its lanes
	lanes []lane
}

type lane struct {
	tid int
	end sim.Time
}

// NewChromeTrace starts a trace on w.
func NewChromeTrace(w io.Writer) *ChromeTrace {
	t := &ChromeTrace{w: bufio.NewWriter(w), first: true, threads: map[string]*component{}, procs: map[int]bool{}}
	t.write(`{"displayTimeUnit":"ns","traceEvents":[`)
	return t
}

// event is one trace event.
type event struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   json.Number    `json:"ts"`
	Dur  json.Number    `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// Span writes one span as a complete event.
func (t *ChromeTrace) Span(s sim.Span) {
	pid := processOf(s.Component)
	if !t.procs[pid] {
		t.procs[pid] = true
		name := "shared"
		if pid > 0 {
			name = fmt.Sprintf("node%d", pid-1)
		}
		t.emit(event{Name: "process_name", Ph: "M", Ts: "0", Pid: pid, Args: map[string]any{"name": name}})
	}
	tid := t.lane(pid, s)
	t.spans++
	args := map[string]any{"id": strconv.FormatInt(s.ID, 10), "bytes": strconv.FormatInt(s.Bytes, 10),
		"span": strconv.FormatInt(t.spans, 10)}
	if s.Clocked {
		args["cycles"] = strconv.FormatInt(int64(s.Cycles), 10)
	}
	for _, a := range s.Attrs {
		args[a.Key] = a.Value
	}
	t.emit(event{Name: s.Operation, Cat: s.Component, Ph: "X", Ts: micros(s.Start), Dur: micros(s.End - s.Start), Pid: pid, Tid: tid, Args: args})
}

// lane returns the thread for s: its component's first lane whose spans
// have all ended by s's start, or a new lane. Every span already on a lane
// ends by the lane's end, so s overlaps none of them, in whatever order
// spans come.
func (t *ChromeTrace) lane(pid int, s sim.Span) int {
	c, ok := t.threads[s.Component]
	if !ok {
		c = &component{order: len(t.threads)}
		t.threads[s.Component] = c
	}
	for i := range c.lanes {
		if c.lanes[i].end <= s.Start {
			c.lanes[i].end = s.End
			return c.lanes[i].tid
		}
	}
	t.tids++
	name := s.Component
	if n := len(c.lanes); n > 0 {
		name = fmt.Sprintf("%s [%d]", s.Component, n+1)
	}
	c.lanes = append(c.lanes, lane{tid: t.tids, end: s.End})
	t.emit(event{Name: "thread_name", Ph: "M", Ts: "0", Pid: pid, Tid: t.tids, Args: map[string]any{"name": name}})
	sort := c.order*laneSortStride + len(c.lanes)
	t.emit(event{Name: "thread_sort_index", Ph: "M", Ts: "0", Pid: pid, Tid: t.tids, Args: map[string]any{"sort_index": sort}})
	return t.tids
}

// laneSortStride spaces components' sort indices so that a component's
// lanes sit together under it.
const laneSortStride = 1 << 16

// processOf is a component's process: node N's is N+1, the rest 0.
func processOf(component string) int {
	rest, ok := strings.CutPrefix(component, "node")
	if !ok {
		return 0
	}
	digits, _, _ := strings.Cut(rest, ".")
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0
	}
	return n + 1
}

// micros writes picoseconds as microseconds, exactly.
func micros(t sim.Time) json.Number {
	return json.Number(strconv.FormatFloat(float64(t)/1e6, 'f', -1, 64))
}

func (t *ChromeTrace) emit(e event) {
	b, err := json.Marshal(e)
	if err != nil {
		t.err = err
		return
	}
	if !t.first {
		t.write(",\n")
	}
	t.first = false
	t.write(string(b))
}

func (t *ChromeTrace) write(s string) {
	if t.err == nil {
		_, t.err = t.w.WriteString(s)
	}
}

// Close ends the event list and flushes; it returns the first error.
func (t *ChromeTrace) Close() error {
	t.write("]}\n")
	if t.err == nil {
		t.err = t.w.Flush()
	}
	return t.err
}
