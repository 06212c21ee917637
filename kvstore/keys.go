package kvstore

import (
	"encoding/binary"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// Key identifies a stored object: in the patent scheme the number of
// computed tokens and the XXH64 of all of them (claims 3-5); in the block
// scheme a block's end position and its prefix-chained hash.
type Key struct {
	Tokens int64
	Hash   uint64
}

// HashTokens returns XXH64 (with seed) of token ids as little-endian uint32.
func HashTokens(seed uint64, tokens []uint32) uint64 {
	d := xxhash.NewWithSeed(seed)
	writeTokens(d, tokens)
	return d.Sum64()
}

// littleEndian is whether the machine keeps a uint32 in memory as its
// little-endian bytes, so that writeTokens can hash the ids in place.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// writeTokens hashes the ids as little-endian uint32s: on a little-endian
// machine their own bytes (a day of a cluster hashes about a billion ids,
// and copying each into a buffer first was half the hashing's time),
// otherwise through a buffer.
func writeTokens(d *xxhash.Digest, tokens []uint32) {
	if littleEndian && len(tokens) > 0 {
		d.Write(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(tokens))), 4*len(tokens)))
		return
	}
	var buf [256]byte
	for len(tokens) > 0 {
		n := min(len(tokens), len(buf)/4)
		for i, t := range tokens[:n] {
			binary.LittleEndian.PutUint32(buf[4*i:], t)
		}
		d.Write(buf[:4*n])
		tokens = tokens[n:]
	}
}

// PatentKey is the key of a session version with these computed tokens.
func PatentKey(seed uint64, tokens []uint32) Key {
	return Key{Tokens: int64(len(tokens)), Hash: HashTokens(seed, tokens)}
}

// HistoryKeys keys a token history that grows at its end, PatentKey of
// the tokens given, hashing each token once however often the history is
// keyed (a session's is keyed at its every lookup and export). A history
// in another array than the last one keyed (a copy, or one cut at its
// front) is hashed from its start; the tokens already hashed must not
// change in place. The zero value is ready to use.
type HistoryKeys struct {
	d      xxhash.Digest
	seed   uint64
	first  *uint32 // the last keyed history's first token
	hashed int     // how many of its tokens d has taken
}

// Key is PatentKey(seed, tokens).
func (h *HistoryKeys) Key(seed uint64, tokens []uint32) Key {
	if len(tokens) == 0 {
		return PatentKey(seed, tokens)
	}
	if &tokens[0] != h.first || seed != h.seed || len(tokens) < h.hashed {
		h.d.ResetWithSeed(seed)
		h.seed, h.first, h.hashed = seed, &tokens[0], 0
	}
	writeTokens(&h.d, tokens[h.hashed:])
	h.hashed = len(tokens)
	return Key{Tokens: int64(len(tokens)), Hash: h.d.Sum64()}
}

// BlockKeys cuts tokens into whole blocks of blockTokens and keys block i by
// XXH64(seed, LE64(hash of block i-1) || tokens of block i), with the hash
// of block -1 taken as 0, and by its end position. A trailing partial block
// has no key: only whole blocks are stored.
func BlockKeys(seed uint64, tokens []uint32, blockTokens int) []Key {
	keys := make([]Key, 0, len(tokens)/blockTokens)
	prev := uint64(0)
	var le [8]byte
	for end := blockTokens; end <= len(tokens); end += blockTokens {
		d := xxhash.NewWithSeed(seed)
		binary.LittleEndian.PutUint64(le[:], prev)
		d.Write(le[:])
		writeTokens(d, tokens[end-blockTokens:end])
		prev = d.Sum64()
		keys = append(keys, Key{Tokens: int64(end), Hash: prev})
	}
	return keys
}

// TraceBlockKeys keys blocks by ids a trace gives (Mooncake hash_ids: each
// id names the whole prefix up to its block). The last id covers a partial
// block when inputTokens is not a multiple of blockTokens; its end position
// is inputTokens.
func TraceBlockKeys(ids []uint64, blockTokens int, inputTokens int64) []Key {
	keys := make([]Key, len(ids))
	for i, id := range ids {
		keys[i] = Key{Tokens: min(int64(i+1)*int64(blockTokens), inputTokens), Hash: id}
	}
	return keys
}
