package hostcpu

import (
	"github.com/kvcosim/kvcosim/internal/names"
	"github.com/kvcosim/kvcosim/kvstore"
)

// ContextPolicy is what becomes of a request whose prompt and output pass
// the model's context window.
type ContextPolicy int

const (
	// ContextTruncate drops the history's oldest tokens until the request
	// fits (CachedAttention section 3.5; chat front ends do the same).
	ContextTruncate ContextPolicy = iota
	// ContextReject refuses the request, as vLLM refuses a prompt longer
	// than max_model_len; the session ends with it.
	ContextReject
)

// ContextPolicies names the values of ContextPolicy: Names lists them, Parse reads one.
var ContextPolicies = names.New("context policy", map[ContextPolicy]string{
	ContextTruncate: "truncate",
	ContextReject:   "reject",
})

// String returns the policy's name.
func (p ContextPolicy) String() string { return ContextPolicies.Name(p) }

// truncation is the context window's mechanism: a request whose prompt
// and output pass the model's window is cut from its history's front, or
// refused (workload.context_policy).
type truncation struct{ s *System }

// cutFor is how many tokens a truncation of a turn of promptLen prompt
// (historyLen of them history) and outputs output tokens must take: 0 when
// they fit the context window (or the model has none); else enough
// history more than they pass it by that prompt and output fill
// TruncateFillPermille of the window (CachedAttention cuts the oldest
// half), so that the next turns fit without another cut.
func (tr *truncation) cutFor(historyLen, promptLen, outputs int64) int64 {
	s := tr.s
	over := max(0, promptLen+outputs-s.cfg.ContextTokens)
	if s.cfg.ContextTokens == 0 || over == 0 {
		return 0
	}
	fill := s.cfg.ContextTokens * s.cfg.TruncateFillPermille / 1000
	return max(over, min(historyLen, promptLen+outputs-fill))
}

// fitWindow applies the context policy to a request about to be decided
// (v): it returns the verdict on the truncated request, or rejects it and
// returns false. A parked request is fitted when it is decided again.
func (tr *truncation) fitWindow(slot int, v verdict) (verdict, bool) {
	s := tr.s
	r := s.reqs.At(slot)
	cut := tr.cutFor(r.sess.historyLen, r.promptLen, r.rec.OutputTokens)
	if cut == 0 || v.action == park {
		return v, true
	}
	if !tr.truncate(r, cut) {
		s.decided(r, v.decision)
		s.reject(slot, RejectContextWindow)
		return v, false
	}
	return s.verdict(r), true
}

// truncate drops the oldest over tokens of the request's prompt, history
// first, and reports whether it could (the policy truncates and a token of
// the prompt is left). What was computed over the old history stays valid
// only for a design that stores KV without positions: elsewhere every
// kept token moved, so the resident KV is dropped and the stored versions
// no longer match the history (their keys change with it).
func (tr *truncation) truncate(r *request, over int64) bool {
	s := tr.s
	if s.cfg.ContextPolicy != ContextTruncate || over >= r.promptLen {
		return false
	}
	sess := r.sess
	fromHistory := min(over, sess.historyLen)
	sess.historyLen -= fromHistory
	if !sess.tokenless {
		sess.history = sess.history[fromHistory:]
		r.prompt = r.prompt[over:]
	}
	sess.cut += over
	r.promptLen -= over
	r.rec.PromptTokens, r.rec.TruncatedTokens = r.promptLen, over
	s.counts.Truncated++
	sess.storedTokens = tr.stillValid(sess.storedTokens, over)
	if !s.cfg.Design.DecoupledPositions {
		tr.invalidate(sess)
	}
	if s.cfg.Scheme == kvstore.SchemeBlock {
		r.blockKeys = s.keys.blockKeys(sess, r.prompt, r.promptLen)
	}
	return true
}

// stillValid is how many of a stored version's tokens still serve the
// history once truncation has dropped its oldest dropped tokens: the rest
// of them where KV is stored without positions, none where every kept
// token moved.
func (tr *truncation) stillValid(tokens, dropped int64) int64 {
	s := tr.s
	if dropped > 0 && !s.cfg.Design.DecoupledPositions {
		return 0
	}
	return max(0, tokens-dropped)
}

// invalidate drops the session's KV from the accelerator that holds it,
// without exporting it: it no longer matches the history.
func (tr *truncation) invalidate(sess *session) {
	s := tr.s
	if sess.resident < 0 {
		return
	}
	n := s.nodes[sess.resident]
	n.KV.Release(sess.id)
	n.residents.remove(sess.id)
	sess.resident = -1
}

// readable trims a truncated session's found extents to the tokens still
// in its history (the oldest were dropped from the front).
func readable(extents []kvstore.Extent, bytes int64) []kvstore.Extent {
	skip := -bytes
	for _, e := range extents {
		skip += e.Bytes
	}
	for len(extents) > 0 && skip > 0 {
		e := extents[0]
		if e.Bytes > skip {
			e.Addr, e.Bytes = e.Addr+skip, e.Bytes-skip
			return append([]kvstore.Extent{e}, extents[1:]...)
		}
		skip -= e.Bytes
		extents = extents[1:]
	}
	return extents
}
