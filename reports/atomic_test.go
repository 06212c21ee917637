package reports

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteFileIsWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.csv")
	require.NoError(t, WriteBytes(path, []byte("old\n")))
	cases := []struct {
		name  string
		write func(io.Writer) error
		want  string
		fails bool
	}{
		{"a failing writer keeps the old file", func(w io.Writer) error {
			_, _ = w.Write([]byte("half"))
			return errors.New("disk full")
		}, "old\n", true},
		{"a complete write replaces it", func(w io.Writer) error { _, err := w.Write([]byte("new\n")); return err }, "new\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := WriteFile(path, c.write)
			if c.fails {
				require.ErrorContains(t, err, "cannot write "+path+": disk full")
			} else {
				require.NoError(t, err)
			}
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, c.want, string(got))
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Len(t, entries, 1, "no temporary file left")
		})
	}
}

// TestAtomicFileMakesNoFolderUntilCommitted: a file streamed towards a
// folder that does not exist yet makes no folder while it is written;
// aborted, it leaves nothing; committed, the folder and the file are there.
func TestAtomicFileMakesNoFolderUntilCommitted(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "out", "run", "trace.json")
	for _, commit := range []bool{false, true} {
		a, err := CreateAtomic(path)
		require.NoError(t, err)
		_, err = a.Write([]byte("[]"))
		require.NoError(t, err)
		assert.NoDirExists(t, filepath.Join(root, "out"), "no folder while the file is written")
		if !commit {
			a.Abort()
			entries, err := os.ReadDir(root)
			require.NoError(t, err)
			assert.Empty(t, entries, "an aborted file leaves nothing")
			continue
		}
		require.NoError(t, a.Commit())
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, "[]", string(got))
	}
}
