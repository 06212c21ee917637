package kvstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
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
		{"the live links", func(d *Directory, _, _ int32) { d.live++; d.stats.Inserts++ }, "2 links reachable, 3 counted live"}, // the ledger kept whole
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

// TestCheckHoldsTheLedger miscounts one of a store's counts in each way the
// checks must catch: a deletion under no cause or two, a link inserted
// uncounted, a tier's eviction neither demoted nor dropped, a demotion
// that lands nowhere. First a pool of two tiers, the top holding two
// objects, stores five (four demoted, one superseding another) and
// expires the rest in both tiers, every check passing.
func TestCheckHoldsTheLedger(t *testing.T) {
	cases := []struct {
		name    string
		corrupt func(p *Pool)
		want    string
	}{
		{"an expiration counted twice", func(p *Pool) { p.tiers[1].stats.Expirations++ }, "deletions are"},
		{"a removal uncounted", func(p *Pool) { p.tiers[0].stats.Removals-- }, "deletions are"},
		{"an insertion uncounted", func(p *Pool) { p.tiers[0].stats.Inserts-- }, "but 0 live"},
		{"an eviction neither demoted nor dropped", func(p *Pool) { p.stats[0].DemotedOut-- }, "tier t0 evicted 4 objects but demoted 3 and dropped 0"},
		{"a demotion that lands nowhere", func(p *Pool) { p.stats[1].DemotedIn-- }, "4 objects demoted out of tiers but 3 into them"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := propConfig(SchemePatent, 2) // superseded versions deleted, a TTL of 3000
			cfg.FreeDelay = 0
			p := regionPool(t, cfg, []int64{2, 64}) // 8 tokens a region
			a := Key{Tokens: 8, Hash: 1}
			for i, k := range []Key{a, {Tokens: 8, Hash: 2}, {Tokens: 8, Hash: 3}, {Tokens: 8, Hash: 4}} {
				_, _, err := p.Save(sim.Time(i), Object{Key: k})
				require.NoError(t, err)
			}
			_, _, err := p.Save(4, Object{Key: Key{Tokens: 9, Hash: 5}, Prev: &a}) // a's new version, superseding it
			require.NoError(t, err)
			_, _, err = p.Find(10_000, Object{Key: Key{Tokens: 1, Hash: 6}}) // a miss: every tier expires
			require.NoError(t, err)
			require.NoError(t, p.Check(10_000, "expiry"))
			for i := range p.Tiers() {
				require.Positive(t, p.Stats(i).Expirations, "tier %d expires objects", i)
				require.Zero(t, p.Tier(i).Links(), "tier %d holds nothing", i)
			}
			require.Equal(t, int64(1), p.tiers[1].Stats().Removals, "the superseded version")
			c.corrupt(p)
			err = p.Check(10_001, "corrupted")
			var inv *InvariantError
			require.ErrorAs(t, err, &inv)
			assert.ErrorContains(t, err, c.want)
			assert.ErrorContains(t, err, "at 10.001ns after corrupted")
		})
	}
}
