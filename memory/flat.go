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
	m.count(r)
	m.link.Transfer(r.Bytes, r.Done)
}

// count adds a request to the totals, once any holder of the memory has
// yielded (its bookings ahead are taken back from the totals too).
func (m *FlatMemory) count(r Request) {
	m.link.Free()
	if r.Write {
		m.bytesWritten.Add(r.Bytes)
	} else {
		m.bytesRead.Add(r.Bytes)
	}
}

// AccessFrom is Access as if asked for at time at (sim.Link.TransferFrom):
// a holder books its chain ahead through it. It returns the arrival.
func (m *FlatMemory) AccessFrom(at sim.Time, r Request) sim.Time {
	m.count(r)
	return m.link.TransferFrom(at, r.Bytes, r.Done)
}

// Link is the memory's one channel, which a holder holds and frees.
func (m *FlatMemory) Link() *sim.Link { return m.link }

// FlatMark is a flat memory's state, to go back to with Rewind.
type FlatMark struct {
	link          sim.LinkMark
	read, written int64
}

// Mark returns the memory's state now.
func (m *FlatMemory) Mark() FlatMark {
	return FlatMark{link: m.link.Mark(), read: m.bytesRead.Value(), written: m.bytesWritten.Value()}
}

// Rewind puts the memory back to state k, taking back the accesses booked
// ahead since.
func (m *FlatMemory) Rewind(k FlatMark) {
	m.link.Rewind(k.link)
	m.bytesRead.Add(k.read - m.bytesRead.Value())
	m.bytesWritten.Add(k.written - m.bytesWritten.Value())
}

// Stats returns the memory's totals.
func (m *FlatMemory) Stats() sim.LinkStats { return m.link.Stats() }

// Traffic returns the bytes read and written.
func (m *FlatMemory) Traffic() Traffic {
	busy := m.link.Stats().Busy // first: any holder yields
	return Traffic{BytesRead: m.bytesRead.Value(), BytesWritten: m.bytesWritten.Value(), ReadBusy: busy}
}

// FlatFromDRAM measures a DRAM preset once (its idle burst read and a
// 16 MiB sequential read) and returns the flat model of the same rate and
// latency.
func FlatFromDRAM(eng *sim.Engine, name string, cfg DRAMConfig) (*FlatMemory, error) {
	return FlatFromDRAMShare(eng, name, cfg, 1_000_000)
}

// FlatFromDRAMShare is FlatFromDRAM with leftPPM parts per million of the
// measured rate: what other work on the host leaves (cpu.background).
func FlatFromDRAMShare(eng *sim.Engine, name string, cfg DRAMConfig, leftPPM int64) (*FlatMemory, error) {
	idle, err := idleReadLatency(cfg)
	if err != nil {
		return nil, err
	}
	stream := ioPattern{Size: 16 << 20, Depth: 1, Count: 4}
	r, err := runDRAM(cfg, stream)
	if err != nil {
		return nil, err
	}
	rate := sim.Bandwidth(r.GBps(stream) * 1e9)
	if leftPPM != 1_000_000 {
		rate = rate / 1_000_000 * sim.Bandwidth(leftPPM)
	}
	return NewFlatMemory(eng, name, rate, idle)
}

// HBM2U55CStreamBandwidth is the cycle-level hbm2-u55c model's measured
// sequential rate (see the calibration table: 396.5 GB/s of 460 peak), and
// HBM2U55CIdleLatency its idle burst read.
const (
	HBM2U55CStreamBandwidth sim.Bandwidth = 396_500_000_000
	HBM2U55CIdleLatency                   = 17808 * sim.Picosecond
)
