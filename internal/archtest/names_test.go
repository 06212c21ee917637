package archtest

import (
	"go/ast"
	"go/token"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryEnumConstantHasOneName holds every names table to its enum: a
// call of names.New takes a map literal keyed by the type's constants, and
// names each constant of the type declared in its package exactly once
// (names.New itself refuses gaps, repeats and empty names when the package
// initialises). A constant added without a name fails here.
func TestEveryEnumConstantHasOneName(t *testing.T) {
	tables := 0
	for _, p := range packages(t, 0) {
		for _, call := range namesNewCalls(p) {
			tables++
			require.Len(t, call.Args, 2, "%s: names.New(what, map[E]string{...})", p.path)
			lit, ok := call.Args[1].(*ast.CompositeLit)
			require.True(t, ok, "%s: names.New's table is a map literal keyed by the constants", p.path)
			typ, ok := lit.Type.(*ast.MapType)
			require.True(t, ok, "%s: names.New's table is a map literal keyed by the constants", p.path)
			enum, ok := typ.Key.(*ast.Ident)
			require.True(t, ok, "%s: the table's key is an enum type of the package", p.path)
			var keys []string
			for _, el := range lit.Elts {
				key, ok := el.(*ast.KeyValueExpr).Key.(*ast.Ident)
				require.True(t, ok, "%s: %s's table keys a name by a constant, not a number", p.path, enum.Name)
				keys = append(keys, key.Name)
			}
			slices.Sort(keys)
			assert.Equal(t, constantsOf(p, enum.Name), keys, "%s: %s's table names each of its constants once", p.path, enum.Name)
		}
	}
	assert.GreaterOrEqual(t, tables, 18, "the tables found (18 when this test was written)")
}

// namesNewCalls are the package's calls of names.New.
func namesNewCalls(p pkg) []*ast.CallExpr {
	var calls []*ast.CallExpr
	for _, f := range p.files {
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok && isSelector(call.Fun, "names", "New") {
				calls = append(calls, call)
			}
			return true
		})
	}
	return calls
}

func isSelector(e ast.Expr, pkg, name string) bool {
	if ix, ok := e.(*ast.IndexExpr); ok { // names.New[E]
		e = ix.X
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == pkg && sel.Sel.Name == name
}

// constantsOf are the names of the package's constants of type enum, in
// order: a const block's spec without a type or values repeats the one
// before it (iota), so it has that one's type.
func constantsOf(p pkg, enum string) []string {
	var consts []string
	for _, f := range p.files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			typ := ""
			for _, s := range g.Specs {
				v := s.(*ast.ValueSpec)
				if v.Type != nil || len(v.Values) > 0 {
					typ = ""
					if id, ok := v.Type.(*ast.Ident); ok {
						typ = id.Name
					}
				}
				if typ == enum {
					for _, n := range v.Names {
						consts = append(consts, n.Name)
					}
				}
			}
		}
	}
	slices.Sort(consts)
	return consts
}
