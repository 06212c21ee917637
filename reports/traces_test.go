package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

func TestVCDByHand(t *testing.T) {
	v := NewVCD(0)
	v.Busy("fpga_busy", 10, 30)
	v.Busy("fpga_busy", 20, 40) // overlaps: busy from 10 to 40
	v.Count("queue", 20, 40)
	v.Count("queue", 25, 30)
	v.Level("fifo1", 5, 7)
	var b bytes.Buffer
	require.NoError(t, v.Write(&b))
	assert.Equal(t, `$version kvcosim $end
$timescale 1ps $end
$scope module kvcosim $end
$var wire 1 ! fpga_busy $end
$var integer 32 " queue $end
$var integer 32 # fifo1 $end
$upscope $end
$enddefinitions $end
#0
$dumpvars
0!
b0 "
b0 #
$end
#5
b111 #
#10
1!
#20
b1 "
#25
b10 "
#30
b1 "
#40
0!
b0 "
`, b.String())
}

func TestChromeTraceEvents(t *testing.T) {
	var b bytes.Buffer
	ct := NewChromeTrace(&b)
	ct.Span(sim.Span{Component: "node1.fpga", Operation: "query/hash", ID: 7, Start: 1_500_000, End: 2_000_001, Bytes: 64,
		Clocked: true, Cycles: 150})
	ct.Span(sim.Span{Component: "kioxia-cm6", Operation: "write", Start: 0, End: 1})
	require.NoError(t, ct.Close())
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc), b.String())
	ev := doc.TraceEvents
	require.Len(t, ev, 8, "a process name, a thread name and sort index, then the span, twice")
	assert.Equal(t, map[string]any{"name": "node1"}, ev[0]["args"])
	assert.Equal(t, float64(2), ev[0]["pid"], "node 1 is process 2")
	x := ev[3]
	assert.Equal(t, "X", x["ph"])
	assert.Equal(t, 1.5, x["ts"], "microseconds")
	assert.Equal(t, 0.500001, x["dur"], "to the picosecond")
	assert.Equal(t, map[string]any{"id": "7", "bytes": "64", "cycles": "150", "span": "1"}, x["args"])
	assert.Equal(t, float64(0), ev[4]["pid"], "outside a node: the shared process")
}

