package kvstore

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kvcosim/kvcosim/sim"
)

// Tier is one level of a pool: its name and its capacity.
type Tier struct {
	Name  string
	Bytes int64
}

// Pool is the store's tiers, fastest first (host DRAM, then an SSD, say),
// each a Directory of its own regions, FIFOs and chains. An object is in
// exactly one tier: a save goes to the top; a tier that must make room
// demotes its least recently used object to the next tier (only the last
// tier drops objects for good); a hit below the top promotes the object.
// An object larger than a tier's whole capacity passes that tier by: it
// is saved in, promoted to and demoted into the first tier, from the top
// or below the one it leaves, that can hold it (until 2026-11-26 it was
// saved at the top, and failed). Each demotion and promotion is a Move
// the timed layer carries out. A pool of one tier is exactly its
// Directory.
//
// Functional contents do not follow moves: functional mode takes one tier.
type Pool struct {
	tiers []*Directory
	names []string
	stats []TierStats
	moves []Move // of the operation in progress
	err   error  // an invariant violation met while moving
}

// Move is an object's bytes going from one tier to another: read Read in
// tier From, write Write in tier To. A promotion's bytes were just read
// for the import, so its Read is empty.
type Move struct {
	From, To    int
	Read, Write []Extent
}

// TierStats are a tier's counts beyond its Directory's (whose Lookups and
// Hits are the tier's).
type TierStats struct {
	// DemotedIn and DemotedOut count objects moved down into and out of
	// the tier; Promoted counts objects moved from it up to the top (or,
	// one larger than the top, to the first tier that holds it).
	DemotedIn, DemotedOut, Promoted int64
	// Evictions count objects dropped for good (the last tier's, or one
	// larger than every tier below).
	Evictions int64
	// Expirations count objects the tier deleted for their TTL (its
	// directory's count).
	Expirations int64
	// BytesWritten counts the bytes the pool wrote into the tier: saves
	// and moves in (what its device must see written).
	BytesWritten int64
}

// NewPool builds the tiers over one configuration (StorageBytes is each
// tier's Bytes). Errors name the tier by position and name.
func NewPool(cfg DirectoryConfig, tiers []Tier) (*Pool, error) {
	if len(tiers) == 0 {
		return nil, errors.New("storage.tiers: at least one tier")
	}
	p := &Pool{stats: make([]TierStats, len(tiers))}
	for i, t := range tiers {
		switch {
		case t.Name == "":
			return nil, fmt.Errorf("storage.tiers[%d]: name: empty", i)
		case t.Bytes < cfg.RegionBytes:
			return nil, fmt.Errorf("storage.tiers[%d] (%s): capacity %d B: smaller than one %d B region", i, t.Name, t.Bytes, cfg.RegionBytes)
		}
		for j, n := range p.names {
			if n == t.Name {
				return nil, fmt.Errorf("storage.tiers[%d]: name %q: already the name of tier %d", i, t.Name, j)
			}
		}
		c := cfg
		c.StorageBytes = t.Bytes
		d, err := NewDirectory(c)
		if err != nil {
			return nil, fmt.Errorf("storage.tiers[%d] (%s): %w", i, t.Name, err)
		}
		if i > 0 {
			from := i - 1
			p.tiers[from].demote = func(now sim.Time, v Victim) { p.demoteFrom(now, from, v) }
		}
		p.tiers, p.names = append(p.tiers, d), append(p.names, t.Name)
	}
	return p, nil
}

// HeldBytes is what the directory's regions in use hold.
func (d *Directory) HeldBytes() int64 {
	f1, f2 := d.FIFOLevels()
	return int64(d.Regions()-f1-f2) * d.cfg.RegionBytes
}

// SetKeep makes every tier's eviction pass over the objects keep names
// (a scheduler that knows which sessions wait: CachedAttention's
// scheduler-aware eviction).
func (p *Pool) SetKeep(keep func(Key) bool) {
	for _, d := range p.tiers {
		d.keep = keep
	}
}

// Tiers is the number of tiers.
func (p *Pool) Tiers() int { return len(p.tiers) }

// Tier returns tier i's directory.
func (p *Pool) Tier(i int) *Directory { return p.tiers[i] }

// Name returns tier i's name.
func (p *Pool) Name(i int) string { return p.names[i] }

