package kvstore

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

// poolOps drives random turns of a dozen sessions through a store: each
// turn looks up what the session stored (its last version, or its
// prompt's blocks), grows its history and saves the new version.
func poolOps(t *testing.T, scheme Scheme, ops int, seed uint64, step func(now sim.Time, find bool, o Object)) {
	r := sim.NewStreams(seed).Stream("pool")
	type sess struct {
		tokens []uint32
		prev   *Key
		held   int
	}
	sessions := make([]sess, 12)
	now := sim.Time(0)
	for range ops {
		now += sim.Time(1 + r.IntN(20))
		s := &sessions[r.IntN(len(sessions))]
		for range 1 + r.IntN(60) {
			s.tokens = append(s.tokens, uint32(r.IntN(4)))
		}
		if len(s.tokens) > 400 {
			*s = sess{}
			continue
		}
		o := Object{Key: PatentKey(1, s.tokens), Prev: s.prev, Held: s.held}
		if scheme == SchemeBlock {
			o = Object{Blocks: BlockKeys(1, s.tokens, 16), Held: s.held}
			step(now, true, o) // the prompt's stored prefix
		} else if s.prev != nil {
			step(now, true, Object{Key: *s.prev}) // the session's stored history
		}
		step(now, false, o)
		k := o.Key
		s.prev, s.held = &k, len(o.Blocks)
	}
}

// TestOneTierPoolIsItsDirectory: a pool of one tier answers every lookup
// and save exactly as a bare directory does.
func TestOneTierPoolIsItsDirectory(t *testing.T) {
	for _, scheme := range Schemes.Names() {
		sc, _ := Schemes.Parse(scheme)
		cfg := propConfig(sc, 0)
		d, err := NewDirectory(cfg)
		require.NoError(t, err)
		p, err := NewPool(cfg, []Tier{{Name: "ssd", Bytes: cfg.StorageBytes}})
		require.NoError(t, err)
		poolOps(t, sc, 2000, 3, func(now sim.Time, find bool, o Object) {
			if find {
				want, werr := d.Find(now, o)
				got, moves, gerr := p.Find(now, o)
				require.Equal(t, werr, gerr)
				require.Equal(t, want, got)
				require.Empty(t, moves)
				return
			}
			want, werr := d.Save(now, o)
			got, moves, gerr := p.Save(now, o)
			require.Equal(t, werr, gerr)
			require.Equal(t, want, got)
			require.Empty(t, moves)
		})
		assert.Equal(t, d.Stats(), p.Tier(0).Stats(), scheme)
	}
}

// TestPoolCheckFindsAKeyHeldTwice: a key linked twice, in two tiers or in
// one, fails the pool's check, naming the key and where it is.
func TestPoolCheckFindsAKeyHeldTwice(t *testing.T) {
	cfg := propConfig(SchemePatent, 1)
	k := PatentKey(1, []uint32{1, 2, 3})
	cases := []struct {
		name string
		tier int // the tier given the key a second time
		want string
	}{
		{"in two tiers", 1, "pool invariant violated at 20ps after dup: key " + fmt.Sprintf("%+v", k) + " is in tiers t0 and t1"},
		{"twice in one tier", 0, "tier t0: fpga invariant violated at 20ps after dup: link 0 holds key " + fmt.Sprintf("%+v", k) + ", which link 1 before it holds too"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPool(cfg, []Tier{{Name: "t0", Bytes: 8 * cfg.RegionBytes}, {Name: "t1", Bytes: 8 * cfg.RegionBytes}})
			require.NoError(t, err)
			_, _, err = p.Save(10, Object{Key: k})
			require.NoError(t, err)
			require.NoError(t, p.Check(10, "save"))
			p.tiers[c.tier].insertLink(20, k, none)
			err = p.Check(20, "dup")
			require.ErrorAs(t, err, new(*InvariantError))
			assert.EqualError(t, err, c.want)
		})
	}
}

