package bounded

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("12345"), 0o644))
	cases := []struct {
		limit    int64
		want     string
		tooLarge bool
	}{{5, "12345", false}, {6, "12345", false}, {4, "", true}, {0, "", true}}
	for _, c := range cases {
		data, tooLarge, err := ReadFile(path, c.limit)
		require.NoError(t, err)
		assert.Equal(t, c.tooLarge, tooLarge, "limit %d", c.limit)
		assert.Equal(t, c.want, string(data), "limit %d", c.limit)
	}
	_, _, err := ReadFile(filepath.Join(t.TempDir(), "none"), 10)
	assert.ErrorIs(t, err, os.ErrNotExist)
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, tooLarge, err := ReadFile("/dev/zero", 1<<20)
		require.NoError(t, err)
		assert.True(t, tooLarge, "an endless file is cut at the limit")
	}
}
