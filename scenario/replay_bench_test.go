package scenario

import (
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// benchNode pins the node the performance figures of docs/workloads.md
// and docs/studies.md were measured on, the default before issue 18 moved
// it: one drive, and all the KV memory the accelerator leaves.
var benchNode = []string{"storage.drives=1", "accelerator.kv_capacity=auto"}

// BenchmarkReplayStoreAgainstNoStore replays the Mooncake conversation
// trace (12,031 requests) at 4x time scale on one Llama-3-8B H100 node,
// without a store (system.design=recompute) and with the patent's
// (block hashing, unlimited storage), each run timed on its own, and
// reports the store run's wall time as a multiple of the no-store run's
// (ratio, issue 19: at most 3), each run's events per request and the
// store run's wall seconds. It runs the store a third time with its drive
// reduced to a flat memory (one DDR5 channel's rate and latency as the one
// storage tier), which keeps everything of the store path but the SSD's
// queues, buffer and NAND: flat-ratio is what the store run would cost with
// a drive model that cost nothing. It runs the store a fourth time with
// the drive at the request resolution (storage.resolution=request,
// memory/ssd_flow.go): request-ratio is that run's multiple of the
// no-store run, its error against the page level stated in docs/memory.md
// and bounded by TestRequestResolutionWithinBound. Times are each configuration's fastest
// run of the b.N (run with -benchtime 3x or more): on a shared machine the
// no-store run's 0.2 s varies by half, and the fastest is the least
// disturbed.
func BenchmarkReplayStoreAgainstNoStore(b *testing.B) {
	path := filepath.Join("..", "workloads", "testdata", "mooncake_conversation_trace.jsonl.gz")
	base := append([]string{"workload.kind=mooncake", "workload.path=" + path, "workload.time_scale=0.25",
		"model=llama-3-8b", "accelerator.tp=1"}, benchNode...)
	configs := [][]string{{"system.design=recompute"}, {"fpga.hashing=block", "storage.capacity=unlimited"},
		{"fpga.hashing=block", "storage.tiers=[{name: flat, device: ddr5-4800, capacity: unlimited}]"},
		{"fpga.hashing=block", "storage.capacity=unlimited", "storage.resolution=request"}}
	fastest := []time.Duration{math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64}
	events := make([]float64, len(configs))
	var requests float64
	for b.Loop() {
		for i, c := range configs {
			t0 := time.Now()
			s, _ := run(b, append(slices.Clone(base), c...)...)
			fastest[i] = min(fastest[i], time.Since(t0))
			events[i], requests = float64(s.Events), float64(s.RequestsCompleted)
		}
	}
	noStore, store, flat, request := fastest[0].Seconds(), fastest[1].Seconds(), fastest[2].Seconds(), fastest[3].Seconds()
	b.ReportMetric(store/noStore, "ratio")
	b.ReportMetric(flat/noStore, "flat-ratio")
	b.ReportMetric(request/noStore, "request-ratio")
	b.ReportMetric(store, "store-s")
	b.ReportMetric(noStore, "nostore-s")
	b.ReportMetric(events[0]/requests, "events/request-nostore")
	b.ReportMetric(events[1]/requests, "events/request-store")
	b.ReportMetric(events[2]/requests, "events/request-flat")
	b.ReportMetric(events[3]/requests, "events/request-request")
}
