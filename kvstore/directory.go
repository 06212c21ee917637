package kvstore

import (
	"fmt"
	"slices"

	"github.com/google/btree"

	"github.com/kvcosim/kvcosim/internal/names"
	"github.com/kvcosim/kvcosim/sim"
)

// Scheme is how stored objects are keyed.
type Scheme int

const (
	// SchemePatent keys one object per session version by (number of
	// computed tokens, XXH64 of all of them): claims 3-8 as written.
	SchemePatent Scheme = iota
	// SchemeBlock keys fixed blocks of tokens by their prefix-chained hash
	// and end position, shared between sessions (as vLLM and Mooncake).
	SchemeBlock
)

// Schemes names the values of Scheme: Names lists them, Parse reads one.
var Schemes = names.New("hashing scheme", map[Scheme]string{SchemePatent: "patent", SchemeBlock: "block"})

// String returns the scheme's name.
func (s Scheme) String() string { return Schemes.Name(s) }

// AllocPolicy chooses between the two free-address FIFOs (claim 10).
type AllocPolicy int

const (
	// FIFO1First takes long-idle regions first.
	FIFO1First AllocPolicy = iota
	// FIFO2First takes recently freed regions first.
	FIFO2First
	// Proportional takes from each FIFO in proportion to what it holds.
	Proportional
)

// AllocPolicies names the values of AllocPolicy: Names lists them, Parse reads one.
var AllocPolicies = names.New("alloc policy", map[AllocPolicy]string{
	FIFO1First:   "fifo1-first",
	FIFO2First:   "fifo2-first",
	Proportional: "proportional",
})

// String returns the policy's name.
func (p AllocPolicy) String() string { return AllocPolicies.Name(p) }

// ExportMode is how an export writes a session's new version.
type ExportMode int

const (
	// ExportFull rewrites the whole object in fresh regions.
	ExportFull ExportMode = iota
	// ExportDelta writes only the new tokens, sharing the previous
	// version's segments (and appending into its last one's spare room).
	ExportDelta
)

// ExportModes names the values of ExportMode: Names lists them, Parse reads one.
var ExportModes = names.New("export mode", map[ExportMode]string{ExportFull: "full", ExportDelta: "delta"})

// String returns the mode's name.
func (m ExportMode) String() string { return ExportModes.Name(m) }

// DirectoryConfig sets up the functional store.
type DirectoryConfig struct {
	Scheme      Scheme
	BlockTokens int64
	// BucketsLog2: the address-mapping table has 2^BucketsLog2 buckets.
	BucketsLog2  int
	RegionBytes  int64
	StorageBytes int64
	// FreeDelay is the patent's preset time T: a freed region stays in
	// FIFO 2 until it has held no data for T, then moves to FIFO 1.
	FreeDelay sim.Time
	Policy    AllocPolicy
	// DeleteSuperseded deletes a session's previous version at export.
	DeleteSuperseded bool
	// TTL deletes links not accessed for this long; 0 keeps them.
	TTL    sim.Time
	Layout Layout
	Mode   ExportMode
	Shape  KVShape
	// CheckInvariants runs Check after every operation.
	CheckInvariants bool
}

// Validate checks the configuration; errors name the parameter.
func (c DirectoryConfig) Validate() error {
	switch {
	case c.BucketsLog2 < 1 || c.BucketsLog2 > 30:
		return fmt.Errorf("fpga: buckets = 2^%d: must be a power of two from 2 to 2^30", c.BucketsLog2)
	case c.RegionBytes <= 0:
		return fmt.Errorf("fpga: region_bytes = %d: must be positive", c.RegionBytes)
	case c.StorageBytes < c.RegionBytes:
		return fmt.Errorf("fpga: storage_bytes = %d: smaller than one %d B region", c.StorageBytes, c.RegionBytes)
	case c.StorageBytes/c.RegionBytes > 1<<31-1:
		return fmt.Errorf("fpga: storage_bytes = %d: more than 2^31 regions", c.StorageBytes)
	case c.FreeDelay < 0 || c.TTL < 0:
		return fmt.Errorf("fpga: free_delay = %v and ttl = %v must not be negative", c.FreeDelay, c.TTL)
	case c.Scheme == SchemeBlock && c.BlockTokens < 1:
		return fmt.Errorf("fpga: block_tokens = %d: must be positive", c.BlockTokens)
	}
	return c.Shape.Validate()
}

