package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDesign(t *testing.T) {
	assert.Equal(t, []string{"recompute", "cpu", "fpga", "lmcache", "cachedattention"}, DesignNames())
	for _, name := range DesignNames() {
		d, err := ParseDesign(name)
		require.NoError(t, err)
		assert.Equal(t, name, d.String())
		assert.NotNil(t, d.New, name)
	}
	_, err := ParseDesign("tpu")
	assert.EqualError(t, err, `"tpu" is not allowed (allowed: recompute, cpu, fpga, lmcache, cachedattention)`)
}
