package memory

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

func TestByteStoreRoundTrip(t *testing.T) {
	s, err := NewByteStore("ssd", 1<<20, 4096, false)
	require.NoError(t, err)
	data := []byte("the KV cache of session 7, spanning a block boundary")
	require.NoError(t, s.Write(4096-10, data))
	got, err := s.Read(4096-10, int64(len(data)))
	require.NoError(t, err)
	assert.Equal(t, data, got)
	assert.Equal(t, int64(len(data)), s.WrittenBytes())

	_, err = s.Read(4096-11, 2)
	assert.EqualError(t, err, `byte store "ssd": byte 4085 was never written`)
	require.NoError(t, s.Forget(4096, 5))
	_, err = s.Read(4096-10, int64(len(data)))
	assert.EqualError(t, err, `byte store "ssd": byte 4096 was never written`)
	assert.ErrorContains(t, s.Write(1<<20-1, []byte{1, 2}), "outside its 1048576 bytes")
}

func TestByteStoreZeroFill(t *testing.T) {
	s, err := NewByteStore("hbm", 1<<16, 64, true)
	require.NoError(t, err)
	require.NoError(t, s.Write(100, []byte{9}))
	got, err := s.Read(98, 4)
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 0, 9, 0}, got)
}

func TestByteStoreRejects(t *testing.T) {
	_, err := NewByteStore("x", 1<<20, 1000, false)
	assert.ErrorContains(t, err, "block_bytes = 1000")
	_, err = NewByteStore("x", 0, 4096, false)
	assert.ErrorContains(t, err, "capacity")
}

// TestByteStoreAgainstReference applies random writes and forgets to the
// store and to a plain byte slice with a written mask, and compares reads.
func TestByteStoreAgainstReference(t *testing.T) {
	const capacity = 1 << 14
	s, err := NewByteStore("prop", capacity, 256, false)
	require.NoError(t, err)
	ref := make([]byte, capacity)
	written := make([]bool, capacity)
	r := sim.NewStreams(5).Stream("bytestore")
	for range 20000 {
		addr := r.Int64N(capacity - 600)
		n := 1 + r.Int64N(600)
		switch r.IntN(3) {
		case 0:
			data := make([]byte, n)
			for i := range data {
				data[i] = byte(r.Uint32())
			}
			require.NoError(t, s.Write(addr, data))
			copy(ref[addr:], data)
			for i := addr; i < addr+n; i++ {
				written[i] = true
			}
		case 1:
			require.NoError(t, s.Forget(addr, n))
			for i := addr; i < addr+n; i++ {
				written[i], ref[i] = false, 0
			}
		default:
			got, err := s.Read(addr, n)
			complete := true
			for i := addr; i < addr+n; i++ {
				complete = complete && written[i]
			}
			if !complete {
				require.Error(t, err)
				continue
			}
			require.NoError(t, err)
			require.True(t, bytes.Equal(ref[addr:addr+n], got))
		}
	}
	count := int64(0)
	for _, w := range written {
		if w {
			count++
		}
	}
	assert.Equal(t, count, s.WrittenBytes())
}

func TestDevicesKeepBytes(t *testing.T) {
	eng := sim.NewEngine(0)
	ssd, err := NewSSD(eng, KioxiaCM6())
	require.NoError(t, err)
	assert.Nil(t, ssd.Store(), "timing mode keeps no bytes")
	store, err := ssd.AttachStore(4096, false)
	require.NoError(t, err)
	require.Same(t, store, ssd.Store())
	require.NoError(t, store.Write(1<<40, []byte{1, 2, 3}))
	_, err = store.Read(1<<40, 4)
	assert.ErrorContains(t, err, "never written")

	hbm, err := NewDRAM(eng, DefaultExchangeMemory())
	require.NoError(t, err)
	zeros, err := hbm.AttachStore(64, true)
	require.NoError(t, err)
	got, err := zeros.Read(0, 8)
	require.NoError(t, err)
	assert.Equal(t, make([]byte, 8), got)
}
