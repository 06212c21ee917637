package accel_test

import (
	"fmt"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/accel/tinylm"
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
	// prefill 4096 tokens: 440.8ms (compute 281.2ms, all-reduce 159.3ms)
	// one decode step: 21.3ms
	// KV of 4096 tokens: 1.34 GB
}

// One turn of beam search on tinylm: the prompt in two chunks (as the
// scheduler cuts it), three decode steps over three beams, each on its own
// KV cache, then the closing pass that leaves the cache covering prompt
// and output, ready to be exported.
func ExampleGeneration() {
	m, _ := tinylm.New(tinylm.DefaultConfig())
	g, _ := accel.NewGeneration(m, m.NewCache(), accel.Decoding{Kind: accel.Beam, Beams: 3}, nil, 4)
	g.Prefill([]uint32{1, 2, 3, 4, 5}, false)
	g.Prefill([]uint32{6, 7}, true) // the last chunk's logits choose the first token
	for !g.Done() {
		g.Step()
	}
	cache, out, logits, _ := g.Finish()
	fmt.Println("output tokens:", len(out), "cached tokens:", cache.Len, "logits:", len(logits))
	// Output:
	// output tokens: 4 cached tokens: 11 logits: 512
}
