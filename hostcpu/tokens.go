package hostcpu

import (
	"github.com/kvcosim/kvcosim/accel/kernels"
	"github.com/kvcosim/kvcosim/fpga"
	"github.com/kvcosim/kvcosim/workloads"
)

// A session's history is its token ids when the workload gives them, and
// always its length: a trace without ids (Mooncake, Azure, RAGPulse) gives
// counts only, and its sessions stand in for their tokens with hashes of
// the session id, so that no two conversations share a key by accident.

// promptOf returns a turn's prompt (ids, nil without them) and its length.
func (sess *session) promptOf(turn workloads.Turn) ([]uint32, int64) {
	n := sess.historyLen + turn.NewTokenCount
	if sess.tokenless {
		return nil, n
	}
	return append(append([]uint32(nil), sess.history...), turn.NewTokens...), n
}

// grow appends a finished turn's prompt and output to the history.
func (sess *session) grow(prompt []uint32, promptLen int64, turn workloads.Turn) {
	sess.historyLen = promptLen + turn.OutputCount
	if !sess.tokenless {
		sess.history = append(prompt, turn.Output...)
	}
}

// standIn is the hash standing in for a token-less session's content.
func (s *System) standIn(sess *session, salt uint64) uint64 {
	return kernels.Mix64(kernels.Mix64(s.cfg.HashSeed^uint64(sess.id)) ^ salt)
}

// patentKey is the patent's key of the session's history.
func (s *System) patentKey(sess *session) fpga.Key {
	if sess.tokenless {
		return fpga.Key{Tokens: sess.historyLen, Hash: s.standIn(sess, uint64(sess.historyLen))}
	}
	return fpga.PatentKey(s.cfg.HashSeed, sess.history)
}

// hashedBlocks are the block keys of the whole blocks of a prompt or
// history of n tokens (ids, or nil for a token-less session).
func (s *System) hashedBlocks(sess *session, ids []uint32, n int64) []fpga.Key {
	if !sess.tokenless {
		return fpga.BlockKeys(s.cfg.HashSeed, ids, int(s.cfg.BlockTokens))
	}
	chain := make([]uint64, n/s.cfg.BlockTokens)
	for i := range chain {
		chain[i] = s.standIn(sess, uint64(i)<<1|1) // odd salts: never a history length's
	}
	return fpga.TraceBlockKeys(chain, int(s.cfg.BlockTokens), n)
}