// Stats returns tier i's counts; the last tier's evictions are its
// directory's (it has nowhere to demote to), and every tier's expirations
// are its directory's.
func (p *Pool) Stats(i int) TierStats {
	st := p.stats[i]
	st.Expirations = p.tiers[i].Stats().Expirations
	if i == len(p.tiers)-1 {
		st.Evictions += p.tiers[i].Stats().Evictions
	}
	return st
}

// Find looks an object up tier by tier, from the top, and promotes what
// it finds below the top; the extents say which tier holds them, and the
// moves are the promotions (and the demotions they caused).
func (p *Pool) Find(now sim.Time, o Object) (Found, []Move, error) {
	if len(p.tiers) == 1 {
		f, err := p.tiers[0].Find(now, o)
		return f, nil, err
	}
	p.moves, p.err = nil, nil
	var f Found
	var err error
	if p.tiers[0].cfg.Scheme == SchemeBlock {
		f, err = p.findBlocks(now, o.Blocks)
	} else {
		f, err = p.findObject(now, o.Key)
	}
	return f, p.moves, errors.Join(err, p.err)
}

// Raise moves an object keyed k that lies below the top tier up into it
// ahead of its lookup (CachedAttention's scheduler-aware fetching): it
// reports the extents to read from the lower tier and the moves, the
// promotion first and then the demotions it caused. An object in the top
// tier, in none, or larger than the top tier is left alone (no extents).
// Raise is not a lookup: no tier counts it as one.
func (p *Pool) Raise(now sim.Time, k Key) ([]Extent, []Move, error) {
	p.moves, p.err = nil, nil
	for i, d := range p.tiers {
		d.Expire(now)
		id, _ := d.find(k)
		if id == none {
			continue
		}
		if i == 0 || p.fit(k.Tokens-d.firstToken(id), 0) != 0 {
			return nil, nil, nil
		}
		read := onTier(d.ReadExtents(LookupResult{Hit: true, link: id}), i)
		err := p.promote(now, i, k, 0)
		return read, p.moves, errors.Join(err, p.err)
	}
	return nil, nil, nil
}

// OnTop returns the extents of key k if the top tier holds it, nothing
// otherwise. It is not a lookup: no tier counts it and nothing is touched
// (CachedAttention's pre-loading reads what the next lookup will find).
func (p *Pool) OnTop(k Key) []Extent {
	d := p.tiers[0]
	id, _ := d.find(k)
	if id == none {
		return nil
	}
	return onTier(d.ReadExtents(LookupResult{Hit: true, link: id}), 0)
}

// findObject finds a patent key in the first tier that has it.
func (p *Pool) findObject(now sim.Time, k Key) (Found, error) {
	var f Found
	for i, d := range p.tiers {
		got, err := d.Find(now, Object{Key: k})
		f.Hops, f.BucketReads = f.Hops+got.Hops, f.BucketReads+got.BucketReads
		if err != nil || !got.Hit {
			if err != nil {
				return f, err
			}
			continue
		}
		f.Hit, f.Extents = true, onTier(got.Extents, i)
		return f, p.promote(now, i, k, 0)
	}
	return f, nil
}

// findBlocks finds the longest stored prefix of block keys, each block in
// whichever tier holds it.
func (p *Pool) findBlocks(now sim.Time, keys []Key) (Found, error) {
	var f Found
	for _, k := range keys {
		i, r, err := p.lookup(now, k, &f)
		if err != nil || i < 0 {
			return f, err
		}
		f.MatchedBlocks++
		f.Extents = append(f.Extents, onTier(p.tiers[i].ReadExtents(r), i)...)
		if err := p.promote(now, i, k, p.tiers[i].links.at(r.link).holders); err != nil {
			return f, err
		}
	}
	return f, nil
}

// lookup finds one key tier by tier, counting hops and bucket reads into
// f; it returns the tier (-1: none) and the tier's lookup.
func (p *Pool) lookup(now sim.Time, k Key, f *Found) (int, LookupResult, error) {
	for i, d := range p.tiers {
		r, err := d.Lookup(now, k)
		f.Hops, f.BucketReads = f.Hops+r.Hops, f.BucketReads+1
		if err != nil {
			return -1, r, err
		}
		if r.Hit {
			return i, r, nil
		}
	}
	return -1, LookupResult{}, nil
}

