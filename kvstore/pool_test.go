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

// TestPoolKeepsEveryObjectInOneTier runs random turns through pools of
// two and three tiers in both schemes and checks after every operation
// that no key is in two tiers (and every tier's invariants), that every
// demotion moves an object whole (bytes read equal bytes written) into
// the next tier, and that the demotions out of a tier are the demotions
// into the next.
func TestPoolKeepsEveryObjectInOneTier(t *testing.T) {
	for _, scheme := range Schemes.Names() {
		for _, sizes := range [][]int64{{8, 64}, {6, 12, 64}} {
			t.Run(fmt.Sprintf("%s/%v", scheme, sizes), func(t *testing.T) {
				sc, _ := Schemes.Parse(scheme)
				cfg := propConfig(sc, 1)
				var tiers []Tier
				for i, regions := range sizes {
					tiers = append(tiers, Tier{Name: fmt.Sprintf("t%d", i), Bytes: regions * cfg.RegionBytes})
				}
				p, err := NewPool(cfg, tiers)
				require.NoError(t, err)
				var demotions, promotions int
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
						_, moves, err = p.Save(now, o)
					}
					if err != nil {
						require.NotErrorAs(t, err, new(*InvariantError))
					}
					require.NoError(t, p.Check(now, "pool test"))
					for _, m := range moves {
						if m.To == m.From+1 {
							demotions++
							require.Equal(t, extentBytes(m.Read), extentBytes(m.Write), "a demotion moves an object whole")
						} else {
							promotions++
							require.Zero(t, m.To, "a promotion goes to the top")
						}
						for _, x := range m.Write {
							require.Equal(t, m.To, x.Tier)
						}
					}
				})
				assert.Positive(t, demotions, "the top tier overflowed")
				assert.Positive(t, promotions, "a lower tier answered")
				for i := 0; i+1 < p.Tiers(); i++ {
					assert.Equal(t, p.Stats(i).DemotedOut, p.Stats(i+1).DemotedIn)
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
