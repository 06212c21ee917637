package kvstore

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

// The reference model keeps the same store in the plainest terms: a map of
// entries, segments as records with a reference count, the free regions as
// two counters (FIFO 2 as a list of freeing times), and the LRU order by a
// linear scan. It knows nothing of buckets, chains, arenas or region ids.

type refSeg struct {
	start, cap int64
	regions    int64
	refs       int
}

type refEntry struct {
	key     Key
	segs    []*refSeg // the object's segments in token order
	touched int
	at      sim.Time
	holders int
}

type refModel struct {
	cfg       DirectoryConfig
	entries   map[Key]*refEntry
	free1     int64
	free2     []sim.Time // freeing time of each region in FIFO 2, oldest first
	accesses  int
	evictions int
}

func newRefModel(cfg DirectoryConfig) *refModel {
	return &refModel{cfg: cfg, entries: map[Key]*refEntry{}, free1: cfg.StorageBytes / cfg.RegionBytes}
}

func (m *refModel) touch(e *refEntry, now sim.Time) {
	m.accesses++
	e.touched, e.at = m.accesses, now
}

func (m *refModel) oldest() *refEntry {
	var best *refEntry
	for _, e := range m.entries {
		if best == nil || e.touched < best.touched {
			best = e
		}
	}
	return best
}

func (m *refModel) remove(e *refEntry, now sim.Time) {
	delete(m.entries, e.key)
	for _, s := range e.segs {
		s.refs--
		if s.refs == 0 {
			for range s.regions {
				m.free2 = append(m.free2, now)
			}
		}
	}
}

func (m *refModel) expire(now sim.Time) {
	for m.cfg.TTL > 0 {
		e := m.oldest()
		if e == nil || e.at+m.cfg.TTL > now {
			return
		}
		m.remove(e, now)
	}
}

var errRefFull = errors.New("reference: store too small")

func (m *refModel) allocate(now sim.Time, n int64) (int, error) {
	if n > m.cfg.StorageBytes/m.cfg.RegionBytes {
		return 0, errRefFull
	}
	for len(m.free2) > 0 && m.free2[0]+m.cfg.FreeDelay <= now {
		m.free2 = m.free2[1:]
		m.free1++
	}
	evicted := 0
	for m.free1+int64(len(m.free2)) < n {
		e := m.oldest()
		if e == nil {
			return evicted, errRefFull
		}
		m.remove(e, now)
		m.evictions++
		evicted++
	}
	f2 := int64(len(m.free2))
	from1 := n
	switch m.cfg.Policy {
	case FIFO2First:
		from1 = max(0, n-f2)
	case Proportional:
		total := m.free1 + f2
		from1 = (n*m.free1 + total/2) / total
	}
	from1 = max(min(from1, m.free1), n-f2)
	m.free1 -= from1
	m.free2 = m.free2[n-from1:]
	return evicted, nil
}

func (m *refModel) newSeg(now sim.Time, start, want int64) (*refSeg, int, error) {
	bpt := m.cfg.Shape.BytesPerToken()
	n := (want*bpt + m.cfg.RegionBytes - 1) / m.cfg.RegionBytes
	evicted, err := m.allocate(now, n)
	if err != nil {
		return nil, evicted, err
	}
	capacity := want
	if m.cfg.Mode == ExportDelta && m.cfg.Scheme == SchemePatent {
		capacity = n * m.cfg.RegionBytes / bpt
	}
	return &refSeg{start: start, cap: capacity, regions: n, refs: 1}, evicted, nil
}

// refResult is what both models must agree on for an export.
type refResult struct {
	inserted, existing, evicted, superseded int
	writtenBytes                            int64
}

func (m *refModel) export(now sim.Time, k Key, prev *Key) (refResult, error) {
	m.expire(now)
	var r refResult
	if e := m.entries[k]; e != nil {
		m.touch(e, now)
		r.existing = 1
		return r, nil
	}
	bpt := m.cfg.Shape.BytesPerToken()
	var p *refEntry
	if prev != nil {
		p = m.entries[*prev]
	}
	e := &refEntry{key: k}
	if m.cfg.Mode == ExportDelta && p != nil && prev.Tokens <= k.Tokens && m.deltaFits(p, k.Tokens) {
		for _, s := range p.segs {
			s.refs++
		}
		e.segs = append([]*refSeg(nil), p.segs...)
		last := p.segs[len(p.segs)-1]
		fill := min(last.start+last.cap-prev.Tokens, k.Tokens-prev.Tokens)
		if prev.Tokens+fill < k.Tokens {
			s, ev, err := m.newSeg(now, prev.Tokens+fill, k.Tokens-prev.Tokens-fill)
			r.evicted += ev
			if err != nil {
				for _, s := range p.segs {
					s.refs--
				}
				return r, err
			}
			e.segs = append(e.segs, s)
		}
		r.writtenBytes = (k.Tokens - prev.Tokens) * bpt
	} else {
		s, ev, err := m.newSeg(now, 0, k.Tokens)
		r.evicted += ev
		if err != nil {
			return r, err
		}
		e.segs = []*refSeg{s}
		r.writtenBytes = k.Tokens * bpt
	}
	m.entries[k] = e
	m.touch(e, now)
	r.inserted = 1
	if m.cfg.DeleteSuperseded && prev != nil && *prev != k {
		if p := m.entries[*prev]; p != nil {
			m.remove(p, now)
			r.superseded = 1
		}
	}
	return r, nil
}

