package hostcpu

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvcosim/kvcosim/hostcpu/store"
	"github.com/kvcosim/kvcosim/memory"
	"github.com/kvcosim/kvcosim/sim"
)

// Other work's share of the cores stretches a core's time by
// 1/(1 - share), exactly, and none leaves it as it is.
func TestBackgroundStretchesTheCoresWork(t *testing.T) {
	for _, c := range []struct {
		ppm           int64
		service, want sim.Time
	}{
		{0, 12345, 12345},
		{500_000, 1000, 2000},
		{750_000, 3 * sim.Second, 12 * sim.Second},
		{950_000, 7, 140},
		{900_000, 1, 10},
	} {
		assert.Equal(t, c.want, Config{BackgroundPPM: c.ppm}.stretch(c.service), "%d ppm", c.ppm)
	}
}

// A move's host work: a command per chunk at each storage hop, a DMA per
// chunk at each link, its bytes copied once where a staging hop writes
// host memory; a move of one hop, or of one chunk, is one piece.
func TestHostWorkCountsAMovesPieces(t *testing.T) {
	eng := sim.NewEngine(0)
	host, err := memory.NewFlatMemory(eng, "host", 1e9, 0)
	assert.NoError(t, err)
	link, err := sim.NewLink(eng, "pcie", sim.LinkConfig{Bandwidth: 1e9})
	assert.NoError(t, err)
	drive, err := memory.NewFlatMemory(eng, "drive", 1e9, 0)
	assert.NoError(t, err)
	n := store.Node{HostMemory: host, HostMemoryBytes: 1 << 30, Tiers: []memory.Device{drive}, ToGPU: link}
	var w HostWork
	w.move(0, append(n.ToHost(0, 0), store.Hop{Link: link}), 10<<20, 4<<20) // import: 3 chunks
	assert.Equal(t, HostWork{StorageCommands: 3, DMATransfers: 3, StagedBytes: 10 << 20, PeakWindowBytes: 10 << 20, windowBytes: 10 << 20}, w)
	w.move(PeakWindow, []store.Hop{n.Staging(false), {Dev: drive, Write: true}}, 1<<20, 4<<20) // a save of one chunk, next window
	w.move(PeakWindow, []store.Hop{{Link: link}}, 8<<20, 4<<20)                                // one hop: whole
	assert.Equal(t, HostWork{StorageCommands: 4, DMATransfers: 4, StagedBytes: 10 << 20, PeakWindowBytes: 10 << 20, window: 1, windowBytes: 1 << 20}, w)
}
