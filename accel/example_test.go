package accel_test

import (
	"fmt"

	"github.com/kvcosim/kvcosim/accel"
)

// A prefill of 4,096 new tokens against reusing them: what recomputation
// costs on 4 H100s, and what the same tokens' KV cache weighs.
func ExampleNode_Cost() {
	m, _ := accel.ModelPreset("llama-3-70b")
	d, _ := accel.DevicePreset("h100-sxm")
	node, _ := accel.NewNode(m, d, 4, accel.BF16, accel.BF16, 4<<30, nil)
	prefill := node.Cost(accel.Iteration{Prefills: []accel.Chunk{{New: 4096, Last: true}}})
	decode := node.Cost(accel.Iteration{Decodes: []int64{4096}})
	fmt.Printf("prefill 4096 tokens: %v (compute %v, all-reduce %v)\n", prefill.Total.Round(1e8), prefill.Compute.Round(1e8), prefill.AllReduce.Round(1e8))
	fmt.Printf("one decode step: %v\n", decode.Total.Round(1e8))
	fmt.Printf("KV of 4096 tokens: %.2f GB\n", float64(4096*m.KVBytesPerToken(accel.BF16))/1e9)
	// Output:
	// prefill 4096 tokens: 421.6ms (compute 262.9ms, all-reduce 154.6ms)
	// one decode step: 29.6ms
	// KV of 4096 tokens: 1.34 GB
}
