package archtest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	invariantRow = regexp.MustCompile("(?m)^\\| INV-(\\d+) \\|")
	testName     = regexp.MustCompile("`(Test\\w+)`")
)

// TestInvariantsPageNamesTestsThatExist holds docs/invariants.md to the
// code: its invariants are numbered INV-1, INV-2, ... in order, each names
// at least one test that holds it, and every test it names exists.
func TestInvariantsPageNamesTestsThatExist(t *testing.T) {
	page, err := os.ReadFile(root + "/docs/invariants.md")
	require.NoError(t, err)
	tests := testFunctions(t)
	rows := invariantRow.FindAllStringSubmatchIndex(string(page), -1)
	require.NotEmpty(t, rows, "the page numbers its invariants")
	for i, at := range rows {
		number := string(page[at[2]:at[3]])
		require.Equal(t, fmt.Sprint(i+1), number, "INV-%d follows INV-%d", i+1, i)
		row, _, _ := strings.Cut(string(page[at[0]:]), "\n")
		named := testName.FindAllStringSubmatch(row, -1)
		assert.NotEmpty(t, named, "INV-%s names a test that holds it", number)
		for _, m := range named {
			assert.True(t, tests[m[1]], "INV-%s names %s, which is no test of the module", number, m[1])
		}
	}
}

// testFunctions are the names of the module's test functions.
func testFunctions(t *testing.T) map[string]bool {
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	tests := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			tests[m[1]] = true
		}
		return err
	})
	require.NoError(t, err)
	return tests
}
