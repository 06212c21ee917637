package memory

import (
	"fmt"
	"math/bits"
)

// ByteStore keeps the real bytes of a device for functional mode: sparse,
// in blocks allocated on first write, with a record of which bytes were
// written so that reading bytes never written is an error (or zeros, when
// the device is configured so).
type ByteStore struct {
	name       string
	capacity   int64
	blockBytes int64
	zeroFill   bool
	blocks     map[int64]*storeBlock
}

type storeBlock struct {
	data    []byte
	written []uint64 // one bit per byte
}

// NewByteStore returns an empty store of capacity bytes in blocks of
// blockBytes (a power of two). With zeroFill, unwritten bytes read as zero.
func NewByteStore(name string, capacity, blockBytes int64, zeroFill bool) (*ByteStore, error) {
	if blockBytes < 64 || blockBytes&(blockBytes-1) != 0 {
		return nil, fmt.Errorf("byte store %q: block_bytes = %d: must be a power of two >= 64", name, blockBytes)
	}
	if capacity <= 0 {
		return nil, fmt.Errorf("byte store %q: capacity = %d B: must be positive", name, capacity)
	}
	return &ByteStore{name: name, capacity: capacity, blockBytes: blockBytes, zeroFill: zeroFill, blocks: map[int64]*storeBlock{}}, nil
}

func (s *ByteStore) check(addr, n int64) error {
	if addr < 0 || n < 0 || addr+n > s.capacity {
		return fmt.Errorf("byte store %q: range [%d, %d) outside its %d bytes", s.name, addr, addr+n, s.capacity)
	}
	return nil
}

// each calls f for every block piece of [addr, addr+n): the block, the
// offset in it, and the offset in the caller's buffer.
func (s *ByteStore) each(addr, n int64, f func(index, off, bufOff, length int64)) {
	for done := int64(0); done < n; {
		a := addr + done
		index, off := a/s.blockBytes, a%s.blockBytes
		length := min(s.blockBytes-off, n-done)
		f(index, off, done, length)
		done += length
	}
}

// Write stores data at addr.
func (s *ByteStore) Write(addr int64, data []byte) error {
	if err := s.check(addr, int64(len(data))); err != nil {
		return err
	}
	s.each(addr, int64(len(data)), func(index, off, bufOff, length int64) {
		b := s.blocks[index]
		if b == nil {
			b = &storeBlock{data: make([]byte, s.blockBytes), written: make([]uint64, (s.blockBytes+63)/64)}
			s.blocks[index] = b
		}
		copy(b.data[off:off+length], data[bufOff:bufOff+length])
		for i := off; i < off+length; i++ {
			b.written[i/64] |= 1 << (i % 64)
		}
	})
	return nil
}

// Read returns n bytes at addr. A byte never written is an error naming
// its address, unless the store fills with zeros.
func (s *ByteStore) Read(addr, n int64) ([]byte, error) {
	if err := s.check(addr, n); err != nil {
		return nil, err
	}
	out := make([]byte, n)
	var missing int64 = -1
	s.each(addr, n, func(index, off, bufOff, length int64) {
		b := s.blocks[index]
		if b != nil {
			copy(out[bufOff:bufOff+length], b.data[off:off+length])
		}
		if missing >= 0 || s.zeroFill {
			return
		}
		for i := off; i < off+length; i++ {
			if b == nil || b.written[i/64]&(1<<(i%64)) == 0 {
				missing = index*s.blockBytes + i
				return
			}
		}
	})
	if missing >= 0 {
		return nil, fmt.Errorf("byte store %q: byte %d was never written", s.name, missing)
	}
	return out, nil
}

// Forget discards the bytes of [addr, addr+n), as a deallocation (TRIM)
// does; reading them again is an error (or zeros).
func (s *ByteStore) Forget(addr, n int64) error {
	if err := s.check(addr, n); err != nil {
		return err
	}
	s.each(addr, n, func(index, off, _, length int64) {
		b := s.blocks[index]
		if b == nil {
			return
		}
		for i := off; i < off+length; i++ {
			b.written[i/64] &^= 1 << (i % 64)
			b.data[i] = 0
		}
		if isEmpty(b.written) {
			delete(s.blocks, index)
		}
	})
	return nil
}

func isEmpty(mask []uint64) bool {
	for _, w := range mask {
		if w != 0 {
			return false
		}
	}
	return true
}

// WrittenBytes returns how many bytes hold written data.
func (s *ByteStore) WrittenBytes() int64 {
	total := 0
	for _, b := range s.blocks {
		for _, w := range b.written {
			total += bits.OnesCount64(w)
		}
	}
	return int64(total)
}

// deviceStore is embedded by devices that can keep real bytes: the store is
// absent in timing mode and attached for functional mode.
type deviceStore struct {
	store *ByteStore
}

// attach gives the device a byte store of its capacity, in blocks of
// blockBytes, and returns it.
func (d *deviceStore) attach(name string, capacity, blockBytes int64, zeroFill bool) (*ByteStore, error) {
	s, err := NewByteStore(name, capacity, blockBytes, zeroFill)
	if err != nil {
		return nil, err
	}
	d.store = s
	return s, nil
}

// Store returns the device's byte store, or nil in timing mode.
func (d *deviceStore) Store() *ByteStore { return d.store }
