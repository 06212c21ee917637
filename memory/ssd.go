package memory

import (
	"fmt"

	"github.com/kvcosim/kvcosim/sim"
)

// SSD is an NVMe SSD: a host link, a controller, a NAND array and a DRAM
// write buffer, worked out at the resolution its configuration names. The
// resolutions are separate models of the one drive behind the Device
// interface: pageDrive command by command and page by page (ssd_page.go,
// the default), requestDrive a request at once from the drive's rates
// (ssd_flow.go). Both share ssdBase: the configuration, the host link and
// the counting of traffic and latency.
type SSD struct {
	*ssdBase
	drive Device // *pageDrive or *requestDrive
}

// ssdBase is what every resolution of the drive shares: its configuration
// and host link, the totals and latencies of the requests it has
// completed, and when its write buffer has drained.
type ssdBase struct {
	deviceStore
	eng  *sim.Engine
	cfg  SSDConfig
	host *PCIe
	// lastRelease is when the last buffered byte known is programmed
	// (Traffic.DrainedAt)
	lastRelease sim.Time

	reads, writes             sim.Counter
	bytesRead, bytesWritten   sim.Counter
	readLatency, writeLatency *sim.Distribution
}

// The SSD's events.
const (
	opSSDControllerDone = iota
	opSSDDataReady
	opSSDComplete
	opSSDWriteArrived
	opSSDRelease
	opSSDRunEnd
	opSSDReadEnd
	opSSDFlowDone
)

// NewSSD validates cfg and builds the drive at its resolution.
func NewSSD(eng *sim.Engine, cfg SSDConfig) (*SSD, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	host, err := NewPCIe(eng, cfg.Host)
	if err != nil {
		return nil, err
	}
	base := &ssdBase{eng: eng, cfg: cfg, host: host, readLatency: sim.NewDistribution(), writeLatency: sim.NewDistribution()}
	if cfg.Resolution == ResolutionRequest {
		return &SSD{ssdBase: base, drive: newRequestDrive(base)}, nil
	}
	return &SSD{ssdBase: base, drive: newPageDrive(base)}, nil
}

// Config returns the drive's configuration.
func (s *ssdBase) Config() SSDConfig { return s.cfg }

// AttachStore gives the drive a byte store for functional mode (blocks of
// blockBytes; unwritten bytes read as zeros with zeroFill) and returns it.
func (s *ssdBase) AttachStore(blockBytes int64, zeroFill bool) (*ByteStore, error) {
	return s.attach(s.cfg.Name, s.cfg.CapacityBytes, blockBytes, zeroFill)
}

// Access submits a read or write to the drive's resolution. A range
// outside the drive is a programming error.
func (s *SSD) Access(r Request) {
	if r.Bytes <= 0 || r.Addr < 0 || r.Addr+r.Bytes > s.cfg.CapacityBytes {
		panic(fmt.Sprintf("memory: %s at %v: access [%d, %d) outside the drive's %d bytes",
			s.cfg.Name, s.eng.Now(), r.Addr, r.Addr+r.Bytes, s.cfg.CapacityBytes))
	}
	s.drive.Access(r)
}

// commands returns how many commands a request of bytes makes.
func (s *ssdBase) commands(bytes int64) int64 {
	return (bytes + s.cfg.MaxIOBytes - 1) / s.cfg.MaxIOBytes
}

// commandSizes returns a request's commands and the bytes of its first and
// of its last.
func (s *ssdBase) commandSizes(bytes int64) (n, first, last int64) {
	n = s.commands(bytes)
	return n, min(bytes, s.cfg.MaxIOBytes), bytes - (n-1)*s.cfg.MaxIOBytes
}

// count adds cmds commands of r, which began at start and end now, to the
// totals, and emits r's span when the trace takes device spans.
func (s *ssdBase) count(r Request, cmds int64, start sim.Time) {
	if r.Write {
		s.writes.Add(cmds)
		s.bytesWritten.Add(r.Bytes)
	} else {
		s.reads.Add(cmds)
		s.bytesRead.Add(r.Bytes)
	}
	if tr := s.eng.Trace(); tr.AllSpans() {
		op := map[bool]string{false: "read", true: "write"}[r.Write]
		tr.Emit(sim.Span{Component: s.cfg.Name, Operation: op, ID: r.Done.Arg, Start: start, End: s.eng.Now(), Bytes: r.Bytes})
	}
}

// finish records the latency of request r, begun at start and ended now,
// and signals its completion: an event now, or, when finishing is the
// caller's last act (last), at once if that event would be the next one
// (sim.Engine.Continue).
func (s *ssdBase) finish(r Request, start sim.Time, last bool) {
	latency := s.eng.Now() - start
	if r.Write {
		s.writeLatency.AddTime(latency)
	} else {
		s.readLatency.AddTime(latency)
	}
	if j, ok := r.Done.Handler.(*Striped); ok && !j.partEnds(r.Done.Arg) {
		return // a striped access's part that is not its last (Striped.partEnds)
	}
	switch {
	case r.Done.Handler == nil:
	case last:
		s.eng.Continue(r.Done)
	default:
		s.eng.Schedule(s.eng.Now(), r.Done)
	}
}

// SSDStats are a drive's totals.
type SSDStats struct {
	Reads, Writes, BytesRead, BytesWritten int64
	// ReadLatency and WriteLatency are per request, from Access to the
	// completion of its last command (what its requester waits), in ps.
	ReadLatency, WriteLatency sim.Summary
	// HostToCard and CardToHost are the host link's totals.
	HostToCard, CardToHost sim.LinkStats
}

// Traffic returns the bytes read and written (at the page level, a
// closed-form run's commands when the run ends or is split, a read run's
// also when it drops the reads it has finished).
func (s *ssdBase) Traffic() Traffic {
	return Traffic{BytesRead: s.bytesRead.Value(), BytesWritten: s.bytesWritten.Value(), ReadBusy: s.host.CardToHost.Stats().Busy,
		WriteBusy: s.host.HostToCard.Stats().Busy, DrainedAt: s.lastRelease}
}

// Stats returns the totals so far; at the page level the commands of a
// closed-form run (ssd_fast.go, ssd_readrun.go) count when the run ends or
// is split, a read run's also when it drops the reads it has finished.
func (s *ssdBase) Stats() SSDStats {
	return SSDStats{Reads: s.reads.Value(), Writes: s.writes.Value(), BytesRead: s.bytesRead.Value(),
		BytesWritten: s.bytesWritten.Value(), ReadLatency: s.readLatency.Summary(), WriteLatency: s.writeLatency.Summary(),
		HostToCard: s.host.HostToCard.Stats(), CardToHost: s.host.CardToHost.Stats()}
}
