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

func TestWriteFileRefusesAMissingFolder(t *testing.T) {
	err := WriteBytes(filepath.Join(t.TempDir(), "none", "x"), nil)
	require.ErrorContains(t, err, "cannot write ")
}
