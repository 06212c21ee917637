package kvstore

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cespare/xxhash/v2"

	"github.com/kvcosim/kvcosim/memory"
)

// Contents keeps the objects' real bytes in functional mode: it writes an
// export's tokens into the byte store where the directory put them, reads
// an object back, and keeps an XXH64 of every region it writes, so that a
// read detects bytes that changed behind the directory's back (a media
// error, or the faults simrun verify injects).
type Contents struct {
	dir   *Directory
	store *memory.ByteStore
	sums  map[int64]uint64 // region index -> XXH64 of its bytes
}

// ErrCorrupt is wrapped by a read whose region checksum fails.
var ErrCorrupt = errors.New("region checksum mismatch")

// ErrNotStored is wrapped by a read of a key the directory does not hold.
var ErrNotStored = errors.New("not stored")

// NewContents keeps the directory's objects in store, which must read
// unwritten bytes as zeros (a region's checksum covers all its bytes).
func NewContents(dir *Directory, store *memory.ByteStore) (*Contents, error) {
	if err := functionalShape(dir.cfg.Shape); err != nil {
		return nil, err
	}
	return &Contents{dir: dir, store: store, sums: map[int64]uint64{}}, nil
}

// Write stores tokens [w.From, w.Key.Tokens) of data where the directory
// put the object w names, and refreshes the checksums of the regions it
// touched.
func (c *Contents) Write(w Written, data *KVData) error {
	pieces, ok := c.dir.Pieces(w.Key, w.From)
	if !ok {
		return fmt.Errorf("fpga: write of %v: %w", w.Key, ErrNotStored)
	}
	var touched []int64
	for _, p := range pieces {
		b, err := c.dir.cfg.Layout.Encode(c.dir.cfg.Shape, p, data)
		if err != nil {
			return err
		}
		for _, e := range p.Extents {
			if err := c.store.Write(e.Addr, b[:e.Bytes]); err != nil {
				return err
			}
			b = b[e.Bytes:]
			touched = c.regions(e, touched)
		}
	}
	for _, r := range touched {
		b, err := c.region(r)
		if err != nil {
			return err
		}
		c.sums[r] = xxhash.Sum64(b)
	}
	return nil
}

// Read fills tokens [from, k.Tokens) of data with the object stored under
// k, after checking the checksum of every region it reads; the error wraps
// ErrNotStored or ErrCorrupt (naming the region) when the bytes cannot be
// trusted.
func (c *Contents) Read(k Key, from int64, data *KVData) error {
	pieces, ok := c.dir.Pieces(k, from)
	if !ok {
		return fmt.Errorf("fpga: read of %v: %w", k, ErrNotStored)
	}
	var touched []int64
	for _, p := range pieces {
		for _, e := range p.Extents {
			touched = c.regions(e, touched)
		}
	}
	// each region is read once: checked whole, then the extents are cut from it
	held := map[int64][]byte{}
	for _, r := range touched {
		b, err := c.region(r)
		if err != nil {
			return err
		}
		if want, ok := c.sums[r]; !ok || want != xxhash.Sum64(b) {
			return fmt.Errorf("fpga: read of %v: region %d at %#x: %w", k, r, r*c.dir.cfg.RegionBytes, ErrCorrupt)
		}
		held[r] = b
	}
	for _, p := range pieces {
		var b []byte
		for _, e := range p.Extents {
			b = c.cut(held, e, b)
		}
		if err := c.dir.cfg.Layout.Decode(c.dir.cfg.Shape, p, b, data); err != nil {
			return err
		}
	}
	return nil
}

// cut appends extent e's bytes, taken from the regions read, to b (an
// extent may run on into the next region).
func (c *Contents) cut(held map[int64][]byte, e Extent, b []byte) []byte {
	rb := c.dir.cfg.RegionBytes
	for off, end := e.Addr, e.Addr+e.Bytes; off < end; {
		r := off / rb
		stop := min(end, (r+1)*rb)
		b = append(b, held[r][off-r*rb:stop-r*rb]...)
		off = stop
	}
	return b
}

// Corrupt flips the bits of one byte of the object stored under k (the
// piece'th extent's first byte, counting across pieces, modulo their
// number) without telling the checksums: a fault to be detected.
func (c *Contents) Corrupt(k Key, which int) error {
	pieces, ok := c.dir.Pieces(k, 0)
	if !ok {
		return fmt.Errorf("fpga: corrupt %v: %w", k, ErrNotStored)
	}
	var extents []Extent
	for _, p := range pieces {
		extents = append(extents, p.Extents...)
	}
	e := extents[which%len(extents)]
	b, err := c.store.Read(e.Addr, 1)
	if err != nil {
		return err
	}
	return c.store.Write(e.Addr, []byte{^b[0]})
}

// regions adds the regions extent e touches to the set.
func (c *Contents) regions(e Extent, set []int64) []int64 {
	rb := c.dir.cfg.RegionBytes
	for r := e.Addr / rb; r <= (e.Addr+e.Bytes-1)/rb; r++ {
		if !slices.Contains(set, r) {
			set = append(set, r)
		}
	}
	return set
}

// region reads region r's bytes as stored.
func (c *Contents) region(r int64) ([]byte, error) {
	rb := c.dir.cfg.RegionBytes
	return c.store.Read(r*rb, rb)
}