// promote moves key k from tier i to the top or, if it is larger than
// the top, to the first tier that holds it; nothing when that is tier i
// (or i is 0), so an object too large for every tier above stays where it
// is found.
func (p *Pool) promote(now sim.Time, i int, k Key, holders int32) error {
	if i == 0 {
		return nil
	}
	from, to := int64(0), 0
	if id, _ := p.tiers[i].find(k); id != none {
		from = p.tiers[i].firstToken(id)
		to = p.fit(k.Tokens-from, 0)
	}
	if to >= i {
		return nil
	}
	if _, err := p.tiers[i].Delete(now, k); err != nil {
		return err
	}
	res, err := p.place(now, to, k, from, holders)
	if err != nil {
		return err
	}
	p.stats[i].Promoted++
	p.moves = append(p.moves, Move{From: i, To: to, Write: onTier(res.Writes, to)})
	return nil
}

// fit is the first tier from tier first on whose whole capacity holds an
// object of n tokens; -1 when none does.
func (p *Pool) fit(n int64, first int) int {
	need := p.tiers[0].regionsOf(n)
	for i := first; i < len(p.tiers); i++ {
		if need <= int64(p.tiers[i].Regions()) {
			return i
		}
	}
	return -1
}

// fitsNoTier is the error of a save of an object of n tokens that no tier
// can hold: its size and every tier's capacity.
func (p *Pool) fitsNoTier(n int64) error {
	cfg := p.tiers[0].cfg
	caps := make([]string, len(p.tiers))
	for i, d := range p.tiers {
		caps[i] = fmt.Sprintf("%s %d B", p.names[i], int64(d.Regions())*cfg.RegionBytes)
	}
	return fmt.Errorf("storage tiers: an object of %d tokens (%d B, %d regions of %d B) is larger than every tier (%s)",
		n, n*cfg.Shape.BytesPerToken(), p.tiers[0].regionsOf(n), cfg.RegionBytes, strings.Join(caps, ", "))
}

// place stores key k whole, its tokens from from on, in tier i (a moved
// object: no previous version).
func (p *Pool) place(now sim.Time, i int, k Key, from int64, holders int32) (ExportResult, error) {
	d := p.tiers[i]
	var res ExportResult
	var err error
	if d.cfg.Scheme == SchemeBlock {
		res, err = d.ExportBlocks(now, []Key{k}, 0)
		if id, _ := d.find(k); id != none {
			d.links.at(id).holders = holders
		}
	} else {
		res, err = d.export(now, k, nil, from)
	}
	p.stats[i].BytesWritten += extentBytes(res.Writes)
	return res, err
}

// demoteFrom moves tier i's evicted object to tier i+1 or, if it is
// larger than that tier, to the first tier below that holds it; one that
// no tier below holds is dropped for good.
func (p *Pool) demoteFrom(now sim.Time, i int, v Victim) {
	to := p.fit(v.Key.Tokens-v.From, i+1)
	if to < 0 {
		p.stats[i].Evictions++
		return
	}
	res, err := p.place(now, to, v.Key, v.From, v.Holders)
	var inv *InvariantError
	switch {
	case errors.As(err, &inv):
		p.err = errors.Join(p.err, err)
	case err != nil:
		p.stats[i].Evictions++
		return
	}
	p.stats[i].DemotedOut++
	p.stats[to].DemotedIn++
	p.moves = append(p.moves, Move{From: i, To: to, Read: onTier(v.Extents, i), Write: onTier(res.Writes, to)})
}

// Save stores an object's new version at the top (claims 7-10) or, if it
// is larger than the top tier's whole capacity, in the first tier that
// can hold it; the moves are the demotions it caused, and each write
// names its tier. A previous version in another tier is superseded there
// (the new version is written whole). An object no tier can hold fails
// before anything is touched, its previous version left in place. In the
// block scheme each block is such an object: a block already stored stays
// in the tier that holds it and only gains the session as a holder, a new
// one goes to the first tier that can hold it; each block is placed in
// turn, so one demoted while the others are placed is found where it went.
func (p *Pool) Save(now sim.Time, o Object) (ExportResult, []Move, error) {
	top := p.tiers[0]
	if len(p.tiers) == 1 {
		res, err := top.Save(now, o)
		p.stats[0].BytesWritten += extentBytes(res.Writes)
		return res, nil, err
	}
	p.moves, p.err = nil, nil
	var res ExportResult
	var err error
	if top.cfg.Scheme == SchemeBlock {
		res, err = p.saveBlocks(now, o)
	} else {
		res, err = p.saveObject(now, o)
	}
	return res, p.moves, errors.Join(err, p.err)
}

