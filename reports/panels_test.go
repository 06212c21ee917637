package reports

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// A title wider than its panel (a wide legend strip takes the right of
// the canvas) stays on the canvas: every line of it starts at or right of
// the left edge and ends at or left of the right edge.
func TestAWideTitleStaysOnTheCanvas(t *testing.T) {
	long := strings.Repeat("a title wider than the panel beside a wide legend ", 2)
	var ivs []Interval
	for i := range 6 {
		ivs = append(ivs, Interval{Lane: 0, Start: float64(i), End: float64(i) + 0.5, Label: strings.Repeat("a long legend entry ", 3), Colour: i})
	}
	p, err := Timeline(long+"\nsecond line", "time (ms)", []string{"lane"}, ivs, 10)
	require.NoError(t, err)
	const width = 8 * vg.Inch
	rec := &recorder.Canvas{}
	drawPanels(draw.NewCanvas(rec, width, 3*vg.Inch), []*Chart{p})
	style := p.Title.TextStyle
	var seen []string
	for _, a := range rec.Actions {
		s, ok := a.(*recorder.FillString)
		if !ok || !strings.HasPrefix(long, s.String) && s.String != "second line" {
			continue
		}
		seen = append(seen, s.String)
		w := style.Width(s.String)
		assert.GreaterOrEqual(t, float64(s.Point.X), 0.0, "line %q starts left of the canvas", s.String)
		assert.LessOrEqual(t, float64(s.Point.X+w), float64(width), "line %q ends right of the canvas", s.String)
	}
	assert.Equal(t, []string{long, "second line"}, seen)
}
