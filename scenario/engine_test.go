package scenario

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The engine's keys refuse what they cannot run, naming the key.
func TestEngineKeysRefuseBadInput(t *testing.T) {
	cases := []struct {
		name string
		sets []string
		want string
	}{
		{"kv_alloc", []string{"accelerator.kv_alloc=lazy"}, "key accelerator.kv_alloc: \"lazy\" is not allowed (allowed: reserve, incremental)"},
		{"preemption", []string{"accelerator.preemption=drop"}, "key accelerator.preemption: \"drop\" is not allowed (allowed: recompute, swap, store)"},
		{"chunked_prefill", []string{"accelerator.chunked_prefill=maybe"}, "key accelerator.chunked_prefill"},
		{"chunk cap", []string{"accelerator.prefill_chunk_tokens=-1"}, "key accelerator.prefill_chunk_tokens"},
		{"budget under a block", []string{"accelerator.token_budget=8"}, "--set accelerator.token_budget=8: key accelerator.token_budget: accelerator.token_budget 8 is less than one KV block of accelerator.kv_block_tokens 16 tokens"},
		{"block under the budget", []string{"accelerator.kv_block_tokens=16384"}, "--set accelerator.kv_block_tokens=16384: key accelerator.kv_block_tokens: accelerator.token_budget 8192 is less than one KV block"},
		{"block not dividing the chunk", []string{"system.design=lmcache", "accelerator.kv_block_tokens=48"},
			"--set accelerator.kv_block_tokens=48: key accelerator.kv_block_tokens: accelerator.kv_block_tokens 48 does not divide the store's chunk of fpga.block_tokens 256 tokens"},
		{"whole prefill past the budget", []string{"accelerator.chunked_prefill=off", "accelerator.token_budget=4096"},
			"key accelerator.chunked_prefill: accelerator.chunked_prefill off runs a prompt whole, so accelerator.token_budget 4096 must hold the context window of 8192 tokens"},
		{"whole prefill with a cap", []string{"accelerator.chunked_prefill=off", "accelerator.prefill_chunk_tokens=512"}, "key accelerator.prefill_chunk_tokens: accelerator.prefill_chunk_tokens 512 caps a prefill chunk"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := loadAndBuild(t, "", c.sets)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	require.NoError(t, loadAndBuild(t, "", []string{"accelerator.chunked_prefill=off", "accelerator.kv_alloc=incremental", "accelerator.preemption=swap"}))
}
