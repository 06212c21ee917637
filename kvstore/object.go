package kvstore

import "github.com/kvcosim/kvcosim/sim"

// Object is what a session stores or looks for, in either scheme: in the
// patent scheme one Key (and Prev, the session's previous version, which a
// new version supersedes); in the block scheme the prompt's Blocks, of
// which the first Held are already the session's.
type Object struct {
	Key    Key
	Prev   *Key
	Blocks []Key
	Held   int
	// From is the first of the key's tokens the version holds: a session
	// whose oldest tokens were truncated away, in a design that stores KV
	// without positions (CachedAttention), keeps only [From, Key.Tokens)
	// though its key counts every token it computed.
	From int64
}

// Found is what one lookup found and what to read for it.
type Found struct {
	// Hit: the patent key is stored. MatchedBlocks: the stored prefix of
	// the block keys.
	Hit           bool
	MatchedBlocks int
	// Hops are the links visited; BucketReads the address-mapping table
	// entries read.
	Hops, BucketReads int
	// Extents are the storage extents of what is stored, in token order.
	Extents []Extent
}

// Find looks an object up once (claims 3-6): its outcome and the extents
// to import come from the same walk, so every design counts one lookup.
func (d *Directory) Find(now sim.Time, o Object) (Found, error) {
	if d.cfg.Scheme == SchemeBlock {
		matched, hops, err := d.LookupPrefix(now, o.Blocks)
		return Found{MatchedBlocks: matched, Hops: hops, BucketReads: min(matched+1, len(o.Blocks)),
			Extents: d.PrefixExtents(o.Blocks[:matched])}, err
	}
	r, err := d.Lookup(now, o.Key)
	return Found{Hit: r.Hit, Hops: r.Hops, BucketReads: 1, Extents: d.ReadExtents(r)}, err
}

// Save stores an object's new version (claims 7-10): a patent key with
// its previous version, or the blocks not stored yet.
func (d *Directory) Save(now sim.Time, o Object) (ExportResult, error) {
	if d.cfg.Scheme == SchemeBlock {
		return d.ExportBlocks(now, o.Blocks, o.Held)
	}
	return d.export(now, o.Key, o.Prev, o.From)
}
