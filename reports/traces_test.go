package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"

	"github.com/kvcosim/kvcosim/sim"
)

func TestVCDByHand(t *testing.T) {
	v := NewVCD()
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
	require.Len(t, ev, 6, "a process and a thread name, then the span, twice")
	assert.Equal(t, map[string]any{"name": "node1"}, ev[0]["args"])
	assert.Equal(t, float64(2), ev[0]["pid"], "node 1 is process 2")
	x := ev[2]
	assert.Equal(t, "X", x["ph"])
	assert.Equal(t, 1.5, x["ts"], "microseconds")
	assert.Equal(t, 0.500001, x["dur"], "to the picosecond")
	assert.Equal(t, map[string]any{"id": "7", "bytes": "64", "cycles": "150"}, x["args"])
	assert.Equal(t, float64(0), ev[3]["pid"], "outside a node: the shared process")
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
	require.NoError(t, SavePanels([]*plot.Plot{tl, tl}, dir, "panels", 2))
	for _, f := range []string{"bars.png", "bars.svg", "panels.png", "panels.svg"} {
		st, err := os.Stat(dir + "/" + f)
		require.NoError(t, err)
		assert.Positive(t, st.Size(), f)
	}
}

// A VCD of an FPGA engine busy for two overlapping tasks, and a FIFO level.
func ExampleVCD() {
	v := NewVCD()
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
