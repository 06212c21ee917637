package accel

import "fmt"

// KVMemory is the accelerator's KV cache memory, paged in blocks of
// BlockTokens tokens (as vLLM's PagedAttention): a sequence holds whole
// blocks for its tokens. It decides how many sessions can keep their KV
// resident between turns.
type KVMemory struct {
	blockTokens   int64
	bytesPerBlock int64
	total, free   int64
	held          map[int64]int64 // blocks per sequence
}

// NewKVMemory divides capacityBytes into blocks of blockTokens tokens of
// bytesPerToken each.
func NewKVMemory(capacityBytes, bytesPerToken, blockTokens int64) (*KVMemory, error) {
	if blockTokens < 1 || blockTokens > 1<<20 {
		return nil, fmt.Errorf("kv block_tokens = %d: must be in [1, 1048576]", blockTokens)
	}
	if bytesPerToken < 1 {
		return nil, fmt.Errorf("kv bytes per token = %d: must be positive", bytesPerToken)
	}
	blocks := capacityBytes / (bytesPerToken * blockTokens)
	if blocks < 1 {
		return nil, fmt.Errorf("kv memory of %d B holds no block of %d tokens x %d B", capacityBytes, blockTokens, bytesPerToken)
	}
	return &KVMemory{blockTokens: blockTokens, bytesPerBlock: bytesPerToken * blockTokens, total: blocks, free: blocks, held: map[int64]int64{}}, nil
}

// BlocksFor returns the blocks that tokens need.
func (m *KVMemory) BlocksFor(tokens int64) int64 { return (tokens + m.blockTokens - 1) / m.blockTokens }

// Extra returns the blocks sequence seq must add to hold tokens.
func (m *KVMemory) Extra(seq, tokens int64) int64 { return max(0, m.BlocksFor(tokens)-m.held[seq]) }

// Reserve grows sequence seq to hold tokens; it fails, changing nothing,
// when too few blocks are free.
func (m *KVMemory) Reserve(seq, tokens int64) error {
	extra := m.Extra(seq, tokens)
	if extra > m.free {
		return fmt.Errorf("kv memory: sequence %d needs %d more blocks, %d free", seq, extra, m.free)
	}
	m.free -= extra
	m.held[seq] += extra
	return nil
}

// Release frees every block of sequence seq and returns how many.
func (m *KVMemory) Release(seq int64) int64 {
	n := m.held[seq]
	delete(m.held, seq)
	m.free += n
	return n
}

// Holds reports whether seq holds blocks.
func (m *KVMemory) Holds(seq int64) bool { return m.held[seq] > 0 }

// Free returns the free blocks; Total all of them.
func (m *KVMemory) Free() int64  { return m.free }
func (m *KVMemory) Total() int64 { return m.total }

// Occupancy is the fraction of blocks in use.
func (m *KVMemory) Occupancy() float64 { return float64(m.total-m.free) / float64(m.total) }

// BlockTokens returns the tokens per block.
func (m *KVMemory) BlockTokens() int64 { return m.blockTokens }

// Audit checks the blocks' accounts: the free blocks are within [0,
// total] and the blocks held add up to those not free; and, at the end of
// a run, that every sequence still holding blocks is retained (kept by
// retained), none left to a request that has ended.
func (m *KVMemory) Audit(retained func(seq int64) bool) error {
	var held int64
	for seq, n := range m.held {
		held += n
		if n < 1 || !retained(seq) {
			return fmt.Errorf("kv memory: sequence %d holds %d blocks and is not retained", seq, n)
		}
	}
	if m.free < 0 || m.free > m.total || held != m.total-m.free {
		return fmt.Errorf("kv memory: %d blocks held, %d free of %d", held, m.free, m.total)
	}
	return nil
}