const none = -1

// segment is a run of token slots [start, start+cap) of one or more
// objects, in its own regions. Objects of later versions share the
// segments of earlier ones (delta export); refs counts the links that do.
// Its first region is kept inline; more go in the directory's region
// lists (extra), so that a one-region object costs no allocation. Its
// token positions are int64: an object of a model without a context window
// passes 2^31 tokens, and a delta segment's room (its regions over the
// bytes per token: one 16 GiB region of a 6 B-a-token object holds 2.9e9)
// can too, where int32 wrapped to negative addresses.
type segment struct {
	start, cap int64
	prev       int32 // the segment holding the tokens before start
	refs       int32
	region0    int32
	nRegions   int32
	extra      int32 // index of the list of regions 1.., or none
}

// link is one chain link of claim 5: the key (number of computed tokens and
// their hash), the object's descriptor (its last segment; the physical
// address of the cache data is that chain's first region), the previous and
// next links of its bucket's chain, and the last access time.
type link struct {
	key        Key
	prev, next int32
	lastAccess sim.Time
	touched    uint64 // the number of its last access, in access order
	lruKey     uint64 // the access number its LRU entry is filed under
	lastSeg    int32
	holders    int32 // block scheme: sessions referencing the block
}

// lruItem files a link in least-recently-used order by an access number.
// Time never goes backwards, so the order of accesses is the order of
// access times, with a deterministic order among accesses at the same
// picosecond. Entries are refreshed lazily: an access only renumbers the
// link, and the eviction and expiry re-file a stale minimum before using
// it, so a lookup costs no tree update.
type lruItem struct {
	touched uint64
	id      int32
}

func lruLess(a, b lruItem) bool { return a.touched < b.touched }

type fifo2Entry struct {
	region  int32
	freedAt sim.Time
}

// Region states, for the invariant check.
const (
	inFIFO1 uint8 = iota
	inFIFO2
	inUse
)

// Directory is the FPGA's functional state: the address-mapping table, the
// chain links, the segments and the two free-address FIFOs. Every method
// takes the simulated time, for access times, TTLs and the FIFO 2 delay.
type Directory struct {
	cfg      DirectoryConfig
	buckets  []int32 // head link of each bucket's chain
	links    arena[link]
	live     int
	accesses uint64 // access counter for the LRU order
	segs     arena[segment]
	lists    arena[[]int32]
	lru      *btree.BTreeG[lruItem]

	regionState []uint8 // of the regions used at least once
	fifo1       fifo1Queue
	fifo2       sim.FIFO[fifo2Entry]

	stats     DirectoryStats
	tracer    *sim.Tracer
	component string
	// demote takes each object evicted to make room (a pool's tier).
	demote func(now sim.Time, v Victim)
	// keep, when set, names objects eviction passes over (Pool.SetKeep)
	keep func(Key) bool
}

// DirectoryStats counts what the directory did. Every link deleted is
// an eviction (to make room), an expiration (its TTL) or a removal (by
// name: a superseded version, a block no session holds any more, a
// Delete), and Check holds that ledger.
type DirectoryStats struct {
	Inserts, Deletes, Evictions, Expirations, Removals int64
	Lookups, Hits, Hops                                int64
	RegionsAllocated, RegionsFreed                     int64
	FromFIFO1, FromFIFO2                               int64
	// Checks counts invariant checks run.
	Checks int64
}

// NewDirectory returns an empty directory with every region in FIFO 1.
func NewDirectory(cfg DirectoryConfig) (*Directory, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Directory{cfg: cfg, buckets: make([]int32, 1<<cfg.BucketsLog2),
		lru: btree.NewG(32, lruLess), fifo1: fifo1Queue{total: int32(cfg.StorageBytes / cfg.RegionBytes)}}
	for i := range d.buckets {
		d.buckets[i] = none
	}
	return d, nil
}

// Config returns the configuration.
func (d *Directory) Config() DirectoryConfig { return d.cfg }

// Stats returns the counters.
func (d *Directory) Stats() DirectoryStats { return d.stats }

// Links returns the number of stored links.
func (d *Directory) Links() int { return d.live }

