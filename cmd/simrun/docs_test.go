package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// relativePath is a path that climbs out of its folder: ../x, ../../x.
var relativePath = regexp.MustCompile(`(?:\.\./)+[^\s` + "`" + `'"()<>\]]*`)

// TestDocsStayInsideTheRepository holds README.md and every page under
// docs/ to paths inside the repository: a clone has nothing beside it
// (no ../shared), so a path that climbs out of the repository, from the
// page's folder (or to nothing there) and from the root alike, is one the
// reader cannot open.
func TestDocsStayInsideTheRepository(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	for _, page := range docPages(t, root) {
		text, err := os.ReadFile(filepath.Join(root, page))
		require.NoError(t, err)
		for i, line := range strings.Split(string(text), "\n") {
			for _, p := range relativePath.FindAllString(line, -1) {
				fromPage, fromRoot := filepath.Join(root, filepath.Dir(page), p), filepath.Join(root, p)
				assert.True(t, inside(root, fromPage) && exists(fromPage) || inside(root, fromRoot),
					"%s:%d: %s is outside the repository", page, i+1, p)
			}
		}
	}
}

// docPages lists README.md and every page under docs/, relative to root.
func docPages(t *testing.T, root string) []string {
	pages := []string{"README.md"}
	require.NoError(t, filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, rel(root, path))
		}
		return err
	}))
	return pages
}

// inside reports whether path lies in the folder root.
func inside(root, path string) bool {
	r, err := filepath.Rel(root, path)
	return err == nil && r != ".." && !strings.HasPrefix(r, "../")
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func rel(root, path string) string {
	r, _ := filepath.Rel(root, path)
	return r
}
