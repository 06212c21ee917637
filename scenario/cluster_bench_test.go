package scenario

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/reports"
)

// BenchmarkClusterDay runs a cluster of 64 default nodes sharing one
// storage pool through a simulated day of the synthetic chat workload
// (about 285,000 sessions, a million requests, at 3.3 sessions a second)
// with the patent's store, and reports the wall time, the events per
// request and the process's peak heap (issue 19: how far one process
// goes; docs/studies.md); a tenth of the day first, each with the drives
// page by page and at the request resolution (storage.resolution).
// `-benchtime 1x`: the day takes about a minute at the request resolution,
// four page by page, and 8-9 GiB of heap.
func BenchmarkClusterDay(b *testing.B) {
	for _, c := range []struct {
		nodes      int
		sessions   int
		resolution string
	}{{64, 28_500, "page"}, {64, 28_500, "request"}, {64, 285_000, "page"}, {64, 285_000, "request"}} {
		b.Run(fmt.Sprintf("nodes=%d/sessions=%d/resolution=%s", c.nodes, c.sessions, c.resolution), func(b *testing.B) {
			sets := append([]string{fmt.Sprintf("system.nodes=%d", c.nodes), fmt.Sprintf("workload.sessions=%d", c.sessions),
				"workload.session_rate_per_s=3.3", "storage.capacity=unlimited", "workload.memory_limit_gib=32",
				"storage.resolution=" + c.resolution}, benchNode...)
			for b.Loop() {
				start := time.Now()
				s := runToFile(b, sets...)
				b.ReportMetric(time.Since(start).Seconds(), "wall-s")
				b.ReportMetric(float64(s.RequestsCompleted), "requests")
				b.ReportMetric(float64(s.Events)/float64(s.RequestsCompleted), "events/request")
				b.ReportMetric(s.SimTimeS/3600, "simulated-h")
			}
			b.ReportMetric(peakHeapMiB(), "peak-heap-MiB")
		})
	}
}

// runToFile runs a scenario as `simrun run` does its outputs' largest,
// requests.csv into a file (rather than into a buffer in memory, whose
// growth a user never pays), and returns its summary.
func runToFile(b *testing.B, sets ...string) reports.Summary {
	res := executed(b, sets...)
	f, err := os.Create(filepath.Join(b.TempDir(), "requests.csv"))
	require.NoError(b, err)
	w := bufio.NewWriter(f)
	require.NoError(b, reports.WriteRequestsCSV(w, res.Rows()))
	require.NoError(b, w.Flush())
	require.NoError(b, f.Close())
	return res.Summary()
}

// peakHeapMiB is the heap the process holds from the system, in MiB: the
// runtime keeps what a run's peak needed (bar what its scavenger gave
// back), so after the run it is the peak within a few percent.
func peakHeapMiB() float64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapSys) / (1 << 20)
}
