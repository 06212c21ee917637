package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTransferPastMaxTimeOverflows: a transfer whose serialisation passes
// MaxTime takes MaxTime, and its link panics with an *Overflow naming the
// link, as the engine does for any time past MaxTime. Until now the
// quotient wrapped to a negative time (one just under 2^64 ps to a small
// negative one) and the lane panicked with a time before now (on a link
// booked ahead the transfer could arrive early instead), and one past
// 2^64 ps panicked in ceilMulDiv.
func TestTransferPastMaxTimeOverflows(t *testing.T) {
	const slow = Bandwidth(125_000) // system.network_gbps: 0.001
	for _, c := range []struct {
		name  string
		bytes int64
		want  Time
	}{
		{"within MaxTime", 1_000_000_000_000, 8_000_000 * Second},
		{"just past MaxTime", 1_152_921_504_607, MaxTime},
		{"past 2^63 ps", 2_148_557_397_828, MaxTime},
		{"just under 2^64 ps", 2_300_000_000_000, MaxTime},
		{"past 2^64 ps", 2_400_000_000_000, MaxTime},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, slow.TransferTime(c.bytes), "TransferTime")
			assert.Equal(t, c.want, LinkConfig{Bandwidth: slow}.WireTime(c.bytes), "WireTime")
			chunked := LinkConfig{Bandwidth: 1 << 62, ChunkBytes: 1, ChunkOverhead: Second}
			assert.Equal(t, MaxTime, chunked.WireTime(c.bytes), "a chunked link's overheads past MaxTime")
			eng := NewEngine(0)
			l, err := NewLink(eng, "net", LinkConfig{Bandwidth: slow, Latency: Microsecond})
			require.NoError(t, err)
			transfer := func() { l.Transfer(c.bytes, Event{Handler: &logger{eng: eng}}) }
			if c.want < MaxTime {
				require.NotPanics(t, transfer)
				assert.Panics(t, transfer, "a second one behind it passes MaxTime")
				return
			}
			defer func() {
				o, ok := recover().(*Overflow)
				require.True(t, ok, "an *Overflow")
				assert.Contains(t, o.What, "on link net")
			}()
			transfer()
		})
	}
}

// TestMulTimeSaturates: n x t is exact within MaxTime and MaxTime past it,
// where Time(n) * t wrapped (negative, or a small positive time).
func TestMulTimeSaturates(t *testing.T) {
	for _, c := range []struct {
		n    int64
		t    Time
		want Time
	}{
		{0, Second, 0},
		{5, 0, 0},
		{9_223_372, Second, 9_223_372 * Second},
		{9_223_373, Second, MaxTime},  // Time(n)*t: -9223371.073709551616s
		{20_000_000, Second, MaxTime}, // Time(n)*t: 1553255.926290448384s
		{1, MaxTime, MaxTime},
		{2, MaxTime, MaxTime},
		{1 << 62, 4, MaxTime},
	} {
		assert.Equal(t, c.want, MulTime(c.n, c.t), "%d x %v", c.n, c.t)
	}
}