// regionPool is a pool of tiers t0, t1, ... of the given sizes in regions.
func regionPool(t *testing.T, cfg DirectoryConfig, regions []int64) *Pool {
	var tiers []Tier
	for i, n := range regions {
		tiers = append(tiers, Tier{Name: fmt.Sprintf("t%d", i), Bytes: n * cfg.RegionBytes})
	}
	p, err := NewPool(cfg, tiers)
	require.NoError(t, err)
	return p
}

// TestPoolKeepsEveryObjectInOneTier runs random turns through pools of
// two and three tiers in both schemes and checks after every operation
// that no key is in two tiers (and every tier's invariants), that every
// save writes in, every demotion moves an object whole into, and every
// promotion moves it up to the first tier (from the top, or below the one
// it leaves) whose capacity holds it, and that each tier's counts of
// objects moved in and out are the moves'. The tiers' sizes (in regions)
// give a top tier too small for many objects ({2, 12, 64}: every block,
// most sessions' objects) and a middle tier smaller than the top ({12, 4,
// 64}: demotions pass it by), with full exports and with deltas. The last
// tier holds every object, so nothing fails.
func TestPoolKeepsEveryObjectInOneTier(t *testing.T) {
	for _, scheme := range Schemes.Names() {
		for _, c := range []struct {
			sizes   []int64
			variant int // of propConfig: 1 full exports, superseded versions kept; 2 delta, deleted, a TTL
		}{{[]int64{8, 64}, 1}, {[]int64{6, 12, 64}, 1}, {[]int64{2, 12, 64}, 1}, {[]int64{12, 4, 64}, 1}, {[]int64{2, 12, 64}, 2}} {
			sizes := c.sizes
			t.Run(fmt.Sprintf("%s/%v/variant%d", scheme, sizes, c.variant), func(t *testing.T) {
				sc, _ := Schemes.Parse(scheme)
				cfg := propConfig(sc, c.variant)
				bpt := cfg.Shape.BytesPerToken()
				// firstHolding is the first tier from first on that holds bytes.
				firstHolding := func(first int, bytes int64) int {
					for i := first; i < len(sizes); i++ {
						if (bytes+cfg.RegionBytes-1)/cfg.RegionBytes <= sizes[i] {
							return i
						}
					}
					return -1
				}
				p := regionPool(t, cfg, sizes)
				in, out, promoted := make([]int64, len(sizes)), make([]int64, len(sizes)), make([]int64, len(sizes))
				var demotions, promotions, skips, savedBelow int
				poolOps(t, sc, 3000, 5, func(now sim.Time, find bool, o Object) {
					var moves []Move
					var err error
					if find {
						var f Found
						f, moves, err = p.Find(now, o)
						for _, x := range f.Extents {
							require.True(t, x.Tier >= 0 && x.Tier < p.Tiers())
						}
					} else {
						var res ExportResult
						res, moves, err = p.Save(now, o)
						if sc == SchemePatent && len(res.Writes) > 0 {
							want := firstHolding(0, (o.Key.Tokens-o.From)*bpt)
							for _, x := range res.Writes {
								require.Equal(t, want, x.Tier, "a save writes in the first tier that holds the object")
							}
							if want > 0 {
								savedBelow++
							}
						}
					}
					require.NoError(t, err)
					require.NoError(t, p.Check(now, "pool test"))
					for _, m := range moves {
						bytes := extentBytes(m.Write)
						if m.To > m.From {
							demotions++
							out[m.From]++
							in[m.To]++
							require.Equal(t, extentBytes(m.Read), bytes, "a demotion moves an object whole")
							require.Equal(t, firstHolding(m.From+1, bytes), m.To, "a demotion goes to the first tier below that holds it")
							if m.To > m.From+1 {
								skips++
							}
						} else {
							promotions++
							promoted[m.From]++
							require.Equal(t, firstHolding(0, bytes), m.To, "a promotion goes to the first tier that holds it")
							require.Less(t, m.To, m.From)
						}
						for _, x := range m.Write {
							require.Equal(t, m.To, x.Tier)
						}
					}
				})
				assert.Positive(t, demotions, "the top tier overflowed")
				assert.Positive(t, promotions, "a lower tier answered")
				if sc == SchemePatent && sizes[1] < sizes[0] { // a block (3 regions) fits every tier
					assert.Positive(t, skips, "demotions passed the small middle tier by")
				}
				if sc == SchemePatent && sizes[0] == 2 {
					assert.Positive(t, savedBelow, "objects larger than the top were saved below it")
				}
				for i := range sizes {
					st := p.Stats(i)
					assert.Equal(t, []int64{in[i], out[i], promoted[i]}, []int64{st.DemotedIn, st.DemotedOut, st.Promoted}, "tier %d: in, out, promoted", i)
				}
			})
		}
	}
}

