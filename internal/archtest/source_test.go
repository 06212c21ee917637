// Package archtest holds the module's source to the rules of
// docs/architecture.md that no compiler checks: the layers packages import
// along, and enum names tables keyed by their constants. It reads the
// source with go/parser and has no code of its own.
package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	_ "github.com/kvcosim/kvcosim/internal/golden" // accepts -update, as every test package does
)

// root is the module's root, from this package's directory.
const root = "../.."

// pkg is one of the module's packages as its non-test files declare it.
type pkg struct {
	path  string // from the module's root: "hostcpu", "accel/kernels"
	files []*ast.File
}

// modulePath is the module's path, from go.mod.
func modulePath(t *testing.T) string {
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	line, _, _ := strings.Cut(string(mod), "\n")
	path, ok := strings.CutPrefix(line, "module ")
	require.True(t, ok, "go.mod starts with its module line")
	return strings.TrimSpace(path)
}

// packages parses the non-test Go files of every package of the module
// (testdata and hidden directories aside), with mode's detail.
func packages(t *testing.T, mode parser.Mode) []pkg {
	var out []pkg
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if dir != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return err
		}
		p := pkg{path: filepath.ToSlash(rel)}
		sources, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			return err
		}
		for _, f := range sources {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(fset, f, nil, mode)
			if err != nil {
				return err
			}
			p.files = append(p.files, file)
		}
		if len(p.files) > 0 {
			out = append(out, p)
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, out)
	return out
}
