package kvstore

import (
	"fmt"

	"github.com/kvcosim/kvcosim/sim"
)

// LookupResult is what a chain walk found.
type LookupResult struct {
	Hit  bool
	Hops int // links visited
	link int32
}

// Lookup finds the object with key (claims 3-5): the bucket of its hash,
// then a walk along the chain matching (tokens, hash). A hit refreshes the
// link's access time.
func (d *Directory) Lookup(now sim.Time, k Key) (LookupResult, error) {
	d.Expire(now)
	id, hops := d.find(k)
	d.stats.Lookups++
	d.stats.Hops += int64(hops)
	if id != none {
		d.stats.Hits++
		d.touch(now, id)
	}
	return LookupResult{Hit: id != none, Hops: hops, link: id}, d.after(now, "lookup")
}

// ReadExtents returns the storage extents to import for a hit, in token
// order.
func (d *Directory) ReadExtents(r LookupResult) []Extent {
	if !r.Hit {
		return nil
	}
	start, end := d.objectSpan(r.link)
	if start == 0 {
		return d.chainExtents(d.links.at(r.link).lastSeg, end)
	}
	return d.segExtents(d.links.at(r.link).lastSeg, start, end, nil)
}

// ExportResult is what an export did.
type ExportResult struct {
	// Writes are the storage extents written, in layout order.
	Writes []Extent
	// Hops are the links visited finding existing and previous versions.
	Hops int
	// Inserted counts new links; Existing counts keys already stored.
	Inserted, Existing int
	// Evicted counts links evicted to make room; Superseded is 1 if the
	// session's previous version was deleted.
	Evicted, Superseded int
	// Regions counts the regions allocated.
	Regions int
	// Written lists the objects the export wrote and the first token of
	// each it wrote, for functional mode to put the real bytes there.
	Written []Written
}

// add sums another export's result into r.
func (r *ExportResult) add(o ExportResult) {
	r.Writes, r.Written = append(r.Writes, o.Writes...), append(r.Written, o.Written...)
	r.Hops, r.Inserted, r.Existing = r.Hops+o.Hops, r.Inserted+o.Inserted, r.Existing+o.Existing
	r.Evicted, r.Superseded, r.Regions = r.Evicted+o.Evicted, r.Superseded+o.Superseded, r.Regions+o.Regions
}

// Written is an object an export wrote: tokens [From, Key.Tokens).
type Written struct {
	Key  Key
	From int64
}

// Export stores a session version with key (its computed tokens and their
// hash) after inference (claims 7-8). prev, if not nil, is the session's
// previously exported key: in delta mode the new version shares its
// segments and writes only the new tokens (unless those segments and the
// new ones would exceed the whole store: then it is written whole); with
// DeleteSuperseded the previous version is deleted once the new link is
// in, so a failed export leaves it in place.
func (d *Directory) Export(now sim.Time, k Key, prev *Key) (ExportResult, error) {
	return d.export(now, k, prev, 0)
}

// export is Export of a version that holds the key's tokens from from on
// (Object.From). A delta appends to the previous version's chain only if
// that holds none of the tokens truncated away since: otherwise the kept
// tokens are written whole, and later deltas append to them.
func (d *Directory) export(now sim.Time, k Key, prev *Key, from int64) (ExportResult, error) {
	var res ExportResult
	if from < 0 || from >= k.Tokens {
		return res, &InvariantError{fmt.Sprintf("fpga invariant violated at %v: export of %d tokens from token %d", now, k.Tokens, from)}
	}
	d.Expire(now)
	id, hops := d.find(k)
	res.Hops += hops
	if id != none {
		d.touch(now, id)
		res.Existing = 1
		return res, d.after(now, "export")
	}
	prevID := int32(none)
	if prev != nil {
		var h int
		prevID, h = d.find(*prev)
		res.Hops += h
	}
	var last int32
	var err error
	if d.cfg.Mode == ExportDelta && prevID != none && prev.Tokens <= k.Tokens && d.firstToken(prevID) >= from &&
		d.deltaRegions(d.links.at(prevID).lastSeg, prev.Tokens, k.Tokens) <= int64(d.Regions()) {
		from = prev.Tokens
		last, err = d.appendVersion(now, d.links.at(prevID).lastSeg, prev.Tokens, k.Tokens, &res)
	} else {
		last, err = d.freshObject(now, from, k.Tokens, none, &res)
	}
	if err != nil {
		return res, err
	}
	d.insertLink(now, k, last)
	res.Inserted = 1
	res.Written = append(res.Written, Written{Key: k, From: from})
	if d.cfg.DeleteSuperseded && prev != nil && *prev != k {
		if pid, _ := d.find(*prev); pid != none {
			d.deleteLink(now, pid)
			d.stats.Removals++
			res.Superseded = 1
		}
	}
	return res, d.after(now, "export")
}

