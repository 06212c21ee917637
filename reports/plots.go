package reports

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// palette is 16 colours that stay apart (Tableau's 10 and 6 darker ones),
// so that a timeline's many stages keep distinct colours.
var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255},
	{0, 63, 92, 255}, {160, 82, 45, 255}, {0, 100, 0, 255}, {128, 0, 64, 255}, {72, 61, 139, 255}, {184, 134, 11, 255},
}

// Colour is palette colour i (modulo its length).
func Colour(i int) color.Color { return palette[i%len(palette)] }

// Series is a named line: its points, in order. Min and Max, when given
// (as many as Y), are each point's least and greatest over the seeds it
// is the mean of: LinePlot draws them as error bars.
type Series struct {
	Name     string
	X, Y     []float64
	Min, Max []float64
}

// Chart is a plot together with the values it draws, so that a figure's
// numbers travel with it: SavePlot and SavePanels write them as CSV beside
// the image. Its table is long: one row per drawn value, the series (or
// part, or lane) first, then the value's coordinates under the axes' own
// labels, units included.
type Chart struct {
	*plot.Plot
	data    [][]string // the header, then the rows
	columns []string   // the columns' roles: their names where panels label them apart
}

// Data returns the chart's table: its header, then one row per drawn value.
func (c *Chart) Data() [][]string { return c.data }

// row adds a row to the chart's data, padded with empty cells to the
// header's width (a ring or a rating has no spread).
func (c *Chart) row(cells ...string) {
	for len(cells) < len(c.data[0]) {
		cells = append(cells, "")
	}
	c.data = append(c.data, cells)
}

// NominalX makes the x axis categorical: positions 0, 1, ... carry the
// names, as ticks and in the chart's data.
func (c *Chart) NominalX(names ...string) {
	c.Plot.NominalX(names...)
	for _, r := range c.data[1:] {
		if i, err := strconv.Atoi(r[1]); err == nil && i >= 0 && i < len(names) {
			r[1] = names[i]
		}
	}
}

// num writes a value as CSV does: as many digits as it needs.
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// newPlot is a plot with a title and labelled axes, the legend top left.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xLabel, yLabel
	p.Legend.Top, p.Legend.Left = true, true
	p.X.Tick.Marker, p.Y.Tick.Marker = readableTicks{}, readableTicks{}
	p.Add(plotter.NewGrid())
	return p
}

// readableTicks label a linear axis at round values, 1, 2, 2.5 or 5 times
// a power of ten apart, four to ten of them, with a minor tick between
// two labels, each labelled with as many digits as it needs ("2500", not
// "2500.00"; "0.25").
type readableTicks struct{}

// Ticks returns the axis's ticks from lo to hi.
func (readableTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	step := roundStep((hi - lo) / 5)
	var ticks []plot.Tick
	for k := math.Ceil(lo / step * 2); k/2*step <= hi*(1+1e-12); k++ {
		v := k / 2 * step
		tick := plot.Tick{Value: v}
		if math.Mod(k, 2) == 0 {
			rounded, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 10, 64), 64) // no float noise
			tick.Label = strconv.FormatFloat(rounded, 'f', -1, 64)
		}
		ticks = append(ticks, tick)
	}
	return ticks
}

