package workloads

import "github.com/kvcosim/kvcosim/sim"

// TraceStats are a trace's request count, span, lengths and, with block
// keys, the ideal prefix hit ratio under unlimited storage.
type TraceStats struct {
	Requests        int
	Duration        sim.Time
	Inputs, Outputs []float64
	// HasBlocks is set when the trace carries block keys.
	HasBlocks                         bool
	Blocks, HitBlocks                 int64
	InputTokens, HitTokens, BlockSize int64
}

// Stats computes the statistics. The ideal hit of a request is the number
// p of its leading block keys seen in any earlier request (stopping at the
// first unseen one): p blocks and min(p x block size, input - 1) tokens
// (the last prompt token is computed for the first logits, as vLLM caps a
// hit); then all its keys count as seen.
func (t *Trace) Stats() TraceStats {
	s := TraceStats{Requests: len(t.Requests), BlockSize: t.BlockTokens}
	seen := map[uint64]struct{}{}
	for _, r := range t.Requests {
		s.Inputs, s.Outputs = append(s.Inputs, float64(r.Input)), append(s.Outputs, float64(r.Output))
		s.InputTokens += r.Input
		if r.BlockKeys == nil {
			continue
		}
		s.HasBlocks = true
		p := int64(idealPrefixHit(seen, r.BlockKeys))
		s.Blocks += int64(len(r.BlockKeys))
		s.HitBlocks += p
		s.HitTokens += min(p*t.BlockTokens, r.Input-1)
	}
	if n := len(t.Requests); n > 0 {
		s.Duration = t.Requests[n-1].Arrival - t.Requests[0].Arrival
	}
	return s
}

// idealPrefixHit returns how many leading keys are in seen, then adds all
// keys to seen.
func idealPrefixHit(seen map[uint64]struct{}, keys []uint64) int {
	p := 0
	for p < len(keys) {
		if _, ok := seen[keys[p]]; !ok {
			break
		}
		p++
	}
	for _, k := range keys {
		seen[k] = struct{}{}
	}
	return p
}

// RatePerS is the mean arrival rate over the trace's span.
func (s TraceStats) RatePerS() float64 {
	if s.Duration <= 0 {
		return 0
	}
	return float64(s.Requests) / s.Duration.Seconds()
}

// HitRatioBlocks is the ideal hit ratio in blocks.
func (s TraceStats) HitRatioBlocks() float64 { return ratio(s.HitBlocks, s.Blocks) }

// HitRatioTokens is the ideal hit ratio in prompt tokens.
func (s TraceStats) HitRatioTokens() float64 { return ratio(s.HitTokens, s.InputTokens) }

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
