// Package fpga models the patent's FPGA KV-cache engine in time: the hash
// engine, the query and export engines whose stages read the tokens,
// hash them, walk the address-mapping table and the chain table and
// allocate from the free-address FIFOs of a Directory, and move
// the cache between storage, the card's memory and the host by DMA. The
// index itself (keys, tables, chains, FIFOs, layouts) is package
package fpga

import (
	"fmt"

	"github.com/kvcosim/kvcosim/sim"
)

// HashEngineConfig is the timing of the pipelined hash engine.
type HashEngineConfig struct {
	// Lanes each absorb one 32-byte XXH64 stripe per cycle.
	Lanes int
	// SetupCycles per task (loading the seed and the task descriptor) and
	// FinalizeCycles (the avalanche after the last stripe).
	SetupCycles, FinalizeCycles sim.Cycles
	Seed                        uint64
}

// Validate checks the configuration.
func (c HashEngineConfig) Validate() error {
	if c.Lanes < 1 || c.Lanes > 64 {
		return fmt.Errorf("fpga hash: lanes = %d: must be in [1, 64]", c.Lanes)
	}
	if c.SetupCycles < 0 || c.FinalizeCycles < 0 {
		return fmt.Errorf("fpga hash: setup_cycles = %d and finalize_cycles = %d must not be negative", c.SetupCycles, c.FinalizeCycles)
	}
	return nil
}

// Cycles is the engine's time to hash bytes: setup, one cycle per 32-byte
// stripe per lane, finalisation.
func (c HashEngineConfig) Cycles(bytes int64) sim.Cycles {
	stripes := (bytes + 31) / 32
	return c.SetupCycles + sim.Cycles((stripes+int64(c.Lanes)-1)/int64(c.Lanes)) + c.FinalizeCycles
}
