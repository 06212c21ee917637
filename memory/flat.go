package memory

import (
	"fmt"

	"github.com/kvcosim/kvcosim/sim"
)

// FlatMemory is a memory reduced to a rate and a latency: accesses
// serialise at Bandwidth after an idle Latency. System runs use it where
// the cycle-level model would cost wall time without changing the answer:
// the exchange memory of the FPGA card moves imports of hundreds of MB at a
// rate the cycle-level model measures once (`HBM2FlatFromModel`).
type FlatMemory struct {
	link                    *sim.Link
	bytesRead, bytesWritten sim.Counter
}

// NewFlatMemory returns a memory of the given rate and idle latency.
func NewFlatMemory(eng *sim.Engine, name string, bandwidth sim.Bandwidth, latency sim.Time) (*FlatMemory, error) {
	l, err := sim.NewLink(eng, name, sim.LinkConfig{Bandwidth: bandwidth, Latency: latency})
	if err != nil {
		return nil, fmt.Errorf("memory %q: %w", name, err)
	}
	return &FlatMemory{link: l}, nil
}

// Access serves a request at the memory's rate.
func (m *FlatMemory) Access(r Request) {
	if r.Write {
		m.bytesWritten.Add(r.Bytes)
	} else {
		m.bytesRead.Add(r.Bytes)
	}
	m.link.Transfer(r.Bytes, r.Done)
}

// Stats returns the memory's totals.
func (m *FlatMemory) Stats() sim.LinkStats { return m.link.Stats() }

// Traffic returns the bytes read and written.
func (m *FlatMemory) Traffic() Traffic {
	return Traffic{BytesRead: m.bytesRead.Value(), BytesWritten: m.bytesWritten.Value(), ReadBusy: m.link.Stats().Busy}
}

// FlatFromDRAM measures a DRAM preset once (its idle burst read and a
// 16 MiB sequential read) and returns the flat model of the same rate and
// latency.
func FlatFromDRAM(eng *sim.Engine, name string, cfg DRAMConfig) (*FlatMemory, error) {
	idle, err := idleReadLatency(cfg)
	if err != nil {
		return nil, err
	}
	stream := ioPattern{Size: 16 << 20, Depth: 1, Count: 4}
	r, err := runDRAM(cfg, stream)
	if err != nil {
		return nil, err
	}
	return NewFlatMemory(eng, name, sim.Bandwidth(r.GBps(stream)*1e9), idle)
}

// HBM2U55CStreamBandwidth is the cycle-level hbm2-u55c model's measured
// sequential rate (see the calibration table: 396.5 GB/s of 460 peak), and
// HBM2U55CIdleLatency its idle burst read.
const (
	HBM2U55CStreamBandwidth sim.Bandwidth = 396_500_000_000
	HBM2U55CIdleLatency                   = 17808 * sim.Picosecond
)