// deltaFits: a delta appending to p up to token to holds p's regions and
// its new segment's, and those must fit the whole store; else the version
// is written whole.
func (m *refModel) deltaFits(p *refEntry, to int64) bool {
	var n int64
	for _, s := range p.segs {
		n += s.regions
	}
	last := p.segs[len(p.segs)-1]
	if end := last.start + last.cap; to > end {
		n += ((to-end)*m.cfg.Shape.BytesPerToken() + m.cfg.RegionBytes - 1) / m.cfg.RegionBytes
	}
	return n <= m.cfg.StorageBytes/m.cfg.RegionBytes
}

func (m *refModel) lookup(now sim.Time, k Key) bool {
	m.expire(now)
	e := m.entries[k]
	if e != nil {
		m.touch(e, now)
	}
	return e != nil
}

func (m *refModel) lookupPrefix(now sim.Time, keys []Key) int {
	m.expire(now)
	n := 0
	for _, k := range keys {
		e := m.entries[k]
		if e == nil {
			break
		}
		m.touch(e, now)
		n++
	}
	return n
}

func (m *refModel) exportBlocks(now sim.Time, keys []Key, held int) (refResult, error) {
	m.expire(now)
	var r refResult
	for i, k := range keys {
		if e := m.entries[k]; e != nil {
			m.touch(e, now)
			if i >= held {
				e.holders++
			}
			r.existing++
			continue
		}
		start := (k.Tokens - 1) / m.cfg.BlockTokens * m.cfg.BlockTokens
		s, ev, err := m.newSeg(now, start, k.Tokens-start)
		r.evicted += ev
		if err != nil {
			return r, err
		}
		e := &refEntry{key: k, segs: []*refSeg{s}, holders: 1}
		m.entries[k] = e
		m.touch(e, now)
		r.inserted++
		r.writtenBytes += (k.Tokens - start) * m.cfg.Shape.BytesPerToken()
	}
	return r, nil
}

func (m *refModel) releaseBlocks(now sim.Time, keys []Key) {
	for _, k := range keys {
		if e := m.entries[k]; e != nil {
			e.holders--
			if e.holders <= 0 && m.cfg.DeleteSuperseded {
				m.remove(e, now)
			}
		}
	}
}

// propSession is a conversation whose history grows turn by turn.
type propSession struct {
	tokens   []uint32
	exported *Key
	blocks   int // block keys this session holds
}

func propConfig(scheme Scheme, variant int) DirectoryConfig {
	return DirectoryConfig{Scheme: scheme, BlockTokens: 16, BucketsLog2: 3, RegionBytes: 256, StorageBytes: 64 * 256,
		FreeDelay: sim.Time(variant%3) * 50, Policy: AllocPolicy(variant % 3), DeleteSuperseded: variant%2 == 0,
		TTL: sim.Time(variant/2%2) * 3000, Layout: Layout(variant % 3), Mode: ExportMode(variant / 2 % 2),
		Shape: KVShape{Layers: 2, KWidth: 4, VWidth: 4, ElemBytes: 2}, CheckInvariants: true}
}

// runProperty applies ops random operations to a directory and the
// reference model and compares them after every one.
func runProperty(t *testing.T, cfg DirectoryConfig, ops int, seed uint64) {
	d, err := NewDirectory(cfg)
	require.NoError(t, err)
	runPropertyOn(t, d, cfg, ops, seed)
}

