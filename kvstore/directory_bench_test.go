package kvstore

import (
	"runtime"
	"testing"

	"github.com/kvcosim/kvcosim/sim"
)

// BenchmarkDirectoryLookup stores 1e6 links (one small object each) and
// looks random stored keys up; it reports lookups per wall second and the
// heap bytes per stored link (tables, links, segments, LRU order, FIFOs).
func BenchmarkDirectoryLookup(b *testing.B) {
	const links = 1_000_000
	cfg := DirectoryConfig{Scheme: SchemePatent, BucketsLog2: 20, RegionBytes: 4096, StorageBytes: links * 4096,
		Policy: FIFO1First, Shape: KVShape{Layers: 1, KWidth: 1, VWidth: 1, ElemBytes: 2}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d, err := NewDirectory(cfg)
	if err != nil {
		b.Fatal(err)
	}
	r := sim.NewStreams(1).Stream("keys")
	keys := make([]Key, links)
	for i := range keys {
		keys[i] = Key{Tokens: 1 + r.Int64N(500), Hash: r.Uint64()} // one region each
		if _, err := d.Export(sim.Time(i), keys[i], nil); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perLink := float64(after.HeapAlloc-before.HeapAlloc) / links
	b.ReportAllocs()
	b.ResetTimer()
	now := sim.Time(links)
	for i := range b.N {
		res, _ := d.Lookup(now+sim.Time(i), keys[r.IntN(links)])
		if !res.Hit {
			b.Fatal("a stored key was not found")
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
	b.ReportMetric(perLink-float64(len(keys))*16/links, "B/link")
}
