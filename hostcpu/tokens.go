package hostcpu

import (
	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/workloads"
)

// A session's history is its token ids when the workload gives them, and
// always its length: a trace without ids (Mooncake, Azure, RAGPulse) gives
// counts only, and its sessions stand in for their tokens with hashes of
// the session id, so that no two conversations share a key by accident.
// A trace that gives a session's prompt ids gives its outputs as counts
// only: outputIDs stands in for those the same way, so that the ids stay
// as many as the tokens.

// keys names what a session's KV is stored under: the patent's key of its
// history, a design's key by session (store.Design.DecoupledPositions),
// or the block keys of its prompt, hashed or as a trace gives them; and
// the stand-ins of a session whose workload gives counts, not ids.
type keys struct {
	seed        uint64
	blockTokens int64
	scheme      kvstore.Scheme
	bySession   bool
}

// keysOf are the keys of a run's configuration.
func keysOf(cfg Config) keys {
	return keys{seed: cfg.HashSeed, blockTokens: cfg.BlockTokens, scheme: cfg.Scheme, bySession: cfg.Design.DecoupledPositions}
}

// promptOf returns a turn's prompt (ids, nil without them) and its length.
// Where the workload lays a session's ids out in one array, the prompt is
// a piece of it (borrowed): nothing is copied. Otherwise the prompt
// extends the history in place, and grow extends it again with
// the outputs, in an array with room for the session's turns still to
// come: a session's ids are copied once, where copying the history twice
// a turn was a fifth of a cluster day's CPU. That is safe because ids are
// only ever written past the history's end: a slice of an older history
// (an export's ids) keeps its tokens, and a turn's prompt outlives its turn
// only in a session that has ended.
func (sess *session) promptOf(turn workloads.Turn) ([]uint32, int64) {
	n := sess.historyLen + turn.NewTokenCount
	if sess.tokenless {
		return nil, n
	}
	if ids, ok := sess.borrowed(sess.history, turn.NewTokens); ok {
		return ids, n
	}
	if room := int64(cap(sess.history) - len(sess.history)); room < turn.NewTokenCount+turn.OutputCount {
		sess.history = append(make([]uint32, 0, int64(len(sess.history))+sess.tokensToCome()), sess.history...)
	}
	return append(sess.history, turn.NewTokens...), n
}

// tokensToCome are the new and output tokens of the session's turns from
// the current one on.
func (sess *session) tokensToCome() int64 {
	n := int64(0)
	for _, t := range sess.plan.Turns[sess.turn:] {
		n += t.NewTokenCount + t.OutputCount
	}
	return n
}

// grow appends a finished turn's prompt and output (outputs tokens; their
// ids, nil when tokenless, else outputs of them) to the history.
func (sess *session) grow(prompt []uint32, promptLen, outputs int64, output []uint32) {
	sess.historyLen = promptLen + outputs
	if sess.tokenless {
		return
	}
	if ids, ok := sess.borrowed(prompt, output); ok {
		sess.history = ids
		return
	}
	sess.history = append(prompt, output...)
}

// borrowed returns ids followed by next, without a copy, when both lie in
// order at the start of the session's workload array (Session.Tokens): a
// piece of that array capped at its end, so that an append copies out
// rather than write into the workload. It is false when they do not:
// the workload gives no such array, truncation cut the history, or the
// outputs are not the workload's (functional mode generates its own).
func (sess *session) borrowed(ids, next []uint32) ([]uint32, bool) {
	all := sess.plan.Tokens
	at, end := len(ids), len(ids)+len(next)
	if end > len(all) || (at > 0 && &ids[0] != &all[0]) || (len(next) > 0 && &next[0] != &all[at]) {
		return nil, false
	}
	return all[:end:end], true
}

