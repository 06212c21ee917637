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

// NewVCD returns an empty dump.
func NewVCD() *VCD { return &VCD{index: map[string]int{}} }

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

// Write writes the dump: the declarations, every signal's value at time 0,
// then the changes in time order (one value per signal per time: the last).
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
	fmt.Fprintf(bw, "$upscope $end\n$enddefinitions $end\n#0\n$dumpvars\n")
	for i := range v.names {
		fmt.Fprint(bw, valueText(v.widths[i], i, 0))
	}
	fmt.Fprint(bw, "$end\n")
	slices.SortStableFunc(v.changes, func(a, b change) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq)) })
	state, shown := make([]int64, len(v.names)), make([]int64, len(v.names))
	for i := 0; i < len(v.changes); {
		at := v.changes[i].at
		for ; i < len(v.changes) && v.changes[i].at == at; i++ {
			c := v.changes[i]
			if c.level {
				state[c.signal] = c.value
			} else {
				state[c.signal] += c.delta
			}
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
