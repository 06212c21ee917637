// Package golden compares test output with files in testdata and rewrites
// them when tests run with -update. Every test package imports it (the
// ones without goldens with a blank import), so that `go test ./... -update`
// is accepted everywhere.
package golden

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Update is set by -update: rewrite goldens instead of comparing.
var Update = flag.Bool("update", false, "rewrite golden files in testdata")

// Check compares got with the golden file at path (relative to the test's
// package), or rewrites the file with -update. A mismatch fails the test
// with a line-by-line diff.
func Check(t testing.TB, path, got string) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run the tests with -update to create it)", path, err)
	}
	if d := Diff(string(want), got); d != "" {
		t.Errorf("golden %s differs (want -, got +; -update rewrites it):\n%s", path, d)
	}
}

// Diff lists the lines that differ between want and got, position by
// position; it returns "" when they are equal.
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, a, c)
		}
	}
	return b.String()
}
