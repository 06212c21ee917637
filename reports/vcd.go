package reports

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/kvcosim/kvcosim/sim"
)

// VCD collects signal changes and writes them as a Value Change Dump,
// which GTKWave opens: one-bit wires (busy) and 32-bit integers (queue
// depths, FIFO levels), timescale 1 ps.
type VCD struct {
	start   sim.Time // the dump's first time: changes up to it are the initial values
	names   []string
	widths  []int
	index   map[string]int
	changes []change
}

type change struct {
	at     sim.Time
	seq    int // order of recording, for changes at one time
	signal int
	delta  int64 // Count signals add up deltas
	value  int64 // Level signals take values
	level  bool
}

// NewVCD returns an empty dump that starts at start: every signal's
// changes up to then make its initial value.
func NewVCD(start sim.Time) *VCD { return &VCD{start: start, index: map[string]int{}} }

// signal returns a signal's index, declaring it (width bits) on first use.
func (v *VCD) signal(name string, width int) int {
	if i, ok := v.index[name]; ok {
		return i
	}
	v.index[name] = len(v.names)
	v.names, v.widths = append(v.names, name), append(v.widths, width)
	return len(v.names) - 1
}

// Busy counts an activity from start to end on a signal that is 1 while
// any is under way.
func (v *VCD) Busy(name string, start, end sim.Time) { v.count(name, 1, start, end) }

// Count adds an activity from start to end to a signal that counts those
// under way (a queue depth).
func (v *VCD) Count(name string, start, end sim.Time) { v.count(name, 32, start, end) }

func (v *VCD) count(name string, width int, start, end sim.Time) {
	s := v.signal(name, width)
	v.changes = append(v.changes, change{at: start, seq: len(v.changes), signal: s, delta: 1},
		change{at: end, seq: len(v.changes) + 1, signal: s, delta: -1})
}

// Level sets an integer signal to value from time at on.
func (v *VCD) Level(name string, at sim.Time, value int64) {
	v.changes = append(v.changes, change{at: at, seq: len(v.changes), signal: v.signal(name, 32), value: value, level: true})
}

// ident is signal i's short VCD identifier (printable, from '!').
func ident(i int) string {
	var b []byte
	for {
		b = append(b, byte('!'+i%94))
		if i /= 94; i == 0 {
			return string(b)
		}
	}
}

// Write writes the dump: the declarations, every signal's value at the
// start, then the later changes in time order (one value per signal per
// time: the last).
func (v *VCD) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "$version kvcosim $end\n$timescale 1ps $end\n$scope module kvcosim $end\n")
	for i, name := range v.names {
		kind := "integer"
		if v.widths[i] == 1 {
			kind = "wire"
		}
		fmt.Fprintf(bw, "$var %s %d %s %s $end\n", kind, v.widths[i], ident(i), name)
	}
	slices.SortStableFunc(v.changes, func(a, b change) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq)) })
	state, shown := make([]int64, len(v.names)), make([]int64, len(v.names))
	i := 0
	for ; i < len(v.changes) && v.changes[i].at <= v.start; i++ {
		state[v.changes[i].signal] = v.changes[i].apply(state[v.changes[i].signal])
	}
	fmt.Fprintf(bw, "$upscope $end\n$enddefinitions $end\n#%d\n$dumpvars\n", v.start)
	for s := range v.names {
		shown[s] = shownValue(v.widths[s], state[s])
		fmt.Fprint(bw, valueText(v.widths[s], s, shown[s]))
	}
	fmt.Fprint(bw, "$end\n")
	for i < len(v.changes) {
		at := v.changes[i].at
		for ; i < len(v.changes) && v.changes[i].at == at; i++ {
			state[v.changes[i].signal] = v.changes[i].apply(state[v.changes[i].signal])
		}
		var lines []string
		for s := range v.names {
			if val := shownValue(v.widths[s], state[s]); val != shown[s] {
				shown[s] = val
				lines = append(lines, valueText(v.widths[s], s, val))
			}
		}
		if len(lines) > 0 {
			fmt.Fprintf(bw, "#%d\n", at)
			for _, l := range lines {
				fmt.Fprint(bw, l)
			}
		}
	}
	return bw.Flush()
}

// apply returns a signal's state after the change.
func (c change) apply(state int64) int64 {
	if c.level {
		return c.value
	}
	return state + c.delta
}

// shownValue is what a signal shows: a wire is 1 while its count is above 0.
func shownValue(width int, v int64) int64 {
	if width == 1 {
		return min(v, 1)
	}
	return v
}

func valueText(width, signal int, v int64) string {
	if width == 1 {
		return fmt.Sprintf("%d%s\n", v, ident(signal))
	}
	return fmt.Sprintf("b%b %s\n", v, ident(signal))
}