// Overlapping spans of one component go to lanes of their own, each lane
// a thread named after the component; spans that follow one another share
// a lane, in whatever order they come.
func TestChromeTraceLanesNeverOverlap(t *testing.T) {
	var b bytes.Buffer
	ct := NewChromeTrace(&b)
	for _, s := range [][2]sim.Time{{0, 10}, {5, 15}, {10, 20}, {2, 4}, {15, 30}, {0, 1}} {
		ct.Span(sim.Span{Component: "link", Operation: "transfer", Start: s[0] * sim.Microsecond, End: s[1] * sim.Microsecond})
	}
	require.NoError(t, ct.Close())
	var doc struct {
		TraceEvents []struct {
			Name, Ph string
			Ts, Dur  float64
			Tid      int
			Args     map[string]any
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	names, lanes, spans := map[int]string{}, map[int][][2]float64{}, map[any]bool{}
	for _, e := range doc.TraceEvents {
		switch {
		case e.Name == "thread_name":
			names[e.Tid] = e.Args["name"].(string)
		case e.Ph == "X":
			lanes[e.Tid] = append(lanes[e.Tid], [2]float64{e.Ts, e.Ts + e.Dur})
			spans[e.Args["span"]] = true
		}
	}
	assert.Equal(t, map[int]string{1: "link", 2: "link [2]", 3: "link [3]", 4: "link [4]"}, names,
		"(2,4) finds no lane free at 2; (15,30) follows (5,15); (0,1) comes after (2,4) took the third lane")
	assert.Len(t, spans, 6, "every span its own number")
	for tid, ss := range lanes {
		for i, a := range ss {
			for _, c := range ss[i+1:] {
				assert.False(t, a[0] < c[1] && c[0] < a[1], "lane %d: %v and %v overlap", tid, a, c)
			}
		}
	}
}

// A dump that starts late shows every signal's value at its start: levels
// set before it and activities under way then, not zeros.
func TestVCDStartsWithTrueValues(t *testing.T) {
	v := NewVCD(100)
	v.Level("fifo1", 0, 953090)
	v.Level("fifo1", 40, 953000)
	v.Count("queue", 50, 150)
	v.Busy("busy", 120, 130)
	var b bytes.Buffer
	require.NoError(t, v.Write(&b))
	_, dump, ok := strings.Cut(b.String(), "$enddefinitions $end\n")
	require.True(t, ok)
	assert.Equal(t, "#100\n$dumpvars\nb11101000101010101000 !\nb1 \"\n0#\n$end\n#120\n1#\n#130\n0#\n#150\nb0 \"\n", dump)
}

func TestReadableTicksAndCDF(t *testing.T) {
	for _, tk := range (readableTicks{}).Ticks(0, 1) {
		if tk.Label != "" {
			assert.NotContains(t, tk.Label, "0000000", "no float noise: %q", tk.Label)
		}
	}
	s := CDFSeries([]string{"a"}, [][]float64{{3, 1, 2, 2}})
	assert.Equal(t, []float64{1, 2, 2, 3}, s[0].X)
	assert.Equal(t, []float64{0.25, 0.5, 0.75, 1}, s[0].Y)
	_, err := LinePlot("t", "x", "y", []Series{{Name: "bad", X: []float64{1}, Y: nil}})
	assert.EqualError(t, err, `plot "t": series "bad" has 1 x and 0 y values`)
}

func TestPlotsWritePNGAndSVG(t *testing.T) {
	dir := t.TempDir()
	p, err := StackedBars("where it goes", "ms", []string{"a", "b"}, []string{"x", "y"}, [][]float64{{1, 2}, {3, 4}})
	require.NoError(t, err)
	require.NoError(t, SavePlot(p, dir, "bars"))
	tl, err := Timeline("turn", "ms", []string{"cpu", "fpga"}, []Interval{{Lane: 0, Start: 0, End: 1, Label: "decide"}, {Lane: 1, Start: 1, End: 9, Label: "query"}}, 5)
	require.NoError(t, err)
	line, err := LinePlot("load", "offered load (x)", "TTFT p50 (ms)", []Series{{Name: "cpu", X: []float64{1, 2}, Y: []float64{0.5, 7}}})
	require.NoError(t, err)
	require.NoError(t, Mark(line, "saturated", []float64{2}, []float64{7}))
	require.NoError(t, HLine(line, "limit", 10, 0, 2))
	require.NoError(t, SavePanels([]*Chart{tl, tl}, dir, "panels", 2))
	require.NoError(t, SavePlot(line, dir, "line"))
	for _, f := range []string{"bars.png", "bars.svg", "bars.csv", "panels.png", "panels.svg", "panels.csv", "line.csv"} {
		st, err := os.Stat(dir + "/" + f)
		require.NoError(t, err)
		assert.Positive(t, st.Size(), f)
	}
	// The values behind each figure, every drawn value a row.
	for file, want := range map[string]string{
		"bars.csv":   "part,category,ms\nx,a,1\nx,b,2\ny,a,3\ny,b,4\n",
		"panels.csv": "panel,lane,label,start: ms,end: ms\nturn,cpu,decide,0,1\nturn,fpga,query,1,9\nturn,cpu,decide,0,1\nturn,fpga,query,1,9\n",
		"line.csv":   "series,offered load (x),TTFT p50 (ms)\ncpu,1,0.5\ncpu,2,7\nsaturated,2,7\nlimit,,10\n",
	} {
		got, err := os.ReadFile(dir + "/" + file)
		require.NoError(t, err)
		assert.Equal(t, want, string(got), file)
	}
}

// A VCD of an FPGA engine busy for two overlapping tasks, and a FIFO level.
func ExampleVCD() {
	v := NewVCD(0)
	v.Busy("fpga_busy", 1000, 3000)
	v.Busy("fpga_busy", 2000, 4000)
	v.Level("fifo2_regions", 2500, 3)
	var b bytes.Buffer
	v.Write(&b)
	fmt.Print(b.String()[bytes.Index(b.Bytes(), []byte("$end\n#1000")):])
	// Output:
	// $end
	// #1000
	// 1!
	// #2500
	// b11 "
	// #4000
	// 0!
}
