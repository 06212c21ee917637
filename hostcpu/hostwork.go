package hostcpu

import (
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"github.com/kvcosim/kvcosim/sim"
)

// HostWork is what the stores asked of the hosts, every node together: the
// cores' time they spent (hashing and table walks, Host.Compute, before a
// busy host stretches it), and the operations and bytes of their moves
// that a core handles without the simulation timing it (scenario prices
// them: docs/hostcpu.md).
type HostWork struct {
	// Compute is the core time of the stores' Host.Compute work.
	Compute sim.Time
	// StorageCommands are the storage reads and writes the moves issued
	// (one a chunk a hop): each an I/O a core submits and completes.
	StorageCommands int64
	// DMATransfers are the link transfers the moves issued (one a chunk a
	// hop): each a DMA a core sets up.
	DMATransfers int64
	// StagedBytes were written into host memory by a staging hop: a core
	// copies each once.
	StagedBytes int64
	// PeakWindowBytes is the most host-memory bytes the moves started in
	// one PeakWindow (each move's bytes counted at its start).
	PeakWindowBytes int64
	window          int64 // the window of windowBytes
	windowBytes     int64
}

// PeakWindow is the span over which HostWork's peak host-memory traffic is
// taken.
const PeakWindow = 100 * sim.Millisecond

// move counts a move of bytes through hops, streamed in chunk-byte chunks
// when chunk > 0 and it has several hops and more than a chunk of bytes
// (as the mover streams it), at time now. A hop through host memory is a
// staging hop (store.Node.Staging, the only way a store reaches it).
func (w *HostWork) move(now sim.Time, hops []store.Hop, bytes, chunk int64) {
	pieces := int64(1)
	if chunk > 0 && len(hops) > 1 && bytes > chunk {
		pieces = (bytes + chunk - 1) / chunk
	}
	var hostBytes int64
	for _, h := range hops {
		switch {
		case h.Link != nil:
			w.DMATransfers += pieces
		case h.Ring > 0:
			hostBytes += bytes
			if h.Write {
				w.StagedBytes += bytes
			}
		default:
			w.StorageCommands += pieces
		}
	}
	w.count(now, hostBytes)
}

// count adds bytes of host-memory traffic at time now to its window.
func (w *HostWork) count(now sim.Time, bytes int64) {
	if bytes == 0 {
		return
	}
	if k := int64(now / PeakWindow); k != w.window {
		w.window, w.windowBytes = k, 0
	}
	w.windowBytes += bytes
	w.PeakWindowBytes = max(w.PeakWindowBytes, w.windowBytes)
}

// HostWork returns what the stores asked of the hosts so far.
func (s *System) HostWork() HostWork { return s.work }

// onCore has a core of node spend service, stretched by the share of the
// host other work takes (cpu.background), then raises done.
func (s *System) onCore(node int, service sim.Time, done sim.Event) {
	s.nodes[node].cpu.Submit(sim.Job{Service: s.cfg.stretch(service), Done: done})
}

// stretch is a core's time for service when other work takes
// BackgroundPPM of the host's cores: service / (1 - share).
func (c Config) stretch(service sim.Time) sim.Time {
	if c.BackgroundPPM == 0 {
		return service
	}
	left := sim.Time(1_000_000 - c.BackgroundPPM)
	return service/left*1_000_000 + service%left*1_000_000/left
}
