package scenario

import (
	"bytes"
	"runtime"
	"strconv"
	"testing"

	"github.com/kvcosim/kvcosim/reports"
)

// BenchmarkSyntheticRunMemory runs 4,000 default sessions (fpga and
// lmcache, the design that keeps the most) and reports the live heap a
// session leaves at the end (the run, its rows and requests.csv held),
// the workload's memory estimate a session, and their ratio est/2live:
// the estimate is of the resident set, which the collector lets grow to
// about twice the live heap, so a ratio below 1 says the estimate's
// constants (workloads.runTokenBytes and the rest) want measuring again
// (docs/scenario.md, Limits, gives the command).
func BenchmarkSyntheticRunMemory(b *testing.B) {
	const sessions = 4000
	for _, design := range []string{"fpga", "lmcache"} {
		b.Run(design, func(b *testing.B) { benchRunMemory(b, design, sessions) })
	}
}

func benchRunMemory(b *testing.B, design string, sessions int) {
	var live, est float64
	for b.Loop() {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		l, err := Load("", []string{"workload.sessions=" + strconv.Itoa(sessions), "system.design=" + design})
		if err != nil {
			b.Fatal(err)
		}
		r, err := Build(l)
		if err != nil {
			b.Fatal(err)
		}
		res, err := r.Execute()
		if err != nil {
			b.Fatal(err)
		}
		rows := res.Rows()
		var csv bytes.Buffer
		if err := reports.WriteRequestsCSV(&csv, rows); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		runtime.KeepAlive(res)
		runtime.KeepAlive(rows)
		runtime.KeepAlive(&csv)
		live = float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / float64(sessions)
		est = l.resolved.synthetic.RunMemoryEstimate() / float64(sessions)
	}
	b.ReportMetric(live, "live-B/session")
	b.ReportMetric(est, "estimate-B/session")
	b.ReportMetric(est/(2*live), "est/2live")
}
