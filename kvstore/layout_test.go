package kvstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLayoutExtentsCoverTheTokens(t *testing.T) {
	shape := KVShape{Layers: 3, KWidth: 4, VWidth: 5, ElemBytes: 2}
	const capTokens = 10
	for _, l := range []Layout{LayoutClaim9, LayoutTokenMajor, LayoutLayerMajor} {
		for _, r := range [][2]int64{{0, capTokens}, {0, 4}, {3, 7}, {6, capTokens}} {
			total := int64(0)
			for _, e := range l.extents(shape, capTokens, r[0], r[1]) {
				total += e.Bytes
				assert.True(t, e.Addr >= 0 && e.Addr+e.Bytes <= capTokens*shape.BytesPerToken(), "%v %v", l, r)
			}
			assert.Equal(t, (r[1]-r[0])*shape.BytesPerToken(), total, "layout %v tokens %v", l, r)
		}
		assert.Equal(t, []Extent{{Addr: 0, Bytes: capTokens * shape.BytesPerToken()}}, l.extents(shape, capTokens, 0, capTokens),
			"a whole segment is one run")
	}
	// claim 9 transposes V: a partial range is a run per layer of K and one
	// per V column, after the token ids
	assert.Len(t, LayoutClaim9.extents(shape, capTokens, 3, 7), 1+3+3*5)
}
