package scenario

import (
	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/kvstore"
)

// engine reads the serving engine's scheduling keys (docs/scenario.md maps
// each to vLLM's flag): the KV allocation, preemption, and prefill
// chunking; a token budget must hold one KV block, and without chunked
// prefill the whole context window, as vLLM requires of
// max_num_batched_tokens.
func (r *resolver) engine(a Accelerator, out *resolved) {
	e := &out.host.Engine
	e.KVAlloc = pick(r, "accelerator.kv_alloc", a.KVAlloc, hostcpu.KVAllocs.Parse)
	e.Preemption = pick(r, "accelerator.preemption", a.Preemption, hostcpu.Preemptions.Parse)
	e.WholePrefill = r.oneOf("accelerator.chunked_prefill", a.ChunkedPrefill, "on", "off") == "off"
	r.intIn("accelerator.prefill_chunk_tokens", a.PrefillChunkTokens, 0, 1<<24)
	e.PrefillChunkTokens = a.PrefillChunkTokens
	budget := int64(a.TokenBudget)
	switch {
	case r.err != nil:
	case budget < int64(a.KVBlockTokens):
		r.fail(r.culprit("accelerator.token_budget", "accelerator.kv_block_tokens"),
			"accelerator.token_budget %d is less than one KV block of accelerator.kv_block_tokens %d tokens (allowed: a budget of at least %d)", budget, a.KVBlockTokens, a.KVBlockTokens)
	case e.WholePrefill && e.PrefillChunkTokens > 0:
		r.fail(r.culprit("accelerator.prefill_chunk_tokens", "accelerator.chunked_prefill"),
			"accelerator.prefill_chunk_tokens %d caps a prefill chunk, and accelerator.chunked_prefill is off (allowed: 0, or chunked_prefill on)", e.PrefillChunkTokens)
	case e.WholePrefill && (out.host.ContextTokens == 0 || out.host.ContextTokens > budget):
		r.fail(r.culprit("accelerator.chunked_prefill", "accelerator.token_budget", "accelerator.max_model_len"),
			"accelerator.chunked_prefill off runs a prompt whole, so accelerator.token_budget %d must hold the context window of %d tokens (0: the model has none; allowed: chunked_prefill on, a larger token_budget or a smaller accelerator.max_model_len)",
			budget, out.host.ContextTokens)
	}
}

// engineBlocks checks that the accelerator's KV block divides the block
// scheme's chunk (fpga.block_tokens), so that a stored chunk is whole
// device blocks (vLLM's KV connectors save and load whole blocks).
func (r *resolver) engineBlocks(out *resolved) {
	if r.err != nil || out.host.Scheme != kvstore.SchemeBlock || out.host.BlockTokens%out.kvBlock == 0 {
		return
	}
	r.fail(r.culprit("accelerator.kv_block_tokens", "fpga.block_tokens", "system.design"),
		"accelerator.kv_block_tokens %d does not divide the store's chunk of fpga.block_tokens %d tokens (allowed: a divisor of %d, such as 16)",
		out.kvBlock, out.host.BlockTokens, out.host.BlockTokens)
}
