package fpga

import (
	"fmt"
	"github.com/kvcosim/kvcosim/internal/names"
	"github.com/kvcosim/kvcosim/kvstore"

	"github.com/kvcosim/kvcosim/sim"
)

// Placement is where the address-mapping table, the chain links and the
// free-address FIFOs live.
type Placement int

const (
	// PlaceHost keeps them in host memory, as the patent does: every bucket
	// read and chain hop is a host-memory access across PCIe.
	PlaceHost Placement = iota
	// PlaceHBM keeps them in the FPGA card's HBM.
	PlaceHBM
	// PlaceURAM keeps them on chip (BRAM and URAM), within its capacity.
	PlaceURAM
)

// Placements names the values of Placement: Names lists them, Parse reads one.
var Placements = names.New("table placement", map[Placement]string{
	PlaceHost: "host",
	PlaceHBM:  "hbm",
	PlaceURAM: "uram",
})

// String returns the placement's name.
func (p Placement) String() string { return Placements.Name(p) }

// Config is the FPGA engine's configuration.
type Config struct {
	// Name names the engine in spans (default "fpga"; a node's is
	// "node0.fpga").
	Name string
	// Node is the node the engine serves, for spans.
	Node int
	// ClockHz is the FPGA's clock (default 300 MHz).
	ClockHz   int64
	Hash      HashEngineConfig
	Directory kvstore.DirectoryConfig
	Placement Placement
	// URAMBytes is the on-chip memory available for tables (about 43 MB of
	// BRAM + URAM on an Alveo U55C); URAMCycles is its read or write latency.
	URAMBytes  int64
	URAMCycles sim.Cycles
	// BucketBytes and LinkBytes are the sizes of a bucket head and of a
	// chain link record as read or written in their placement.
	BucketBytes, LinkBytes int64
	// QueryTasks and ExportTasks bound the tasks each engine runs at once.
	QueryTasks, ExportTasks int
	// SignalBytes is the completion message to the CPU (an MSI-X write).
	SignalBytes int64
	// MaxLinks sizes the link table; 0 means one link per region (the most
	// a store can hold). An unlimited store needs a bound here.
	MaxLinks int64
	// ChunkBytes streams an import through its hops (storage, the peer
	// link, the exchange memory, the forward link) in chunks of this
	// many bytes, each hop taking a chunk as soon as the hop before has
	// passed it on, as a DMA engine forwards one chunk while it reads the
	// next; 0 is store-and-forward: each extent whole through one hop
	// after another.
	ChunkBytes int64
	// EventByEvent turns off the closed form of operations whose ports are
	// links and flat memories (walk.go), to check it against the events.
	EventByEvent bool
}

// DefaultConfig is an Alveo U55C-class FPGA with the patent's defaults.
func DefaultConfig(dir kvstore.DirectoryConfig) Config {
	return Config{Name: "fpga", ClockHz: 300_000_000,
		Hash:      HashEngineConfig{Lanes: 1, SetupCycles: 4, FinalizeCycles: 20},
		Directory: dir, Placement: PlaceHost, URAMBytes: 43 << 20, URAMCycles: 2,
		BucketBytes: 8, LinkBytes: 64, QueryTasks: 4, ExportTasks: 4, SignalBytes: 64}
}

// TableBytes is the memory the tables and FIFOs need: the buckets, the
// links, and both FIFOs able to hold as many regions as there are links.
func (c Config) TableBytes() int64 {
	links := c.Links()
	return int64(1)<<c.Directory.BucketsLog2*c.BucketBytes + links*c.LinkBytes + 2*links*4
}

// Links is how many links the link table holds: one per region, at most
// MaxLinks.
func (c Config) Links() int64 {
	links := c.Directory.StorageBytes / c.Directory.RegionBytes
	if c.MaxLinks > 0 {
		links = min(links, c.MaxLinks)
	}
	return links
}

// tablesRoom is the part of the placement's memory (placementBytes) the
// tables may fill: in host memory the upper half, since the lower half
// holds the sessions' token arrays (stages.go); in HBM all of it; in URAM
// the URAM.
func (c Config) tablesRoom(placementBytes int64) int64 {
	switch c.Placement {
	case PlaceURAM:
		return c.URAMBytes
	case PlaceHost:
		return placementBytes - placementBytes/2
	}
	return placementBytes
}

// Validate checks the configuration; placementBytes is the capacity of the
// memory the tables are placed in (host memory or HBM; ignored for URAM).
func (c Config) Validate(placementBytes int64) error {
	if c.ClockHz <= 0 {
		return fmt.Errorf("fpga: clock_hz = %d: must be positive", c.ClockHz)
	}
	if err := c.Hash.Validate(); err != nil {
		return err
	}
	if err := c.Directory.Validate(); err != nil {
		return err
	}
	if c.BucketBytes < 1 || c.LinkBytes < 1 || c.SignalBytes < 1 {
		return fmt.Errorf("fpga: bucket_bytes, link_bytes and signal_bytes must be positive")
	}
	if c.ChunkBytes < 0 {
		return fmt.Errorf("fpga: chunk_bytes = %d: must be 0 (store-and-forward) or positive", c.ChunkBytes)
	}
	if c.QueryTasks < 1 || c.ExportTasks < 1 {
		return fmt.Errorf("fpga: query_tasks = %d and export_tasks = %d: must be at least 1", c.QueryTasks, c.ExportTasks)
	}
	if need, room := c.TableBytes(), c.tablesRoom(placementBytes); need > room {
		return fmt.Errorf("fpga: tables need %d B (2^%d buckets, %d regions) but their placement holds %d B for them",
			need, c.Directory.BucketsLog2, c.Directory.StorageBytes/c.Directory.RegionBytes, room)
	}
	return nil
}