func runPropertyOn(t *testing.T, d *Directory, cfg DirectoryConfig, ops int, seed uint64) {
	m := newRefModel(cfg)
	r := sim.NewStreams(seed).Stream("property")
	sessions := make([]propSession, 12)
	now := sim.Time(0)
	for op := range ops {
		now += sim.Time(1 + r.IntN(20))
		s := &sessions[r.IntN(len(sessions))]
		what := fmt.Sprintf("op %d at %v", op, now)
		switch c := r.IntN(100); {
		case c < 45: // a turn: more tokens, then export
			for range 1 + r.IntN(60) {
				s.tokens = append(s.tokens, uint32(r.IntN(4)))
			}
			if len(s.tokens) > 300 {
				if cfg.Scheme == SchemeBlock {
					require.NoError(t, d.ReleaseBlocks(now, BlockKeys(1, s.tokens, 16)[:s.blocks]), what)
					m.releaseBlocks(now, BlockKeys(1, s.tokens, 16)[:s.blocks])
				}
				*s = propSession{tokens: s.tokens[:1+r.IntN(8)]} // a new conversation, maybe a shared start
			}
			exportBoth(t, d, m, s, now, what)
		case c < 80:
			lookupBoth(t, d, m, s, now, r.IntN(4) == 0, what)
		case c < 88:
			require.Equal(t, len(m.entries) > 0, d.EvictLRU(now), what)
			if e := m.oldest(); e != nil {
				m.remove(e, now)
			}
			require.NoError(t, d.Check(now, "evict"), what)
		case c < 94:
			if cfg.Scheme == SchemePatent && s.exported != nil {
				ok, err := d.Delete(now, *s.exported)
				require.NoError(t, err, what)
				e := m.entries[*s.exported]
				require.Equal(t, e != nil, ok, what)
				if e != nil {
					m.remove(e, now)
				}
			}
		default:
			now += sim.Time(r.IntN(4000)) // idle: TTLs and FIFO 2 delays pass
			d.Expire(now)
			m.expire(now)
			require.NoError(t, d.Check(now, "expire"), what)
		}
		f1, f2 := d.FIFOLevels()
		require.Equal(t, m.free1, int64(f1), "%s: FIFO 1 level", what)
		require.Equal(t, len(m.free2), f2, "%s: FIFO 2 level", what)
		require.Equal(t, len(m.entries), d.Links(), "%s: links", what)
	}
}

func exportBoth(t *testing.T, d *Directory, m *refModel, s *propSession, now sim.Time, what string) {
	if d.cfg.Scheme == SchemeBlock {
		keys := BlockKeys(1, s.tokens, 16)
		got, err := d.ExportBlocks(now, keys, s.blocks)
		want, werr := m.exportBlocks(now, keys, s.blocks)
		require.Equal(t, werr != nil, err != nil, "%s: %v / %v", what, err, werr)
		require.Equal(t, want, refResult{got.Inserted, got.Existing, got.Evicted, got.Superseded, extentBytes(got.Writes)}, what)
		if err == nil {
			s.blocks = len(keys)
		}
		return
	}
	k := PatentKey(1, s.tokens)
	got, err := d.Export(now, k, s.exported)
	want, werr := m.export(now, k, s.exported)
	require.Equal(t, werr != nil, err != nil, "%s: %v / %v", what, err, werr)
	require.Equal(t, want, refResult{got.Inserted, got.Existing, got.Evicted, got.Superseded, extentBytes(got.Writes)}, what)
	if err == nil {
		s.exported = &k
	}
}

func lookupBoth(t *testing.T, d *Directory, m *refModel, s *propSession, now sim.Time, stranger bool, what string) {
	tokens := s.tokens
	if stranger {
		tokens = append(append([]uint32(nil), tokens...), 7, 7, 7)
	}
	if d.cfg.Scheme == SchemeBlock {
		keys := BlockKeys(1, tokens, 16)
		got, _, err := d.LookupPrefix(now, keys)
		require.NoError(t, err, what)
		require.Equal(t, m.lookupPrefix(now, keys), got, "%s: matched blocks", what)
		require.Equal(t, int64(got)*16*d.cfg.Shape.BytesPerToken(), extentBytes(d.PrefixExtents(keys[:got])), what)
		return
	}
	k := PatentKey(1, tokens)
	got, err := d.Lookup(now, k)
	require.NoError(t, err, what)
	require.Equal(t, m.lookup(now, k), got.Hit, what)
	require.Equal(t, map[bool]int64{true: k.Tokens * d.cfg.Shape.BytesPerToken()}[got.Hit], extentBytes(d.ReadExtents(got)), what)
}

// TestDirectoryAgainstReference runs 1e5 random operations per scheme in
// each of six configurations (policies, delays, TTLs, layouts, export
// modes, supersede rules) with the invariants checked after each, and in
// the delta configurations once more in a store of 40 regions, which the
// longest objects (up to 43 regions) and their delta chains pass.
func TestDirectoryAgainstReference(t *testing.T) {
	ops := 100_000
	if testing.Short() {
		ops = 5_000
	}
	for _, scheme := range []Scheme{SchemePatent, SchemeBlock} {
		for variant := range 6 {
			t.Run(fmt.Sprintf("scheme%d/variant%d", scheme, variant), func(t *testing.T) {
				runProperty(t, propConfig(scheme, variant), ops, uint64(variant+1))
			})
		}
	}
	for _, variant := range []int{2, 3} {
		t.Run(fmt.Sprintf("small-store/variant%d", variant), func(t *testing.T) {
			cfg := propConfig(SchemePatent, variant)
			cfg.StorageBytes = 40 * cfg.RegionBytes
			runProperty(t, cfg, ops, uint64(variant+1))
		})
	}
}