func TestPoolRejectsBadTiers(t *testing.T) {
	cfg := propConfig(SchemePatent, 0)
	cases := []struct {
		name  string
		tiers []Tier
		want  string
	}{
		{"empty", nil, "storage.tiers: at least one tier"},
		{"no name", []Tier{{Bytes: 4096}}, "storage.tiers[0]: name: empty"},
		{"repeated", []Tier{{Name: "dram", Bytes: 4096}, {Name: "dram", Bytes: 8192}}, `storage.tiers[1]: name "dram": already the name of tier 0`},
		{"below a region", []Tier{{Name: "dram", Bytes: 100}}, "storage.tiers[0] (dram): capacity 100 B: smaller than one 256 B region"},
	}
	for _, c := range cases {
		_, err := NewPool(cfg, c.tiers)
		assert.EqualError(t, err, c.want, c.name)
	}
}

// A two-tier pool: DRAM with room for two objects, then an SSD. A third
// session's save demotes the least recently used object to the SSD; a
// lookup of it there promotes it back, demoting the next one.
func ExamplePool() {
	cfg := DirectoryConfig{BucketsLog2: 4, RegionBytes: 4096, Shape: KVShape{Layers: 1, KWidth: 1020, VWidth: 1020, ElemBytes: 2}}
	pool, _ := NewPool(cfg, []Tier{{Name: "dram", Bytes: 2 * 4096}, {Name: "ssd", Bytes: 64 * 4096}})
	key := func(session uint64) Key { return Key{Tokens: 1, Hash: session} }
	for s := range uint64(3) {
		_, moves, _ := pool.Save(sim.Time(s), Object{Key: key(s)})
		for _, m := range moves {
			fmt.Printf("save %d: moved %s -> %s\n", s, pool.Name(m.From), pool.Name(m.To))
		}
	}
	f, moves, _ := pool.Find(10, Object{Key: key(0)})
	fmt.Printf("session 0 found in %s\n", pool.Name(f.Extents[0].Tier))
	for _, m := range moves {
		fmt.Printf("find 0: moved %s -> %s\n", pool.Name(m.From), pool.Name(m.To))
	}
	fmt.Println("objects:", pool.Tier(0).Links(), "in dram,", pool.Tier(1).Links(), "on the ssd")
	// Output:
	// save 2: moved dram -> ssd
	// session 0 found in ssd
	// find 0: moved dram -> ssd
	// find 0: moved ssd -> dram
	// objects: 2 in dram, 1 on the ssd
}

// TestPoolRaise: Raise moves an object from below the top into the top
// tier, returning the lower tier's extents to read, and is no lookup; an
// object on top, or stored nowhere, is left alone.
func TestPoolRaise(t *testing.T) {
	cfg := DirectoryConfig{BucketsLog2: 4, RegionBytes: 4096, Shape: KVShape{Layers: 1, KWidth: 1020, VWidth: 1020, ElemBytes: 2}}
	key := func(session uint64) Key { return Key{Tokens: 1, Hash: session} }
	cases := []struct {
		name       string
		raise      uint64
		wantRead   bool
		wantOnTop  []uint64 // after the raise
		wantMovesN int
	}{
		{"below the top", 0, true, []uint64{0, 2}, 2}, // the promotion, then the demotion of 1
		{"on top", 2, false, []uint64{1, 2}, 0},
		{"nowhere", 9, false, []uint64{1, 2}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pool, err := NewPool(cfg, []Tier{{Name: "dram", Bytes: 2 * 4096}, {Name: "ssd", Bytes: 64 * 4096}})
			require.NoError(t, err)
			for s := range uint64(3) {
				_, _, err := pool.Save(sim.Time(s), Object{Key: key(s)})
				require.NoError(t, err) // 0 is demoted to the ssd by 2
			}
			lookups := pool.Tier(0).Stats().Lookups + pool.Tier(1).Stats().Lookups
			read, moves, err := pool.Raise(10, key(c.raise))
			require.NoError(t, err)
			assert.Equal(t, c.wantRead, len(read) > 0)
			for _, x := range read {
				assert.Equal(t, 1, x.Tier)
			}
			assert.Len(t, moves, c.wantMovesN)
			for _, s := range c.wantOnTop {
				id, _ := pool.Tier(0).find(key(s))
				assert.NotEqual(t, none, id, "session %d on top", s)
			}
			assert.Equal(t, lookups, pool.Tier(0).Stats().Lookups+pool.Tier(1).Stats().Lookups)
			require.NoError(t, pool.Check(10, "raise"))
		})
	}
}

