package kvstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckFindsTheLRUOrderWrong files a live link's LRU entry wrongly in
// each way the check must catch: gone, under another link, under another
// access number, or a stray entry besides. (Until 2026-11-26 the check
// looked entries up by access number alone, and took one filed under
// another link.)
func TestCheckFindsTheLRUOrderWrong(t *testing.T) {
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