// roundStep is the smallest of 1, 2, 2.5 and 5 times a power of ten at
// or above span.
func roundStep(span float64) float64 {
	power := math.Pow(10, math.Floor(math.Log10(span)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*power >= span*(1-1e-12) {
			return m * power
		}
	}
	return 10 * power
}

// LogX puts the plot's x axis on a log scale.
func LogX(p *plot.Plot) {
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
}

// LogY puts the plot's y axis on a log scale when every value of the
// series, and every least of a spread, is positive (a log axis cannot
// show 0: a study without resumed turns has TTFT percentiles of 0), and
// reports whether it did.
func LogY(p *plot.Plot, series []Series) bool {
	for _, s := range series {
		if slices.ContainsFunc(slices.Concat(s.Y, s.Min), func(y float64) bool { return !(y > 0) }) {
			return false
		}
	}
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	return true
}

// maxMarkedPoints: a series with more points is drawn as a bare line.
const maxMarkedPoints = 30

// LinePlot draws each series as a line, with a marker on each point of a
// short series (a few measured points, as a sweep's), and error bars from
// each point's Min to its Max where the series has them; their data then
// has the columns "min: " and "max: " the y axis's label.
func LinePlot(title, xLabel, yLabel string, series []Series) (*Chart, error) {
	p := &Chart{Plot: newPlot(title, xLabel, yLabel), data: [][]string{{"series", xLabel, yLabel}}, columns: []string{"series", "x", "y"}}
	if slices.ContainsFunc(series, Series.spread) {
		p.data[0] = append(p.data[0], "min: "+yLabel, "max: "+yLabel)
		p.columns = append(p.columns, "min", "max")
	}
	for i, s := range series {
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("plot %q: series %q has %d x and %d y values", title, s.Name, len(s.X), len(s.Y))
		}
		if s.spread() && (len(s.Min) != len(s.Y) || len(s.Max) != len(s.Y)) {
			return nil, fmt.Errorf("plot %q: series %q has %d y, %d min and %d max values", title, s.Name, len(s.Y), len(s.Min), len(s.Max))
		}
		pts := make(plotter.XYs, len(s.X))
		for j := range pts {
			pts[j] = plotter.XY{X: s.X[j], Y: s.Y[j]}
			if s.spread() {
				p.row(s.Name, num(s.X[j]), num(s.Y[j]), num(s.Min[j]), num(s.Max[j]))
			} else {
				p.row(s.Name, num(s.X[j]), num(s.Y[j]))
			}
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, fmt.Errorf("plot %q: series %q: %w", title, s.Name, err)
		}
		if s.spread() {
			if err := errorBars(p, s, pts, Colour(i)); err != nil {
				return nil, fmt.Errorf("plot %q: series %q: %w", title, s.Name, err)
			}
		}
		line.Color, points.Color = Colour(i), Colour(i)
		line.Width, points.Shape = vg.Points(1.5), plotutil.Shape(i)
		line.Dashes = plotutil.Dashes(i) // lines that coincide stay apart
		if len(pts) > maxMarkedPoints {  // a curve, not measured points
			p.Add(line)
			p.Legend.Add(s.Name, line)
			continue
		}
		p.Add(line, points)
		p.Legend.Add(s.Name, line, points)
	}
	return p, nil
}

// spread reports whether the series gives each point's least and
// greatest.
func (s Series) spread() bool { return s.Min != nil || s.Max != nil }

// spreadPoints are a series' points with their distances down to its Min
// and up to its Max, as plotter.YErrorBars takes them.
type spreadPoints struct {
	plotter.XYs
	plotter.YErrors
}

// errorBars draws a vertical bar with caps from each point's Min to its
// Max, in the series' colour.
func errorBars(p *Chart, s Series, pts plotter.XYs, c color.Color) error {
	errs := make(plotter.YErrors, len(pts))
	for j := range errs {
		errs[j].Low, errs[j].High = s.Y[j]-s.Min[j], s.Max[j]-s.Y[j]
	}
	bars, err := plotter.NewYErrorBars(spreadPoints{pts, errs})
	if err != nil {
		return err
	}
	bars.Color, bars.Width, bars.CapWidth = c, vg.Points(1), vg.Points(6)
	p.Add(bars)
	return nil
}