// FIFOLevels returns the regions in FIFO 1 and FIFO 2.
func (d *Directory) FIFOLevels() (fifo1, fifo2 int) { return d.fifo1.Len(), d.fifo2.Len() }

// Regions returns the number of regions of external storage.
func (d *Directory) Regions() int { return int(d.fifo1.total) }

// fifo1Queue is FIFO 1. Every region starts in it, in address order; those
// never used are handed out from a counter, so that a store of billions of
// regions costs nothing until it is used; regions that matured out of
// FIFO 2 queue behind them, as if all had been pushed at the start.
type fifo1Queue struct {
	next, total int32
	matured     sim.FIFO[int32]
}

func (q *fifo1Queue) Len() int { return int(q.total-q.next) + q.matured.Len() }

func (q *fifo1Queue) Push(r int32) { q.matured.Push(r) }

// take appends the next n regions to out: first those never used, in
// address order, then those that matured.
func (q *fifo1Queue) take(out []int32, n int64) []int32 {
	fresh := int32(min(n, int64(q.total-q.next)))
	for r := q.next; r < q.next+fresh; r++ {
		out = append(out, r)
	}
	q.next += fresh
	for range n - int64(fresh) {
		out = append(out, q.matured.Pop())
	}
	return out
}

// bucketOf is the hash address of a hash value (claim 4).
func (d *Directory) bucketOf(h uint64) int32 { return int32(h & uint64(len(d.buckets)-1)) }

// Bucket is the hash address of a hash value (claim 4): the bucket of the
// address-mapping table that a timed engine reads for it.
func (d *Directory) Bucket(h uint64) int32 { return d.bucketOf(h) }

// Buckets is the number of buckets of the address-mapping table.
func (d *Directory) Buckets() int { return len(d.buckets) }

// find walks the bucket's chain through next pointers; it returns the link
// with the key (or none) and the number of links visited.
func (d *Directory) find(k Key) (id int32, hops int) {
	for id = d.buckets[d.bucketOf(k.Hash)]; id != none; id = d.links.at(id).next {
		hops++
		if d.links.at(id).key == k {
			return id, hops
		}
	}
	return none, hops
}

// insertLink puts a new link at the head of its bucket's chain (claim 8:
// only prev/next pointers change).
func (d *Directory) insertLink(now sim.Time, k Key, lastSeg int32) int32 {
	b := d.bucketOf(k.Hash)
	head := d.buckets[b]
	d.accesses++
	id := d.links.alloc(link{key: k, prev: none, next: head, lastAccess: now, touched: d.accesses, lruKey: d.accesses, lastSeg: lastSeg})
	if head != none {
		d.links.at(head).prev = id
	}
	d.buckets[b] = id
	d.lru.ReplaceOrInsert(lruItem{d.accesses, id})
	d.live++
	d.stats.Inserts++
	return id
}

// deleteLink unlinks a link through its prev/next pointers and releases its
// object's segments.
func (d *Directory) deleteLink(now sim.Time, id int32) {
	l := d.links.at(id)
	if l.prev != none {
		d.links.at(l.prev).next = l.next
	} else {
		d.buckets[d.bucketOf(l.key.Hash)] = l.next
	}
	if l.next != none {
		d.links.at(l.next).prev = l.prev
	}
	d.lru.Delete(lruItem{l.lruKey, id})
	d.releaseChain(now, l.lastSeg)
	d.links.release(id)
	d.live--
	d.stats.Deletes++
}

func (d *Directory) touch(now sim.Time, id int32) {
	l := d.links.at(id)
	d.accesses++
	l.lastAccess, l.touched = max(l.lastAccess, now), d.accesses
}

// oldest returns the least recently used link, re-filing stale entries on
// the way: the minimum entry, once its key equals its link's last access,
// is the link with the oldest access of all.
func (d *Directory) oldest() (int32, bool) {
	for {
		item, ok := d.lru.Min()
		if !ok {
			return none, false
		}
		l := d.links.at(item.id)
		if l.touched == item.touched {
			return item.id, true
		}
		d.lru.Delete(item)
		l.lruKey = l.touched
		d.lru.ReplaceOrInsert(lruItem{l.touched, item.id})
	}
}

// region returns the i-th region of a segment.
func (d *Directory) region(seg *segment, i int) int32 {
	if i == 0 {
		return seg.region0
	}
	return (*d.lists.at(seg.extra))[i-1]
}