// saveObject finds the first tier that can hold the new version, fails if
// none can, supersedes a previous version found in another tier where it
// is, then saves the new version there. A tier that holds the version's
// tokens at all holds them after evicting what it must, so once it is
// found the save cannot fail for want of room and the previous version
// may go first (its room is free for the demotions the save causes).
func (p *Pool) saveObject(now sim.Time, o Object) (ExportResult, error) {
	to := p.fit(o.Key.Tokens-o.From, 0)
	if to < 0 {
		return ExportResult{}, p.fitsNoTier(o.Key.Tokens - o.From)
	}
	if o.Prev != nil {
		if id, _ := p.tiers[to].find(*o.Prev); id == none {
			for i, d := range p.tiers {
				if id, _ := d.find(*o.Prev); i != to && id != none && d.cfg.DeleteSuperseded {
					if _, err := d.Delete(now, *o.Prev); err != nil {
						return ExportResult{}, err
					}
				}
			}
			o.Prev = nil
		}
	}
	res, err := p.tiers[to].Save(now, o)
	p.stats[to].BytesWritten += extentBytes(res.Writes)
	res.Writes = onTier(res.Writes, to)
	return res, err
}

// saveBlocks stores each block not stored in any tier in the first tier
// that can hold it and adds the session as a holder of the others,
// wherever they are. A block no tier can hold fails the save before any
// block is stored.
func (p *Pool) saveBlocks(now sim.Time, o Object) (ExportResult, error) {
	for _, k := range o.Blocks {
		if n := k.Tokens - p.tiers[0].blockStart(k.Tokens); p.fit(n, 0) < 0 {
			return ExportResult{}, p.fitsNoTier(n)
		}
	}
	var res ExportResult
	for i, k := range o.Blocks {
		held := 0
		if i < o.Held {
			held = 1 // the session holds it already
		}
		to := -1
		for j, t := range p.tiers {
			if id, _ := t.find(k); id != none {
				to = j
				break
			}
		}
		if to < 0 {
			to = p.fit(k.Tokens-p.tiers[0].blockStart(k.Tokens), 0)
		}
		one, err := p.tiers[to].ExportBlocks(now, []Key{k}, held)
		p.stats[to].BytesWritten += extentBytes(one.Writes)
		one.Writes = onTier(one.Writes, to)
		res.add(one)
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// Check runs every tier's invariant check (which finds a key held twice
// in a tier, and holds its ledger of insertions, evictions, expirations
// and removals), checks that every object a tier above the last evicted
// was demoted or dropped and that the objects demoted out of tiers are
// those demoted into them, and that no key is in two tiers: each key of a
// tier is looked up in the tiers after it.
func (p *Pool) Check(now sim.Time, op string) error {
	var out, in int64
	for i, d := range p.tiers {
		if err := d.Check(now, op); err != nil {
			return fmt.Errorf("tier %s: %w", p.names[i], err)
		}
		st := p.stats[i]
		if evicted := d.Stats().Evictions; i < len(p.tiers)-1 && evicted != st.DemotedOut+st.Evictions {
			return &InvariantError{fmt.Sprintf("pool invariant violated at %v after %s: tier %s evicted %d objects but demoted %d and dropped %d",
				now, op, p.names[i], evicted, st.DemotedOut, st.Evictions)}
		}
		out, in = out+st.DemotedOut, in+st.DemotedIn
	}
	if out != in {
		return &InvariantError{fmt.Sprintf("pool invariant violated at %v after %s: %d objects demoted out of tiers but %d into them", now, op, out, in)}
	}
	for i, d := range p.tiers[:len(p.tiers)-1] {
		for _, head := range d.buckets {
			for id := head; id != none; id = d.links.at(id).next {
				k := d.links.at(id).key
				for j := i + 1; j < len(p.tiers); j++ {
					if other, _ := p.tiers[j].find(k); other != none {
						return &InvariantError{fmt.Sprintf("pool invariant violated at %v after %s: key %+v is in tiers %s and %s",
							now, op, k, p.names[i], p.names[j])}
					}
				}
			}
		}
	}
	return nil
}

// onTier marks extents as tier i's.
func onTier(xs []Extent, i int) []Extent {
	for j := range xs {
		xs[j].Tier = i
	}
	return xs
}

// extentBytes is the bytes of extents.
func extentBytes(xs []Extent) int64 {
	var n int64
	for _, x := range xs {
		n += x.Bytes
	}
	return n
}