// PointPlot draws each series as points alone, each series shifted a
// little sideways so that points of equal value stay apart: for a
// categorical x axis (NominalX), whose positions no line should join.
func PointPlot(title, xLabel, yLabel string, series []Series) (*Chart, error) {
	p := &Chart{Plot: newPlot(title, xLabel, yLabel), data: [][]string{{"series", xLabel, yLabel}}, columns: []string{"series", "x", "y"}}
	for i, s := range series {
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("plot %q: series %q has %d x and %d y values", title, s.Name, len(s.X), len(s.Y))
		}
		shift := 0.08 * (float64(i) - float64(len(series)-1)/2)
		pts := make(plotter.XYs, len(s.X))
		for j := range pts {
			pts[j] = plotter.XY{X: s.X[j] + shift, Y: s.Y[j]}
			p.row(s.Name, num(s.X[j]), num(s.Y[j]))
		}
		points, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, fmt.Errorf("plot %q: series %q: %w", title, s.Name, err)
		}
		points.Color, points.Shape, points.Radius = Colour(i), plotutil.Shape(i), vg.Points(4)
		p.Add(points)
		p.Legend.Add(s.Name, points)
	}
	return p, nil
}

// CDFSeries turns named samples into empirical CDFs (x sorted, y the share
// of samples at or below x), for LinePlot.
func CDFSeries(names []string, samples [][]float64) []Series {
	var out []Series
	for i, name := range names {
		xs := slices.Sorted(slices.Values(samples[i]))
		ys := make([]float64, len(xs))
		for j := range ys {
			ys[j] = float64(j+1) / float64(len(xs))
		}
		out = append(out, Series{Name: name, X: xs, Y: ys})
	}
	return out
}

// StackedBars draws one bar per category, stacked from parts: values[k][i]
// is part k of category i.
func StackedBars(title, yLabel string, categories, parts []string, values [][]float64) (*Chart, error) {
	p := &Chart{Plot: newPlot(title, "", yLabel), data: [][]string{{"part", "category", yLabel}}, columns: []string{"part", "category", "y"}}
	p.Legend.Left = false
	var below *plotter.BarChart
	for k, part := range parts {
		bars, err := plotter.NewBarChart(plotter.Values(values[k]), vg.Points(40))
		if err != nil {
			return nil, fmt.Errorf("plot %q: part %q: %w", title, part, err)
		}
		for i, c := range categories {
			p.row(part, strings.ReplaceAll(c, "\n", " "), num(values[k][i])) // a label broken over lines
		}
		bars.Color, bars.LineStyle.Width = Colour(k), 0
		if below != nil {
			bars.StackOn(below)
		}
		below = bars
		p.Add(bars)
		p.Legend.Add(part, bars)
	}
	p.NominalX(categories...)
	top := 0.0
	for i := range categories {
		sum := 0.0
		for k := range parts {
			sum += values[k][i]
		}
		top = max(top, sum)
	}
	p.Y.Min, p.Y.Max = 0, top*1.05
	return p, nil
}

// GroupedBars draws one group of bars per category, side by side, one
// colour per group member: values[g][i] is member g of category i (the
// same quantity measured two ways, which do not add up).
func GroupedBars(title, yLabel string, categories, members []string, values [][]float64) (*Chart, error) {
	p := &Chart{Plot: newPlot(title, "", yLabel), data: [][]string{{"member", "category", yLabel}}, columns: []string{"member", "category", "y"}}
	width := vg.Points(24)
	top := 0.0
	for g, member := range members {
		bars, err := plotter.NewBarChart(plotter.Values(values[g]), width)
		if err != nil {
			return nil, fmt.Errorf("plot %q: %q: %w", title, member, err)
		}
		for i, c := range categories {
			p.row(member, c, num(values[g][i]))
			top = max(top, values[g][i])
		}
		bars.Color, bars.LineStyle.Width = Colour(g), 0
		bars.Offset = vg.Length(float64(g)-float64(len(members)-1)/2) * width
		p.Add(bars)
		p.Legend.Add(member, bars)
	}
	p.NominalX(categories...)
	p.Y.Min, p.Y.Max = 0, top*1.05
	return p, nil
}

// Interval is one bar of a timeline: a lane (a row), a span of x, its
// legend label and its colour (an index into the palette).
type Interval struct {
	Lane       int
	Start, End float64
	Label      string
	Colour     int
}