// holdChain adds a reference to every segment of a chain.
func (d *Directory) holdChain(s int32) {
	for ; s != none; s = d.segs.at(s).prev {
		d.segs.at(s).refs++
	}
}

// releaseChain drops a reference from every segment of a chain; a segment
// no link holds any more frees its regions into FIFO 2.
func (d *Directory) releaseChain(now sim.Time, s int32) {
	for s != none {
		seg := d.segs.at(s)
		prev := seg.prev
		seg.refs--
		if seg.refs == 0 {
			for i := range int(seg.nRegions) {
				r := d.region(seg, i)
				d.regionState[r] = inFIFO2
				d.fifo2.Push(fifo2Entry{r, now})
			}
			d.stats.RegionsFreed += int64(seg.nRegions)
			if seg.extra != none {
				d.lists.release(seg.extra)
			}
			d.segs.release(s)
		}
		s = prev
	}
}

// mature moves FIFO 2 entries that have held no data for the preset time
// to FIFO 1 (FIFO 2 is in order of freeing). It compares the time held
// with the delay: freedAt + FreeDelay wrapped past 83 days of simulated
// time with the largest delay, and matured every region at once.
func (d *Directory) mature(now sim.Time) {
	for d.fifo2.Len() > 0 && now-d.fifo2.Peek().freedAt >= d.cfg.FreeDelay {
		r := d.fifo2.Pop().region
		d.regionState[r] = inFIFO1
		d.fifo1.Push(r)
	}
}

// allocate takes n regions by the policy, evicting least recently used
// links while the FIFOs hold too few. It fails only when the store is too
// small for n regions even when empty.
func (d *Directory) allocate(now sim.Time, n int64) ([]int32, int, error) {
	if n > int64(d.Regions()) {
		return nil, 0, fmt.Errorf("store: an object of %d regions (%d B each) is larger than the whole store of %d regions",
			n, d.cfg.RegionBytes, d.Regions())
	}
	d.mature(now)
	evicted := 0
	for int64(d.fifo1.Len()+d.fifo2.Len()) < n {
		if !d.EvictLRU(now) {
			return nil, evicted, fmt.Errorf("store at %v: %d regions wanted, %d free and nothing left to evict",
				now, n, d.fifo1.Len()+d.fifo2.Len())
		}
		evicted++
	}
	from1 := n
	switch d.cfg.Policy {
	case FIFO2First:
		from1 = max(0, n-int64(d.fifo2.Len()))
	case Proportional:
		total := int64(d.fifo1.Len() + d.fifo2.Len())
		from1 = (n*int64(d.fifo1.Len()) + total/2) / total
	}
	from1 = min(from1, int64(d.fifo1.Len()))
	from1 = max(from1, n-int64(d.fifo2.Len()))
	out := d.fifo1.take(make([]int32, 0, n), from1)
	if used := int(d.fifo1.next); used > len(d.regionState) { // the regions used for the first time get a state (inUse, below)
		d.regionState = slices.Grow(d.regionState, used-len(d.regionState))[:used]
	}
	for int64(len(out)) < n {
		out = append(out, d.fifo2.Pop().region)
	}
	for _, r := range out {
		d.regionState[r] = inUse
	}
	d.stats.RegionsAllocated += n
	d.stats.FromFIFO1 += from1
	d.stats.FromFIFO2 += n - from1
	return out, evicted, nil
}

// newSegment allocates a segment for want tokens starting at start. In
// delta mode its capacity is every slot its regions hold, so that later
// versions can append into it; otherwise it is exactly want, so that the
// layout's runs of a whole object are contiguous.
func (d *Directory) newSegment(now sim.Time, start, want int64, prev int32) (int32, int, error) {
	bpt := d.cfg.Shape.BytesPerToken()
	n := d.regionsOf(want)
	regions, evicted, err := d.allocate(now, n)
	if err != nil {
		return none, evicted, err
	}
	capacity := want
	if d.cfg.Mode == ExportDelta && d.cfg.Scheme == SchemePatent {
		capacity = n * d.cfg.RegionBytes / bpt
	}
	seg := segment{start: start, cap: capacity, prev: prev, region0: regions[0], nRegions: int32(n), extra: none}
	if n > 1 {
		seg.extra = d.lists.alloc(regions[1:])
	}
	return d.segs.alloc(seg), evicted, nil
}