// TestPoolKeepsATruncatedObjectsWindow: an object that holds only its
// key's tokens from From on (a truncated session of a design that stores
// KV without positions) takes, reads and moves between tiers only those
// tokens' bytes, however many its key counts.
func TestPoolKeepsATruncatedObjectsWindow(t *testing.T) {
	cfg := DirectoryConfig{BucketsLog2: 4, RegionBytes: 4096, Layout: LayoutLayerMajor,
		Shape: KVShape{Layers: 2, KWidth: 4, VWidth: 4, ElemBytes: 2}}
	perToken := cfg.Shape.BytesPerToken()
	for _, c := range []struct {
		name         string
		tokens, from int64
	}{{"whole", 300, 0}, {"truncated", 300, 200}, {"one token left", 300, 299}} {
		t.Run(c.name, func(t *testing.T) {
			pool, err := NewPool(cfg, []Tier{{Name: "dram", Bytes: 4 * 4096}, {Name: "ssd", Bytes: 64 * 4096}})
			require.NoError(t, err)
			kept := (c.tokens - c.from) * perToken
			target := Key{Tokens: c.tokens, Hash: 1}
			res, _, err := pool.Save(0, Object{Key: target, From: c.from})
			require.NoError(t, err)
			assert.Equal(t, kept, extentBytes(res.Writes), "the save writes the kept tokens")
			var demoted int64
			for s := uint64(2); s < 8; s++ { // push it down to the ssd
				_, moves, err := pool.Save(sim.Time(s), Object{Key: Key{Tokens: 128, Hash: s}})
				require.NoError(t, err)
				for _, m := range moves {
					if m.From == 0 && extentBytes(m.Read) == kept && m.Write[0].Tier == 1 {
						demoted = extentBytes(m.Write)
					}
				}
			}
			assert.Equal(t, kept, demoted, "the demotion moves the kept tokens")
			f, moves, err := pool.Find(10, Object{Key: target})
			require.NoError(t, err)
			require.True(t, f.Hit)
			assert.Equal(t, kept, extentBytes(f.Extents), "the lookup reads the kept tokens")
			var promoted int64
			for _, m := range moves {
				if m.From == 1 && m.To == 0 {
					promoted = extentBytes(m.Write)
				}
			}
			assert.Equal(t, kept, promoted, "the promotion writes the kept tokens")
			require.NoError(t, pool.Check(10, "truncated object"))
		})
	}
}