// Timeline draws intervals as thick bars on named lanes (rows, top to
// bottom) over x from 0 to xMax: a bar past xMax is cut there, and one
// shorter than 0.5 % of xMax is drawn that wide so that it shows. The
// legend lists the labels.
func Timeline(title, xLabel string, lanes []string, intervals []Interval, xMax float64) (*Chart, error) {
	p := &Chart{Plot: newPlot(title, xLabel, ""), data: [][]string{{"lane", "label", "start: " + xLabel, "end: " + xLabel}},
		columns: []string{"lane", "label", "start", "end"}}
	p.Legend.Left = false
	var labels []string
	for _, iv := range intervals {
		p.row(lanes[iv.Lane], iv.Label, num(iv.Start), num(iv.End))
		if iv.Start >= xMax {
			continue // off the axis
		}
		if !slices.Contains(labels, iv.Label) {
			labels = append(labels, iv.Label)
			p.Legend.Add(iv.Label, swatch{Colour(iv.Colour)})
		}
		y := float64(len(lanes) - 1 - iv.Lane)
		start := min(iv.Start, xMax)
		end := min(max(iv.End, start+xMax/200), xMax)
		line, err := plotter.NewLine(plotter.XYs{{X: start, Y: y}, {X: end, Y: y}})
		if err != nil {
			return nil, fmt.Errorf("plot %q: %w", title, err)
		}
		line.Color, line.Width = Colour(iv.Colour), vg.Points(12)
		p.Add(line)
	}
	p.X.Min, p.X.Max = 0, xMax
	ticks := make([]plot.Tick, len(lanes))
	for i, name := range lanes {
		ticks[i] = plot.Tick{Value: float64(len(lanes) - 1 - i), Label: name}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min, p.Y.Max = -0.7, float64(len(lanes))-0.3
	return p, nil
}

// swatch is a legend entry's colour box.
type swatch struct{ c color.Color }

// Thumbnail fills the legend box with the colour.
func (s swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.c, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}

// SavePlot writes p as dir/name.png and dir/name.svg, and its values as
// dir/name.csv.
func SavePlot(p *Chart, dir, name string) error {
	if err := WriteCSV(filepath.Join(dir, name+".csv"), p.data); err != nil {
		return err
	}
	return saveImages([]*Chart{p}, dir, name, 4.5)
}

// SavePanels stacks plots top to bottom, each panelInches high, their
// axes aligned, as dir/name.png and dir/name.svg: one figure of quantities
// whose scales differ too much to share an axis. Their values go to
// dir/name.csv (panelData).
func SavePanels(plots []*Chart, dir, name string, panelInches float64) error {
	if err := WriteCSV(filepath.Join(dir, name+".csv"), panelData(plots)); err != nil {
		return err
	}
	return saveImages(plots, dir, name, panelInches)
}

// saveImages draws the panels as dir/name.png and dir/name.svg, 8 inches
// wide and panelInches high each.
func saveImages(plots []*Chart, dir, name string, panelInches float64) error {
	w, h := 8*vg.Inch, vg.Length(float64(len(plots))*panelInches)*vg.Inch
	for _, ext := range []string{".png", ".svg"} {
		var c vg.CanvasWriterTo
		if ext == ".png" {
			c = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
		} else {
			c = vgsvg.New(w, h)
		}
		drawPanels(draw.New(c), plots)
		if err := writeCanvas(c, filepath.Join(dir, name+ext)); err != nil {
			return err
		}
	}
	return nil
}

// drawPanels draws the plots top to bottom on c, their axes aligned, and
// each one's legend in a strip at the right beside its panel, under its
// title: a legend never covers the data.
func drawPanels(c draw.Canvas, plots []*Chart) {
	strip := vg.Length(0)
	for _, p := range plots {
		if w := p.Legend.Rectangle(c).Size().X; w > 0 {
			strip = max(strip, w+legendGap)
		}
	}
	grid := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		grid[i] = []*plot.Plot{p.Plot}
	}
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: vg.Millimeter * 2, PadTop: vg.Millimeter, PadBottom: vg.Millimeter,
		PadLeft: vg.Millimeter, PadRight: vg.Millimeter * 3}
	canvases := plot.Align(grid, tiles, draw.Crop(c, 0, -strip, 0, 0))
	for i, p := range plots {
		legend, title := p.Legend, p.Title.Text
		p.Legend = plot.NewLegend()
		if title != "" { // its room kept, its lines blank: the title is drawn below, where it fits
			p.Title.Text = strings.Repeat(" \n", strings.Count(title, "\n")) + " "
		}
		p.Draw(canvases[i][0])
		p.Legend, p.Title.Text = legend, title
		drawTitle(c, canvases[i][0], p)
		area := canvases[i][0]
		area.Min.X, area.Max.X = area.Max.X+legendGap, c.Max.X
		if p.Title.Text != "" {
			area.Max.Y -= p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
		}
		legend.Top, legend.Left = true, true
		legend.Draw(area)
	}
}

