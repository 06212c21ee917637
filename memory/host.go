package memory

import "github.com/kvcosim/kvcosim/sim"

// hostLoadToUse is the CPU-side part of an idle host-memory access (core,
// caches, mesh and memory controller queues) on top of the DRAM's own
// nRCD + nCL + nBL/2: idle random loads on Xeon servers take about 90 ns
// (Intel Memory Latency Checker), of which DDR4-3200's array access is
// 30 ns.
const hostLoadToUse = 60 * sim.Nanosecond

// HostMemoryConfig is a server's host memory: 8 channels of DDR4-3200
// (as on a 2nd/3rd generation Xeon Scalable socket) with a fixed
// load-to-use overhead, so that an idle random access costs about 90 ns.
func HostMemoryConfig() DRAMConfig {
	c := DDR4_3200()
	c.Name, c.Channels, c.ExtraLatency = "host-ddr4x8", 8, hostLoadToUse
	return c
}