// deltaRegions is the regions a delta version appending tokens [from, to)
// to the chain ending at base holds: the chain's and its new segment's.
// A delta past the whole store would evict every other object and still
// fail (the chain it shares stays held), so export writes such a version
// whole instead, which fails, if it must, before evicting anything.
func (d *Directory) deltaRegions(base int32, from, to int64) int64 {
	var n int64
	for s := base; s != none; s = d.segs.at(s).prev {
		n += int64(d.segs.at(s).nRegions)
	}
	seg := d.segs.at(base)
	fill := min(seg.start+seg.cap-from, to-from)
	return n + d.regionsOf(to-from-fill)
}

// freshObject allocates a segment for tokens [start, end) and returns it
// with one reference.
func (d *Directory) freshObject(now sim.Time, start, end int64, prev int32, res *ExportResult) (int32, error) {
	s, evicted, err := d.newSegment(now, start, end-start, prev)
	res.Evicted += evicted
	if err != nil {
		return none, err
	}
	d.segs.at(s).refs = 1
	res.Regions += int(d.segs.at(s).nRegions)
	res.Writes = d.segExtents(s, start, end, res.Writes)
	return s, nil
}

// appendVersion shares the chain ending at base (holding tokens [0, from))
// and appends tokens [from, to): into base's spare slots, then a new segment.
func (d *Directory) appendVersion(now sim.Time, base int32, from, to int64, res *ExportResult) (int32, error) {
	d.holdChain(base)
	seg := d.segs.at(base)
	fill := min(seg.start+seg.cap-from, to-from)
	res.Writes = d.segExtents(base, from, from+fill, res.Writes)
	if from+fill == to {
		return base, nil
	}
	s, err := d.freshObject(now, from+fill, to, base, res)
	if err != nil {
		d.releaseChain(now, base)
		return none, err
	}
	return s, nil
}

// Delete removes the link with key, if stored.
func (d *Directory) Delete(now sim.Time, k Key) (bool, error) {
	id, _ := d.find(k)
	if id != none {
		d.deleteLink(now, id)
		d.stats.Removals++
	}
	return id != none, d.after(now, "delete")
}

// Expire deletes links not accessed for the TTL; it returns how many. It
// compares the time since the last access with the TTL: lastAccess + TTL
// wrapped past 83 days of simulated time with the largest TTL, and every
// link expired at once.
func (d *Directory) Expire(now sim.Time) int {
	if d.cfg.TTL == 0 {
		return 0
	}
	n := 0
	for {
		id, ok := d.oldest()
		if !ok || now-d.links.at(id).lastAccess < d.cfg.TTL {
			return n
		}
		d.deleteLink(now, id)
		d.stats.Expirations++
		n++
	}
}

// EvictLRU deletes the least recently used link; false if there is none.
// A directory that is a pool's tier hands the object to its demote hook
// first, which moves it down a tier.
func (d *Directory) EvictLRU(now sim.Time) bool {
	id, ok := d.victim()
	if ok {
		if d.demote != nil {
			l := d.links.at(id)
			d.demote(now, Victim{Key: l.key, From: d.firstToken(id), Extents: d.ReadExtents(LookupResult{Hit: true, link: id}), Holders: l.holders})
		}
		d.deleteLink(now, id)
		d.stats.Evictions++
	}
	return ok
}

