package fpga

import (
	"fmt"
	"github.com/kvcosim/kvcosim/kvstore"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
)

// llama3_8b is Llama-3-8B's KV cache at bf16: 32 layers, 8 KV heads of 128.
var llama3_8b = kvstore.KVShape{Layers: 32, KWidth: 1024, VWidth: 1024, ElemBytes: 2}

// testSystem is an FPGA card in a server: host memory, the card's PCIe link
// and HBM, and a CM6-class SSD.
type testSystem struct {
	eng   *sim.Engine
	fpga  *Engine
	ports Ports
}

func goldenDirectory(scheme kvstore.Scheme, mode kvstore.ExportMode) kvstore.DirectoryConfig {
	return kvstore.DirectoryConfig{Scheme: scheme, BlockTokens: 512, BucketsLog2: 20, RegionBytes: 2 << 20,
		StorageBytes: 1 << 40, FreeDelay: sim.Second, Policy: kvstore.FIFO1First, DeleteSuperseded: true,
		Layout: kvstore.LayoutClaim9, Mode: mode, Shape: llama3_8b, CheckInvariants: true}
}

func newTestSystem(t testing.TB, cfg Config) *testSystem {
	eng := sim.NewEngine(0)
	host, err := memory.NewDRAM(eng, memory.HostMemoryConfig())
	require.NoError(t, err)
	hbm, err := memory.NewDRAM(eng, memory.HBM2_U55C())
	require.NoError(t, err)
	pcie, err := memory.NewPCIe(eng, memory.AlveoU55CXDMA())
	require.NoError(t, err)
	ssd, err := memory.NewSSD(eng, memory.KioxiaCM6())
	require.NoError(t, err)
	ports := Ports{HostMemory: host, ToHost: pcie.CardToHost, FromHost: pcie.HostToCard, Exchange: hbm, Tables: hbm,
		Storage: ssd, HostBytes: memory.HostMemoryConfig().CapacityBytes(), ExchangeBytes: memory.HBM2_U55C().CapacityBytes(),
		TablesBytes: memory.HBM2_U55C().CapacityBytes()}
	placement := ports.HostBytes
	if cfg.Placement == PlaceHBM {
		placement = ports.TablesBytes
	}
	f, err := NewEngine(eng, cfg, ports, placement)
	require.NoError(t, err)
	return &testSystem{eng: eng, fpga: f}
}

// query runs one query to completion and returns its result.
func (s *testSystem) query(q QueryRequest) Result {
	got := collect{}
	q.Reply = Reply{To: got}
	s.fpga.Query(q)
	s.eng.Run()
	return got[0]
}

func (s *testSystem) export(x ExportRequest) Result {
	got := collect{}
	x.Reply = Reply{To: got}
	s.fpga.Export(x)
	s.eng.Run()
	return got[0]
}

// collect is a Receiver that keeps the results by their reply's Arg.
type collect map[int64]Result

func (c collect) Receive(arg int64, r Result) { c[arg] = r }

// render prints a task's stages as the goldens keep them.
func render(title string, r Result, clock sim.Clock) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", title)
	fmt.Fprintf(&b, "%-14s %12s %16s %14s\n", "stage", "fpga_cycles", "picoseconds", "bytes")
	for _, s := range r.Stages {
		fmt.Fprintf(&b, "%-14s %12d %16d %14d\n", s.Name, s.Cycles, int64(s.End-s.Start), s.Bytes)
	}
	total := r.End - r.Start
	fmt.Fprintf(&b, "%-14s %12d %16d\n", "total", clock.FirstEdgeAtOrAfter(r.End)-clock.FirstEdgeAtOrAfter(r.Start), int64(total))
	fmt.Fprintf(&b, "hit=%v matched_blocks=%d hops=%d bytes=%d (%v)\n", r.Hit, r.MatchedBlocks, r.Hops, r.Bytes, total)
	return b.String()
}

func tokenRange(n int, base uint32) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = base + uint32(i)
	}
	return out
}