// TestDeltaRestartsAfterATruncation: in delta mode a version appends its
// new tokens to the previous one's chain, unless that chain holds tokens
// truncated away since; then the kept tokens are written whole, and the
// next delta appends to them.
func TestDeltaRestartsAfterATruncation(t *testing.T) {
	cfg := DirectoryConfig{BucketsLog2: 4, RegionBytes: 4096, StorageBytes: 256 * 4096, Layout: LayoutLayerMajor, Mode: ExportDelta,
		DeleteSuperseded: true, Shape: KVShape{Layers: 2, KWidth: 4, VWidth: 4, ElemBytes: 2}}
	d, err := NewDirectory(cfg)
	require.NoError(t, err)
	perToken := cfg.Shape.BytesPerToken()
	var prev *Key
	for i, c := range []struct {
		tokens, from, wantWritten int64
	}{
		{100, 0, 100},  // the first version, whole
		{150, 0, 50},   // a delta
		{200, 120, 80}, // truncated: the kept tokens, whole
		{230, 120, 30}, // a delta again
	} {
		k := Key{Tokens: c.tokens, Hash: uint64(i + 1)}
		res, err := d.Save(sim.Time(i), Object{Key: k, Prev: prev, From: c.from})
		require.NoError(t, err)
		assert.Equal(t, c.wantWritten*perToken, extentBytes(res.Writes), "version %d", i)
		r, err := d.Lookup(sim.Time(i), k)
		require.NoError(t, err)
		assert.Equal(t, (c.tokens-c.from)*perToken, extentBytes(d.ReadExtents(r)), "version %d holds its window", i)
		prev = &k
	}
	require.NoError(t, d.Check(10, "delta after truncation"))
}

// TestPoolSavesAnObjectLargerThanATierBelowIt: an object larger than a
// tier's whole capacity passes that tier by: its save goes to the first
// tier that can hold it, a lookup finds it there and promotes it no
// higher, and Raise leaves it alone; a previous version elsewhere is
// superseded once the new one is saved. A save no tier can hold fails
// naming the object's size and the tiers' capacities, and leaves the
// previous version where it was. A token takes one 4 KiB region here.
func TestPoolSavesAnObjectLargerThanATierBelowIt(t *testing.T) {
	type save struct {
		tokens int64
		prev   int // the save whose key is the previous version; -1: none
		tier   int // the tier it is written in; -1: it fails
	}
	const tooLarge = "storage tiers: an object of 5 tokens (20420 B, 5 regions of 4096 B) is larger than every tier (t0 8192 B, t1 16384 B)"
	cases := []struct {
		name  string
		tiers []int64 // regions
		saves []save
		held  []int // the tier that holds each save's key at the end; -1: none
	}{
		{"fits the top", []int64{2, 64}, []save{{2, -1, 0}}, []int{0}},
		{"larger than the top", []int64{2, 64}, []save{{3, -1, 1}}, []int{1}},
		{"larger than two tiers", []int64{2, 4, 64}, []save{{3, -1, 1}, {5, -1, 2}}, []int{1, 2}},
		{"supersedes the previous version on top", []int64{2, 64}, []save{{1, -1, 0}, {3, 0, 1}}, []int{-1, 1}},
		{"supersedes the previous version in its tier", []int64{2, 64}, []save{{3, -1, 1}, {4, 0, 1}}, []int{-1, 1}},
		{"larger than every tier", []int64{2, 4}, []save{{5, -1, -1}}, []int{-1}},
		{"failure keeps the previous version below", []int64{2, 4}, []save{{3, -1, 1}, {5, 0, -1}}, []int{1, -1}},
		{"failure keeps the previous version on top", []int64{2, 4}, []save{{1, -1, 0}, {5, 0, -1}}, []int{0, -1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DirectoryConfig{BucketsLog2: 4, RegionBytes: 4096, DeleteSuperseded: true, CheckInvariants: true,
				Shape: KVShape{Layers: 1, KWidth: 1020, VWidth: 1020, ElemBytes: 2}}
			p := regionPool(t, cfg, c.tiers)
			keys := make([]Key, len(c.saves))
			var saved int64
			for i, s := range c.saves {
				keys[i] = Key{Tokens: s.tokens, Hash: uint64(i + 1)}
				o := Object{Key: keys[i]}
				if s.prev >= 0 {
					o.Prev = &keys[s.prev]
				}
				res, moves, err := p.Save(sim.Time(i), o)
				require.Empty(t, moves)
				if s.tier < 0 {
					require.EqualError(t, err, tooLarge)
					require.NotErrorAs(t, err, new(*InvariantError), "a store too small is no bug")
					assert.Zero(t, res.Inserted)
					continue
				}
				require.NoError(t, err)
				assert.Equal(t, s.tokens*cfg.Shape.BytesPerToken(), extentBytes(res.Writes), "save %d written whole", i)
				for _, x := range res.Writes {
					assert.Equal(t, s.tier, x.Tier, "save %d writes in its tier", i)
				}
				saved += extentBytes(res.Writes)
			}
			require.NoError(t, p.Check(10, "saves"))
			var written int64
			for j := range p.Tiers() {
				written += p.Stats(j).BytesWritten
			}
			assert.Equal(t, saved, written, "the tiers count the bytes saved in them")
			for i, want := range c.held {
				for j := range p.Tiers() {
					id, _ := p.Tier(j).find(keys[i])
					assert.Equal(t, want == j, id != none, "save %d's key in tier %d", i, j)
				}
				read, moves, err := p.Raise(20, keys[i])
				require.NoError(t, err)
				assert.Empty(t, read, "save %d: raised", i)
				assert.Empty(t, moves, "save %d: raised", i)
				f, moves, err := p.Find(30, Object{Key: keys[i]})
				require.NoError(t, err)
				assert.Equal(t, want >= 0, f.Hit, "save %d found", i)
				assert.Empty(t, moves, "save %d: promoted above a tier too small for it", i)
				for _, x := range f.Extents {
					assert.Equal(t, want, x.Tier, "save %d read from its tier", i)
				}
			}
			require.NoError(t, p.Check(40, "lookups"))
		})
	}
}

