package archtest

import (
	"fmt"
	"go/parser"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// floor is a package's place in docs/architecture.md's layer diagram.
type floor struct {
	layer  int
	arrows []string // the packages its arrow names: those of its own layer are the only ones there it may import
}

// TestImportsPointDownTheLayers holds every package's imports to the layer
// diagram of docs/architecture.md, read from the page itself: a package
// imports only packages of lower layers, and of its own layer only those
// its arrow names, and an arrow names only packages imported. Every package of the module has its place in the
// diagram, and every package the diagram names exists.
func TestImportsPointDownTheLayers(t *testing.T) {
	layers := layerDiagram(t)
	mod := modulePath(t) + "/"
	var problems []string
	for _, p := range packages(t, parser.ImportsOnly) {
		f, ok := layers[p.path]
		if !ok {
			problems = append(problems, fmt.Sprintf("package %s is not in the layer diagram", p.path))
			continue
		}
		imports := moduleImports(p, mod)
		for _, imp := range imports {
			problems = append(problems, importProblem(layers, p.path, imp, f)...)
		}
		for _, to := range f.arrows {
			if !slices.Contains(imports, to) {
				problems = append(problems, fmt.Sprintf("the diagram's arrow from %s names %s, which it does not import", p.path, to))
			}
		}
	}
	for path := range layers {
		if _, err := os.Stat(root + "/" + path); err != nil {
			problems = append(problems, fmt.Sprintf("the layer diagram names %s, which is no package", path))
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		t.Errorf("docs/architecture.md's layers, against the imports:\n%s", strings.Join(problems, "\n"))
	}
}

// importProblem says what is wrong with from (on floor f) importing to.
func importProblem(layers map[string]floor, from, to string, f floor) []string {
	g, ok := layers[to]
	switch {
	case !ok:
		return nil // reported as a package missing from the diagram
	case g.layer > f.layer:
		return []string{fmt.Sprintf("%s (layer %d) imports %s, a higher layer (%d)", from, f.layer, to, g.layer)}
	case g.layer == f.layer && !slices.Contains(f.arrows, to):
		return []string{fmt.Sprintf("%s imports %s on its own layer (%d), which its arrow does not name", from, to, f.layer)}
	}
	return nil
}

// moduleImports are the module's packages p imports, as paths from the
// module's root.
func moduleImports(p pkg, mod string) []string {
	var out []string
	for _, f := range p.files {
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if rel, ok := strings.CutPrefix(path, mod); ok && !slices.Contains(out, rel) {
				out = append(out, rel)
			}
		}
	}
	return out
}

var (
	// diagramEntry is a package's first line: its layer (or blank, the
	// layer above's) in the first column, its path from the fourth.
	diagramEntry = regexp.MustCompile(`^([0-9]| )  ([a-z][a-z0-9/]*)(\s|$)`)
	// diagramArrow names the packages the entry above it imports.
	diagramArrow = regexp.MustCompile(`->\s*(.+)$`)
)

// layerDiagram reads the layers and arrows of the first code block under
// "## Packages and layers" in docs/architecture.md. An arrow's name is a
// package's path or its last element ("kernels": accel/kernels).
func layerDiagram(t *testing.T) map[string]floor {
	page, err := os.ReadFile(root + "/docs/architecture.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(page), "## Packages and layers\n")
	require.True(t, ok, "docs/architecture.md has a section \"Packages and layers\"")
	_, block, ok := strings.Cut(section, "```\n")
	require.True(t, ok, "the section has a code block")
	block, _, _ = strings.Cut(block, "```")
	layers := map[string]floor{}
	arrows := map[string][]string{}
	layer, last := -1, ""
	for _, line := range strings.Split(block, "\n") {
		if m := diagramEntry.FindStringSubmatch(line); m != nil {
			if m[1] != " " {
				layer, _ = strconv.Atoi(m[1])
			}
			require.GreaterOrEqual(t, layer, 0, "the diagram's first package has its layer: %q", line)
			last = m[2]
			layers[last] = floor{layer: layer}
		}
		if m := diagramArrow.FindStringSubmatch(line); m != nil {
			require.NotEmpty(t, last, "an arrow before any package: %q", line)
			arrows[last] = append(arrows[last], strings.Split(m[1], ", ")...)
		}
	}
	require.NotEmpty(t, layers, "the diagram names packages")
	for from, names := range arrows {
		f := layers[from]
		for _, name := range names {
			f.arrows = append(f.arrows, arrowTarget(t, layers, strings.TrimSpace(name)))
		}
		layers[from] = f
	}
	return layers
}

// arrowTarget is the one package of the diagram an arrow's name means.
func arrowTarget(t *testing.T, layers map[string]floor, name string) string {
	var found []string
	for path := range layers {
		if path == name || strings.HasSuffix(path, "/"+name) {
			found = append(found, path)
		}
	}
	require.Len(t, found, 1, "the diagram's arrow name %q is one package", name)
	return found[0]
}