// outputIDs are the ids of a finished turn's outputs output tokens (nil
// for a token-less session): those generated (functional mode) or given
// (the synthetic workload), and for each the workload does not give (a
// sessions trace gives a count) a stand-in, the low 32 bits of the hash
// engine's XXH64 over (standInOutput, session id, position), the position
// counting from the session's first token, truncated ones included. As a
// model's output would be, a stand-in is the session's own, and the same
// token keeps its id when truncation drops older ones.
func (k keys) outputIDs(sess *session, promptLen int64, given []uint32, outputs int64) []uint32 {
	if sess.tokenless || int64(len(given)) >= outputs {
		return given
	}
	ids := append(make([]uint32, 0, outputs), given...)
	first := sess.cut + promptLen // the first output's position
	for i := int64(len(given)); i < outputs; i++ {
		ids = append(ids, uint32(k.sessionHash(sess, standInOutput, first+i, 0)))
	}
	return ids
}

// What a stand-in hash names: a history of some length, a block, a
// session's computed tokens, or an output token's id.
const (
	standInHistory = iota
	standInBlock
	standInSession
	standInOutput
)

// standIn is the hash standing in for a token-less session's content: the
// hash engine's XXH64 over (what, session id, value), and the tokens
// truncation has dropped, if any (the same length names other tokens).
func (k keys) standIn(sess *session, what uint32, value int64) uint64 {
	return k.sessionHash(sess, what, value, sess.cut)
}

// sessionHash is XXH64 over (what, session id, value) and, when cut > 0,
// cut.
func (k keys) sessionHash(sess *session, what uint32, value, cut int64) uint64 {
	id := uint64(sess.id)
	words := []uint32{what, uint32(id), uint32(id >> 32), uint32(value), uint32(uint64(value) >> 32)}
	if cut > 0 {
		words = append(words, uint32(cut), uint32(uint64(cut)>>32))
	}
	return kvstore.HashTokens(k.seed, words)
}

// patentKey is the patent's key of the session's history.
func (k keys) patentKey(sess *session) kvstore.Key {
	if sess.tokenless {
		return kvstore.Key{Tokens: sess.historyLen, Hash: k.standIn(sess, standInHistory, sess.historyLen)}
	}
	return sess.keyed.Key(k.seed, sess.history)
}

// hashedBlocks are the block keys of the whole blocks of a prompt or
// history of n tokens (ids, or nil for a token-less session).
func (k keys) hashedBlocks(sess *session, ids []uint32, n int64) []kvstore.Key {
	if !sess.tokenless {
		return kvstore.BlockKeys(k.seed, ids, int(k.blockTokens))
	}
	chain := make([]uint64, n/k.blockTokens)
	for i := range chain {
		chain[i] = k.standIn(sess, standInBlock, int64(i))
	}
	return kvstore.TraceBlockKeys(chain, int(k.blockTokens), n)
}

// blockKeys are the prompt's block keys: from the trace, or hashed.
func (k keys) blockKeys(sess *session, prompt []uint32, promptLen int64) []kvstore.Key {
	if ids := sess.plan.Turns[sess.turn].BlockKeys; len(ids) > 0 && sess.cut == 0 {
		return kvstore.TraceBlockKeys(ids, int(k.blockTokens), promptLen)
	}
	return k.hashedBlocks(sess, prompt, promptLen)
}

// traceKeys are the block keys a trace gave for the session's last turn.
func (k keys) traceKeys(sess *session) []kvstore.Key {
	last := sess.plan.Turns[sess.turn-1]
	if len(last.BlockKeys) == 0 || sess.cut > 0 {
		return nil
	}
	return kvstore.TraceBlockKeys(last.BlockKeys, int(k.blockTokens), sess.historyLen-last.OutputCount)
}

// sessionKey is the key of a design that indexes objects by session
// (CachedAttention): the session and the number of tokens it has ever
// computed, which truncation does not change.
func (k keys) sessionKey(sess *session) kvstore.Key {
	total := sess.historyLen + sess.cut
	return kvstore.Key{Tokens: total, Hash: k.sessionHash(sess, standInSession, total, 0)}
}

// objectKey is what the design stores a session's history under.
func (k keys) objectKey(sess *session) kvstore.Key {
	if k.bySession {
		return k.sessionKey(sess)
	}
	return k.patentKey(sess)
}

// object is what a request looks for: the session's patent key, or the
// prompt's block keys.
func (k keys) object(r *request) kvstore.Object {
	if k.scheme == kvstore.SchemeBlock {
		return kvstore.Object{Blocks: r.blockKeys}
	}
	return kvstore.Object{Key: k.objectKey(r.sess)}
}
