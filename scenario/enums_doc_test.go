package scenario

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/memory"
)

// TestDocsListEveryEnumFromItsTable holds docs/scenario.md to the names
// the code accepts: every key the resolver reads by name (pick, through an
// enum's table, or oneOf) is found in the source, its names are read from
// the error a name of none of them draws, and the key's row lists exactly
// those, in their order. A new enum key, or a new name in a table, fails
// here until the page says so too.
func TestDocsListEveryEnumFromItsTable(t *testing.T) {
	page, err := os.ReadFile("../docs/scenario.md")
	require.NoError(t, err)
	keys := enumKeys(t)
	assert.GreaterOrEqual(t, len(keys), 27, "the enum keys found (27 when this test was written)")
	for _, key := range keys {
		names := acceptedNames(t, key)
		row := docRow(string(page), key)
		require.NotEmpty(t, row, "docs/scenario.md has no row for %s", key)
		want := "`" + strings.Join(names, "`, `") + "`"
		assert.Equal(t, want, strings.TrimSpace(strings.Split(row, "|")[2]), key)
	}
}

// enumKeys are the keys of every pick and oneOf call in the package's
// source.
func enumKeys(t *testing.T) []string {
	sources, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var keys []string
	fset := token.NewFileSet()
	for _, path := range sources {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			if key, ok := enumKeyOf(n); ok && !slices.Contains(keys, key) {
				keys = append(keys, key)
			}
			return true
		})
	}
	return keys
}

// enumKeyOf is the key a call of pick(r, key, ...) or r.oneOf(key, ...)
// reads.
func enumKeyOf(n ast.Node) (string, bool) {
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return "", false
	}
	arg := -1
	switch fun := call.Fun.(type) {
	case *ast.Ident:
		if fun.Name == "pick" {
			arg = 1
		}
	case *ast.SelectorExpr:
		if fun.Sel.Name == "oneOf" {
			arg = 0
		}
	}
	if arg < 0 || len(call.Args) <= arg {
		return "", false
	}
	lit, ok := call.Args[arg].(*ast.BasicLit)
	if !ok {
		return "", false
	}
	key, err := strconv.Unquote(lit.Value)
	return key, err == nil
}

// acceptedNames are the names an enum key accepts, as the error for a
// name of none of them lists them (a functional key is read in functional
// mode only).
func acceptedNames(t *testing.T, key string) []string {
	sets := []string{key + "=not-a-name"}
	if strings.HasPrefix(key, "functional.") {
		sets = append(sets, "mode=functional")
	}
	_, err := Load("", sets)
	var se *Error
	require.True(t, errors.As(err, &se), "%s=not-a-name is refused: %v", key, err)
	require.Equal(t, key, se.Key, "%s=not-a-name is refused for that key: %v", key, err)
	_, list, ok := strings.Cut(se.Msg, "(allowed: ")
	require.True(t, ok, "the error lists the names %s accepts: %v", key, err)
	return strings.Split(strings.TrimSuffix(list, ")"), ", ")
}

// docRow is the table row of docs/scenario.md for key.
func docRow(page, key string) string {
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "| `"+key+"` |") {
			return line
		}
	}
	return ""
}

// TestDocsNameEveryTierDevice holds the storage.tiers row of
// docs/scenario.md to the devices a tier can be, and the storage.device row
// to the SSD presets among them: a new device fails here until the page
// names it.
func TestDocsNameEveryTierDevice(t *testing.T) {
	page, err := os.ReadFile("../docs/scenario.md")
	require.NoError(t, err)
	tiers, drive := docRow(string(page), "storage.tiers"), docRow(string(page), "storage.device")
	for _, name := range memory.TierDeviceNames() {
		assert.Contains(t, tiers, name, "storage.tiers")
		if _, err := memory.SSDPreset(name); err == nil {
			assert.Contains(t, drive, name, "storage.device")
		}
	}
}

// TestDocsListEveryKey holds docs/scenario.md's table of keys to the
// schema: every settable key has a row, and every key a row names is
// settable. A row's first cell names its keys in full, or after a full one
// by their last element (`functional.layers`, `hidden`), or a whole
// section (`custom_model.*`).
func TestDocsListEveryKey(t *testing.T) {
	page, err := os.ReadFile("../docs/scenario.md")
	require.NoError(t, err)
	documented := map[string]bool{}
	for _, line := range strings.Split(string(page), "\n") {
		if cells := strings.Split(line, "|"); len(cells) > 2 && strings.HasPrefix(line, "| `") {
			for _, key := range rowKeys(cells[1]) {
				documented[key] = true
			}
		}
	}
	for _, key := range Keys() {
		section, _, _ := strings.Cut(key, ".")
		assert.True(t, documented[key] || documented[section+".*"], "docs/scenario.md has no row for %s", key)
	}
	for key := range documented {
		if section, ok := strings.CutSuffix(key, ".*"); ok {
			assert.True(t, slices.ContainsFunc(Keys(), func(k string) bool { return strings.HasPrefix(k, section+".") }), "docs/scenario.md's %s is no section", key)
		} else {
			assert.Contains(t, Keys(), key, "docs/scenario.md has a row for %s, which is no key", key)
		}
	}
}

// rowKeys are the keys a row's first cell names, in full.
func rowKeys(cell string) []string {
	var keys []string
	parent := ""
	for _, name := range strings.Split(strings.TrimSpace(cell), ", ") {
		name = strings.Trim(name, "`")
		if i := strings.LastIndex(name, "."); i >= 0 {
			parent = name[:i+1]
		} else {
			name = parent + name
		}
		keys = append(keys, name)
	}
	return keys
}