// victim is the least recently used link that keep does not name; a kept
// one is filed as just used on the way. When keep names every link the
// oldest goes after all.
func (d *Directory) victim() (int32, bool) {
	id, ok := d.oldest()
	for tries := d.live; ok && d.keep != nil && tries > 0 && d.keep(d.links.at(id).key); tries-- {
		d.accesses++
		d.links.at(id).touched = d.accesses
		id, ok = d.oldest()
	}
	return id, ok
}

// Victim is an object evicted to make room: its key, the first token it
// holds (Object.From), where its bytes are and, in the block scheme, how
// many sessions hold it.
type Victim struct {
	Key     Key
	From    int64
	Extents []Extent
	Holders int32
}

// firstToken is the first token link id's object holds: the start of the
// oldest segment of its chain.
func (d *Directory) firstToken(id int32) int64 {
	s := d.links.at(id).lastSeg
	for d.segs.at(s).prev != none {
		s = d.segs.at(s).prev
	}
	return d.segs.at(s).start
}

// LookupPrefix finds the longest stored prefix of a request's block keys:
// it looks the keys up in order and stops at the first miss.
func (d *Directory) LookupPrefix(now sim.Time, keys []Key) (matched int, hops int, err error) {
	d.Expire(now)
	for _, k := range keys {
		id, h := d.find(k)
		hops += h
		d.stats.Lookups++
		if id == none {
			break
		}
		d.stats.Hits++
		d.touch(now, id)
		matched++
	}
	d.stats.Hops += int64(hops)
	return matched, hops, d.after(now, "lookup-prefix")
}

// PrefixExtents returns the storage extents of stored blocks, in order.
func (d *Directory) PrefixExtents(keys []Key) []Extent {
	var out []Extent
	for _, k := range keys {
		if id, _ := d.find(k); id != none {
			seg := d.links.at(id).lastSeg
			out = d.segExtents(seg, d.segs.at(seg).start, k.Tokens, out)
		}
	}
	return out
}

// blockStart is the first token of the block that ends at end.
func (d *Directory) blockStart(end int64) int64 {
	return (end - 1) / d.cfg.BlockTokens * d.cfg.BlockTokens
}

// ExportBlocks stores the blocks of a request that are not stored yet. The
// first held keys are blocks this session already references; every other
// block found gains the session as a holder.
func (d *Directory) ExportBlocks(now sim.Time, keys []Key, held int) (ExportResult, error) {
	d.Expire(now)
	var res ExportResult
	for i, k := range keys {
		id, h := d.find(k)
		res.Hops += h
		if id != none {
			d.touch(now, id)
			if i >= held {
				d.links.at(id).holders++
			}
			res.Existing++
			continue
		}
		s, err := d.freshObject(now, d.blockStart(k.Tokens), k.Tokens, none, &res)
		if err != nil {
			return res, err
		}
		d.links.at(d.insertLink(now, k, s)).holders = 1
		res.Inserted++
		res.Written = append(res.Written, Written{Key: k, From: d.blockStart(k.Tokens)})
	}
	return res, d.after(now, "export-blocks")
}

// ReleaseBlocks drops a session's hold on its blocks; with
// DeleteSuperseded, a block no session holds is deleted.
func (d *Directory) ReleaseBlocks(now sim.Time, keys []Key) error {
	for _, k := range keys {
		id, _ := d.find(k)
		if id == none {
			continue
		}
		d.links.at(id).holders--
		if d.links.at(id).holders <= 0 && d.cfg.DeleteSuperseded {
			d.deleteLink(now, id)
			d.stats.Removals++
		}
	}
	return d.after(now, "release-blocks")
}
