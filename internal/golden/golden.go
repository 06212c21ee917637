// Package golden compares test output with files in testdata and rewrites
// them when tests run with -update. Every test package imports it (the
// ones without goldens with a blank import), so that `go test ./... -update`
// is accepted everywhere.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/kvcosim/kvcosim/internal/textdiff"
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
	if d := textdiff.Diff(string(want), got); d != "" {
		t.Errorf("golden %s differs (want -, got +; -update rewrites it):\n%s", path, d)
	}
}
