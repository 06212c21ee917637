package kvstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckFindsTheIndexWrong breaks each invariant of the index the check
// holds (docs/invariants.md, INV-12 to INV-15) and checks that it says
// which: a live link's LRU entry filed wrongly in each way (gone, under
// another link, under another access number, or a stray entry besides:
// until 2026-11-26 the check looked entries up by access number alone, and
// took one filed under another link), a region marked free while an object
// holds it, a region nowhere, a segment's reference count, a chain's back
// pointer, and the count of live links.
func TestCheckFindsTheIndexWrong(t *testing.T) {
	cases := []struct {
		name    string
		corrupt func(d *Directory, a, b int32)
		want    string
	}{
		{"entry gone", func(d *Directory, a, _ int32) { d.lru.Delete(lruItem{d.links.at(a).lruKey, a}) },
			"missing from the LRU order"},
		{"filed under the other link", func(d *Directory, a, b int32) {
			d.lru.ReplaceOrInsert(lruItem{d.links.at(a).lruKey, b})
		}, "missing from the LRU order"},
		{"filed under another access number", func(d *Directory, a, _ int32) {
			d.lru.Delete(lruItem{d.links.at(a).lruKey, a})
			d.lru.ReplaceOrInsert(lruItem{d.links.at(a).lruKey + 1000, a})
		}, "missing from the LRU order"},
		{"a stray entry besides", func(d *Directory, a, _ int32) { d.lru.ReplaceOrInsert(lruItem{999_999, a}) },
			"the LRU order"},
		{"a held region marked free", func(d *Directory, a, _ int32) {
			d.InjectStateFault(d.region(d.segs.at(d.links.at(a).lastSeg), 0))
		}, "but marked state"},
		{"a region in neither FIFO nor segment", func(d *Directory, a, _ int32) { d.segs.at(d.links.at(a).lastSeg).nRegions-- },
			"(leaked)"},
		{"a segment's references", func(d *Directory, a, _ int32) { d.segs.at(d.links.at(a).lastSeg).refs++ },
			"references but 1 links use it"},
		{"a chain's back pointer", func(d *Directory, a, _ int32) { d.links.at(a).prev = 42 }, "has prev 42"},
		{"the live links", func(d *Directory, _, _ int32) { d.live++ }, "2 links reachable, 3 counted live"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := NewDirectory(propConfig(SchemePatent, 0))
			require.NoError(t, err)
			ka, kb := Key{Tokens: 4, Hash: 1}, Key{Tokens: 4, Hash: 2}
			_, err = d.Export(1, ka, nil)
			require.NoError(t, err)
			_, err = d.Export(2, kb, nil)
			require.NoError(t, err)
			require.NoError(t, d.Check(3, "two exports"))
			a, _ := d.find(ka)
			b, _ := d.find(kb)
			c.corrupt(d, a, b)
			assert.ErrorContains(t, d.Check(4, "corrupted"), c.want)
		})
	}
}

// TestExportOfNoTokensIsAnInvariantError: an export that would store none
// of the key's tokens is a bug in its caller (INV-16), not a store too
// small, and stops the run naming the time.
func TestExportOfNoTokensIsAnInvariantError(t *testing.T) {
	d, err := NewDirectory(propConfig(SchemePatent, 0))
	require.NoError(t, err)
	_, err = d.export(7, Key{Tokens: 4, Hash: 1}, nil, 4)
	require.ErrorAs(t, err, new(*InvariantError))
	assert.EqualError(t, err, "fpga invariant violated at 7ps: export of 4 tokens from token 4")
}
