package reports

import (
	"fmt"
	"html/template"
	"io"
)

// Figure is a plot on the report page: its file (an SVG next to the page)
// and what it shows.
type Figure struct {
	File, Caption string
	// Data, when given, is the CSV file of the values the plot draws,
	// beside it; the caption links to it.
	Data string
	// Table, when given, is drawn in place of the image: its header row,
	// then its rows (a figure's printed values, as the crossovers).
	Table [][]string
}

// Page is the study's static report: no script, nothing from the network.
type Page struct {
	Title, Subtitle, Version string
	// Warnings are shown as a banner above everything: a saturated run,
	// whose latencies measure a queue that grows with the run's length.
	Warnings []string
	// Lead is the headline's finding in words, above its table.
	Lead string
	// Headline is a table: its header row, then one row per design.
	Headline [][]string
	Figures  []Figure
	// Scenario is the resolved scenario, as YAML.
	Scenario string
	// Files are the outputs next to the page, linked from it.
	Files []string
}

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; color: #222; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
.sub { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.92rem; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.45rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f2f2f2; }
figure { margin: 1.5rem 0; }
figure img { width: 100%; border: 1px solid #ddd; }
figcaption { color: #444; font-size: 0.92rem; margin-top: 0.3rem; }
.warning { background: #fff3cd; border: 1px solid #e0b000; padding: 0.6rem 0.9rem; margin: 1rem 0; }
.warning ul { margin: 0.3rem 0 0 0; }
.lead { font-size: 1.05rem; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: 0.8rem; overflow-x: auto; font-size: 0.8rem; }
.scroll { overflow-x: auto; }
.scroll table { font-size: 0.8rem; }
footer { color: #666; font-size: 0.85rem; margin-top: 2rem; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="sub">{{.Subtitle}}</p>
{{if .Warnings}}<div class="warning" id="saturated"><strong>Saturated:</strong> these runs could not keep up with their offered load; their latencies grow with the run's length.
<ul>
{{range .Warnings}}<li>{{.}}</li>
{{end}}</ul></div>
{{end}}<h2 id="headline">Headline figures</h2>
{{if .Lead}}<p class="lead">{{.Lead}}</p>
{{end}}<div class="scroll"><table>
{{range $i, $row := .Headline}}<tr>{{range $row}}{{if eq $i 0}}<th>{{.}}</th>{{else}}<td>{{.}}</td>{{end}}{{end}}</tr>
{{end}}</table></div>
<h2 id="plots">Plots</h2>
{{range .Figures}}<figure id="{{.File}}">{{if .Table}}<table>
{{range $i, $row := .Table}}<tr>{{range $row}}{{if eq $i 0}}<th>{{.}}</th>{{else}}<td>{{.}}</td>{{end}}{{end}}</tr>
{{end}}</table>{{else}}<img src="{{.File}}" alt="{{.Caption}}">{{end}}<figcaption>{{.Caption}}{{if .Data}} <a class="data" href="{{.Data}}">Data: {{.Data}}</a>{{end}}</figcaption></figure>
{{end}}
<h2 id="outputs">Outputs</h2>
<ul>
{{range .Files}}<li><a href="{{.}}">{{.}}</a></li>
{{end}}</ul>
<h2 id="scenario">Resolved scenario</h2>
<pre>{{.Scenario}}</pre>
<footer>kvcosim {{.Version}}</footer>
</body>
</html>
`))

// WriteHTML writes the page.
func (p *Page) WriteHTML(w io.Writer) error {
	if err := pageTemplate.Execute(w, p); err != nil {
		return fmt.Errorf("report page: %w", err)
	}
	return nil
}
