package memory

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

// TestAccessOutsideTheDevicePanics: an access must lie inside its device
// (docs/invariants.md, INV-20); one that does not is a bug in its caller,
// and the device stops the run naming itself, the simulated time and the
// range, at either resolution of a drive.
func TestAccessOutsideTheDevicePanics(t *testing.T) {
	eng := sim.NewEngine(0)
	hbm := DefaultExchangeMemory()
	dram, err := NewDRAM(eng, hbm)
	require.NoError(t, err)
	drive := KioxiaCM6()
	page, err := NewSSD(eng, drive)
	require.NoError(t, err)
	drive.Resolution = ResolutionRequest
	request, err := NewSSD(eng, drive)
	require.NoError(t, err)
	for _, c := range []struct {
		dev           Device
		name, what    string
		capacityBytes int64
	}{
		{dram, hbm.Name, "device's", hbm.CapacityBytes()},
		{page, drive.Name, "drive's", drive.CapacityBytes},
		{request, drive.Name, "drive's", drive.CapacityBytes},
	} {
		for _, r := range []Request{{Addr: c.capacityBytes - 4096, Bytes: 8192}, {Addr: -1, Bytes: 1}, {Addr: 0, Bytes: 0}} {
			want := fmt.Sprintf("memory: %s at 0s: access [%d, %d) outside the %s %d bytes", c.name, r.Addr, r.Addr+r.Bytes, c.what, c.capacityBytes)
			assert.PanicsWithValue(t, want, func() { c.dev.Access(r) })
		}
	}
}
