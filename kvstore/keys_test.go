package kvstore

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHashTokensIsXXH64OfLittleEndianIDs(t *testing.T) {
	tokens := make([]uint32, 1000)
	buf := make([]byte, 4000)
	for i := range tokens {
		tokens[i] = uint32(i*7919 + 13)
		binary.LittleEndian.PutUint32(buf[4*i:], tokens[i])
	}
	assert.Equal(t, xxhash.Sum64(buf), HashTokens(0, tokens))
	d := xxhash.NewWithSeed(42)
	d.Write(buf)
	assert.Equal(t, d.Sum64(), HashTokens(42, tokens))
	assert.NotEqual(t, HashTokens(0, tokens), HashTokens(0, tokens[:999]))
}

func TestBlockKeysChainThePrefix(t *testing.T) {
	a := make([]uint32, 1300)
	for i := range a {
		a[i] = uint32(i)
	}
	b := append([]uint32(nil), a...)
	b[700] = 99999 // differs in block 1
	ka, kb := BlockKeys(7, a, 512), BlockKeys(7, b, 512)
	assert.Len(t, ka, 2, "the partial third block has no key")
	assert.Equal(t, ka[0], kb[0], "same first block")
	assert.NotEqual(t, ka[1], kb[1])
	assert.Equal(t, int64(1024), ka[1].Tokens)
	// the same block contents after a different prefix get a different key
	c := append(append([]uint32(nil), b[:512]...), a[512:1024]...)
	c[0] = 5
	assert.NotEqual(t, ka[1], BlockKeys(7, c, 512)[1])
}

func TestTraceBlockKeys(t *testing.T) {
	assert.Equal(t, []Key{{512, 10}, {1024, 11}, {1100, 12}}, TraceBlockKeys([]uint64{10, 11, 12}, 512, 1100))
}

// TestHistoryKeysArePatentKeys holds HistoryKeys against PatentKey over
// random histories: grown in place (in the array's room, or by append's
// copies), cut at the front, copied, shortened, and with another seed.
func TestHistoryKeysArePatentKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		var h HistoryKeys
		seed := uint64(trial % 3)
		history := make([]uint32, 0, rng.IntN(64))
		for step := range 200 {
			switch op := rng.IntN(10); {
			case op < 6: // grow at the end
				for range rng.IntN(40) {
					history = append(history, rng.Uint32())
				}
			case op == 6 && len(history) > 0: // cut at the front
				history = history[rng.IntN(len(history)):]
			case op == 7: // copied into another array
				history = append(make([]uint32, 0, len(history)+rng.IntN(64)), history...)
			case op == 8 && len(history) > 0: // a shorter history in the same array
				history = history[:rng.IntN(len(history))]
				history = history[:len(history):len(history)] // grown again, it moves
			case op == 9:
				seed++
			}
			require.Equal(t, PatentKey(seed, history), h.Key(seed, history), "trial %d step %d", trial, step)
		}
	}
}

// TestWriteTokensHashesTheSameInPlaceOrThroughABuffer: the in-place path
// (a little-endian machine) and the buffer's (any other) hash the same,
// across the buffer's 64-id boundary.
func TestWriteTokensHashesTheSameInPlaceOrThroughABuffer(t *testing.T) {
	ids := make([]uint32, 1000)
	for i := range ids {
		ids[i] = uint32(i)*2654435761 + 7
	}
	defer func(was bool) { littleEndian = was }(littleEndian)
	for _, n := range []int{0, 1, 63, 64, 65, 1000} {
		littleEndian = true
		inPlace := HashTokens(9, ids[:n])
		littleEndian = false
		assert.Equal(t, inPlace, HashTokens(9, ids[:n]), "%d ids", n)
	}
}
