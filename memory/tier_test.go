package memory

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

// A tier larger than its device preset's drive (storage.tiers with capacity
// unlimited, say) is addressed to its last byte: the tier's device spans it,
// as the one-tier form's drive spans the store. Before, an SSD tier kept the
// preset's 3.84 TB and an export past it panicked.
func TestTierDeviceSpansItsTier(t *testing.T) {
	const tier = 20_000_000_000_000 // 20 TB, past every SSD preset
	for _, preset := range TierDeviceNames() {
		for _, res := range []SSDResolution{ResolutionPage, ResolutionRequest} {
			t.Run(preset+"/"+SSDResolutions.Name(res), func(t *testing.T) {
				eng := sim.NewEngine(0)
				d, err := NewTierDevice(eng, "tier", preset, tier, res, 1_000_000)
				require.NoError(t, err)
				c := newCompletions(eng)
				d.Access(Request{Addr: tier - 1<<20, Bytes: 1 << 20, Write: true, Done: c.done(1)})
				d.Access(Request{Addr: tier - 1<<20, Bytes: 1 << 20, Done: c.done(2)})
				eng.Run()
				assert.Len(t, c.at, 2, "both the write and the read of the tier's last MiB complete")
				assert.Equal(t, Traffic{BytesRead: 1 << 20, BytesWritten: 1 << 20}, Traffic{BytesRead: d.Traffic().BytesRead, BytesWritten: d.Traffic().BytesWritten})
			})
		}
	}
}

func TestTierDeviceRejectsAnUnknownPreset(t *testing.T) {
	_, err := NewTierDevice(sim.NewEngine(0), "tier", "floppy", 1<<30, ResolutionPage, 1_000_000)
	assert.ErrorContains(t, err, `unknown tier device "floppy": valid devices are kioxia-cm6`)
}