// regionsOf is the regions a segment of n tokens takes.
func (d *Directory) regionsOf(n int64) int64 {
	return (n*d.cfg.Shape.BytesPerToken() + d.cfg.RegionBytes - 1) / d.cfg.RegionBytes
}

// physical maps segment-relative extents to storage addresses, splitting
// at region boundaries and merging physically adjacent pieces.
func (d *Directory) physical(seg *segment, in []Extent, out []Extent) []Extent {
	r := d.cfg.RegionBytes
	for _, e := range in {
		for off, left := e.Addr, e.Bytes; left > 0; {
			idx := off / r
			n := min(left, (idx+1)*r-off)
			addr := int64(d.region(seg, int(idx)))*r + off - idx*r
			if last := len(out) - 1; last >= 0 && out[last].Addr+out[last].Bytes == addr {
				out[last].Bytes += n
			} else {
				out = append(out, Extent{Addr: addr, Bytes: n})
			}
			off += n
			left -= n
		}
	}
	return out
}

// segExtents returns the storage extents of tokens [t0, t1) of a segment.
func (d *Directory) segExtents(s int32, t0, t1 int64, out []Extent) []Extent {
	seg := d.segs.at(s)
	return d.physical(seg, d.cfg.Layout.extents(d.cfg.Shape, seg.cap, t0-seg.start, t1-seg.start), out)
}

// chainExtents returns the storage extents of tokens [0, tokens) of the
// object whose last segment is s, in token order.
func (d *Directory) chainExtents(s int32, tokens int64) []Extent {
	var chain []int32
	for ; s != none; s = d.segs.at(s).prev {
		chain = append(chain, s)
	}
	var out []Extent
	for i := len(chain) - 1; i >= 0; i-- {
		seg := d.segs.at(chain[i])
		out = d.segExtents(chain[i], seg.start, min(tokens, seg.start+seg.cap), out)
	}
	return out
}

// objectSpan returns the first token a link's object holds and its end.
func (d *Directory) objectSpan(id int32) (start, end int64) {
	l := d.links.at(id)
	if d.cfg.Scheme == SchemeBlock {
		return d.segs.at(l.lastSeg).start, l.key.Tokens
	}
	return 0, l.key.Tokens
}

// The directory's levels, by name: the free regions in each FIFO, the
// regions holding data, and the live links.
const (
	LevelFIFO1 = "fifo1_regions"
	LevelFIFO2 = "fifo2_regions"
	LevelInUse = "regions_in_use"
	LevelLinks = "links"
)

// Trace has the directory emit its levels to tr, as component, after every
// operation while tr has sinks: how reports draw storage occupancy and the
// FIFOs over time without an event of their own.
func (d *Directory) Trace(tr *sim.Tracer, component string) { d.tracer, d.component = tr, component }

// Levels returns the directory's levels at now, as the component its
// Trace names: a sink added after the start takes them as its initial
// values.
func (d *Directory) Levels(now sim.Time) sim.Level {
	f1, f2 := d.FIFOLevels()
	return sim.Level{Component: d.component, At: now, Values: []sim.Count{{Name: LevelFIFO1, Value: int64(f1)},
		{Name: LevelFIFO2, Value: int64(f2)}, {Name: LevelInUse, Value: int64(d.Regions() - f1 - f2)}, {Name: LevelLinks, Value: int64(d.live)}}}
}

// after runs the expiry and, when enabled, the invariant check, and emits
// the levels.
func (d *Directory) after(now sim.Time, op string) error {
	if d.tracer != nil && d.tracer.Enabled() {
		d.tracer.EmitLevel(d.Levels(now))
	}
	if d.cfg.CheckInvariants {
		return d.Check(now, op)
	}
	return nil
}

// BucketsLog2 converts a bucket count to the table's log2 size; the count
// must be a power of two of at least 2.
func BucketsLog2(buckets int64) (int, error) {
	if buckets < 2 || buckets&(buckets-1) != 0 || buckets > 1<<30 {
		return 0, fmt.Errorf("fpga: buckets = %d: must be a power of two from 2 to 2^30", buckets)
	}
	n := 0
	for ; buckets > 1; buckets >>= 1 {
		n++
	}
	return n, nil
}
