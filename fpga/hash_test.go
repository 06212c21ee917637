package fpga

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHashEngineCycles(t *testing.T) {
	c := HashEngineConfig{Lanes: 1, SetupCycles: 4, FinalizeCycles: 20}
	assert.Equal(t, int64(4+512+20), int64(c.Cycles(4096*4)), "4,096 tokens = 16 KiB = 512 stripes")
	c.Lanes = 4
	assert.Equal(t, int64(4+128+20), int64(c.Cycles(4096*4)))
	assert.Equal(t, int64(4+1+20), int64(c.Cycles(1)))
	assert.ErrorContains(t, HashEngineConfig{Lanes: 0}.Validate(), "lanes = 0")
}
