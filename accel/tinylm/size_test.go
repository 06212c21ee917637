package tinylm

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// floats counts the float32s in the []float32 fields of a struct.
func floats(v reflect.Value) int64 {
	var n int64
	for i := range v.NumField() {
		if f := v.Field(i); f.Type() == reflect.TypeOf([]float32(nil)) {
			n += int64(f.Len())
		}
	}
	return n
}

// TestWeightBytesAreWhatNewMakes counts every weight a model holds, by its
// fields, against the shape's WeightBytes, for shapes that stress each
// term; and a cache's bytes a token against CacheBytesPerToken.
func TestWeightBytesAreWhatNewMakes(t *testing.T) {
	for _, c := range []Config{DefaultConfig(), {Layers: 3, Hidden: 24, Heads: 6, KVHeads: 2, Vocab: 1000, FFN: 7, Seed: 2},
		{Layers: 1, Hidden: 2, Heads: 1, KVHeads: 1, Vocab: 2, FFN: 1000, Seed: 3}} {
		m, err := New(c)
		require.NoError(t, err)
		n := floats(reflect.ValueOf(*m))
		for _, l := range m.layers {
			n += floats(reflect.ValueOf(l))
		}
		assert.Equal(t, 4*n, c.WeightBytes(), "%+v", c)
		cache := m.NewCache()
		g := []uint32{1, 1, 1}
		_, err = m.Prefill(cache, g)
		require.NoError(t, err)
		var bytes int64
		for l := range cache.K {
			bytes += 4 * int64(len(cache.K[l])+len(cache.V[l]))
		}
		assert.Equal(t, bytes, int64(len(g))*c.CacheBytesPerToken(), "%+v", c)
	}
}