// drawTitle draws a panel's title at the top of its tile, centred on it
// as plot.Draw would, but moved sideways as far as it must to stay on
// the canvas: a title wider than its panel (the legend strip takes the
// right of the canvas) would be cut at the canvas's left edge.
func drawTitle(c draw.Canvas, tile draw.Canvas, p *Chart) {
	if p.Title.Text == "" {
		return
	}
	style := p.Title.TextStyle
	half := style.Rectangle(p.Title.Text).Size().X / 2
	x := tile.Center().X
	x = max(x, c.Min.X+half)
	x = min(x, c.Max.X-half)
	tile.FillText(style, vg.Point{X: x, Y: tile.Max.Y + style.FontExtents().Descent}, p.Title.Text)
}

// legendGap is the space between a panel and its legend.
const legendGap = 3 * vg.Millimeter

// panelData is the panels' values in one table: a first column naming the
// panel (its y axis's label, with its unit, or its title where it has
// none), then each panel's rows. A header cell the panels do not share
// (each panel's own quantity) is named by its role ("y", "start").
func panelData(plots []*Chart) [][]string {
	header := slices.Clone(plots[0].data[0])
	for _, p := range plots[1:] {
		for i, h := range p.data[0] {
			if header[i] != h {
				header[i] = plots[0].columns[i]
			}
		}
	}
	out := [][]string{append([]string{"panel"}, header...)}
	for _, p := range plots {
		name := p.Y.Label.Text
		if name == "" {
			name = strings.ReplaceAll(p.Title.Text, "\n", " ") // a title broken over lines
		}
		for _, r := range p.data[1:] {
			out = append(out, append([]string{name}, r...))
		}
	}
	return out
}

// writeCanvas writes a drawn figure to path, whole or not at all.
func writeCanvas(c io.WriterTo, path string) error {
	return WriteFile(path, func(w io.Writer) error {
		_, err := c.WriteTo(w)
		return err
	})
}

// Mark adds named points to a plot as large open rings over its lines
// (a crossover, a saturation point), with one legend entry.
func Mark(p *Chart, name string, xs, ys []float64) error {
	pts := make(plotter.XYs, len(xs))
	for i := range pts {
		pts[i] = plotter.XY{X: xs[i], Y: ys[i]}
		p.row(name, num(xs[i]), num(ys[i]))
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return fmt.Errorf("marks %q: %w", name, err)
	}
	s.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(6), Shape: draw.RingGlyph{}}
	p.Add(s)
	p.Legend.Add(name, s)
	return nil
}

// HLine draws a dashed horizontal line at y from x0 to x1 (a rating, a
// limit), with a legend entry.
func HLine(p *Chart, name string, y, x0, x1 float64) error {
	p.row(name, "", num(y)) // the same y at every x
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
	if err != nil {
		return fmt.Errorf("line %q: %w", name, err)
	}
	l.Color, l.Width, l.Dashes = color.Black, vg.Points(1.5), []vg.Length{vg.Points(6), vg.Points(4)}
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}