// TestPoolSavesABlockLargerThanATierBelowIt: in the block scheme each
// block is an object of its own: a block larger than the top tier goes
// to the first tier that holds it, and a lookup finds it there without
// moving it; a block no tier holds fails the save before any block is
// stored. A token takes one 4 KiB region here, a block three.
func TestPoolSavesABlockLargerThanATierBelowIt(t *testing.T) {
	cases := []struct {
		name     string
		tiers    []int64 // regions
		wantTier []int   // of each of the two blocks of 6 tokens; nil: the save fails
		wantErr  string
	}{
		{"larger than the top", []int64{2, 64}, []int{1, 1}, ""},
		{"fits the top", []int64{8, 64}, []int{0, 0}, ""},
		{"larger than every tier", []int64{2, 2}, nil,
			"storage tiers: an object of 3 tokens (12252 B, 3 regions of 4096 B) is larger than every tier (t0 8192 B, t1 8192 B)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DirectoryConfig{Scheme: SchemeBlock, BlockTokens: 3, BucketsLog2: 4, RegionBytes: 4096, CheckInvariants: true,
				Shape: KVShape{Layers: 1, KWidth: 1020, VWidth: 1020, ElemBytes: 2}}
			p := regionPool(t, cfg, c.tiers)
			blocks := BlockKeys(1, []uint32{1, 2, 3, 4, 5, 6}, 3)
			require.Len(t, blocks, 2)
			res, moves, err := p.Save(0, Object{Blocks: blocks})
			require.Empty(t, moves)
			if c.wantTier == nil {
				require.EqualError(t, err, c.wantErr)
				for j := range p.Tiers() {
					assert.Zero(t, p.Tier(j).Links(), "tier %d stored a block", j)
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, 2, res.Inserted)
			for _, x := range res.Writes {
				assert.Equal(t, c.wantTier[0], x.Tier)
			}
			f, moves, err := p.Find(10, Object{Blocks: blocks})
			require.NoError(t, err)
			require.Equal(t, 2, f.MatchedBlocks)
			assert.Empty(t, moves, "no block promoted above a tier too small for it")
			for _, x := range f.Extents {
				assert.Equal(t, c.wantTier[0], x.Tier)
			}
			for i, k := range blocks {
				id, _ := p.Tier(c.wantTier[i]).find(k)
				assert.NotEqual(t, none, id, "block %d in tier %d", i, c.wantTier[i])
			}
			var written int64
			for j := range p.Tiers() {
				written += p.Stats(j).BytesWritten
			}
			assert.Equal(t, 6*cfg.Shape.BytesPerToken(), written)
			require.NoError(t, p.Check(10, "blocks"))
		})
	}
}
