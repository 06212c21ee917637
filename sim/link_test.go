package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLinkTiming(t *testing.T) {
	cases := []struct {
		name  string
		cfg   LinkConfig
		sizes []int64
		want  []Time // arrival of each transfer, all sent at time 0
	}{
		{"one transfer is size/bandwidth + latency",
			LinkConfig{Bandwidth: 10 * GBps, Latency: 500 * Nanosecond}, []int64{4096},
			[]Time{409600 + 500*Nanosecond}},
		{"back-to-back transfers serialise behind each other",
			LinkConfig{Bandwidth: 1 * GBps, Latency: 100}, []int64{1000, 1000, 1},
			[]Time{1000*Nanosecond + 100, 2000*Nanosecond + 100, 2001*Nanosecond + 100}},
		{"per-packet headers are paid per payload chunk",
			LinkConfig{Bandwidth: 1 * GBps, PacketPayloadBytes: 256, PacketHeaderBytes: 24}, []int64{512, 257},
			[]Time{560 * Nanosecond, (560 + 305) * Nanosecond}},
		{"every chunk pays its overhead (DMA descriptors)",
			LinkConfig{Bandwidth: 1 * GBps, ChunkBytes: 4096, ChunkOverhead: 50 * Nanosecond}, []int64{8192, 1},
			[]Time{(8192 + 100) * Nanosecond, (8192 + 100 + 51) * Nanosecond}},
		{"a rate that is not a whole number of ps per byte rounds up once",
			LinkConfig{Bandwidth: 3 * GBps}, []int64{1, 3},
			[]Time{334, 334 + 1000}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eng := NewEngine(0)
			l, err := NewLink(eng, "wire", c.cfg)
			require.NoError(t, err)
			lg := &logger{eng: eng}
			var got []Time
			for i, n := range c.sizes {
				got = append(got, l.Transfer(n, Event{Handler: lg, Op: int32(i)}))
			}
			assert.Equal(t, c.want, got)
			eng.Run()
			require.Len(t, lg.got, len(c.sizes), "every done event fires")
			assert.Equal(t, c.want[len(c.want)-1], eng.Now())
		})
	}
}

func TestLinkTransferAfterIdleStartsNow(t *testing.T) {
	eng := NewEngine(0)
	l, err := NewLink(eng, "wire", LinkConfig{Bandwidth: GBps, Latency: 10})
	require.NoError(t, err)
	l.Transfer(100, Event{})
	eng.RunUntil(Microsecond)
	assert.Equal(t, Microsecond+100*Nanosecond+10, l.Transfer(100, Event{}))
	assert.Equal(t, LinkStats{Transfers: 2, Bytes: 200, Busy: 200 * Nanosecond}, l.Stats())
}

// TestLinkAccountMatchesTransfers: transfers accounted in one step leave
// the wire as the same transfers sent one by one do, and one accounted to
// end before the wire is free is a programming error.
func TestLinkAccountMatchesTransfers(t *testing.T) {
	cfg := LinkConfig{Bandwidth: GBps, Latency: 10, ChunkBytes: 4096, ChunkOverhead: 5}
	eng := NewEngine(0)
	one, err := NewLink(eng, "one", cfg)
	require.NoError(t, err)
	all, err := NewLink(eng, "all", cfg)
	require.NoError(t, err)
	var n, bytes int64
	var busy, arrival Time
	for i, size := range []int64{1 << 20, 1 << 20, 300, 1 << 20, 9000} {
		arrival = one.TransferFrom(Time(i)*50*Microsecond, size, Event{})
		n, bytes, busy = n+1, bytes+size, busy+cfg.WireTime(size)
	}
	all.Account(n, bytes, busy, arrival-cfg.Latency)
	assert.Equal(t, one.Stats(), all.Stats())
	assert.Equal(t, one.FreeAt(), all.FreeAt())
	assert.Equal(t, one.Transfer(4096, Event{}), all.Transfer(4096, Event{}), "the next transfer queues behind the same wire")
	assert.Panics(t, func() { all.Account(1, 1, 1, all.FreeAt()-1) })
}

func TestLinkRejects(t *testing.T) {
	cases := map[string]LinkConfig{
		"bandwidth": {Bandwidth: 0},
		"latency":   {Bandwidth: GBps, Latency: -1},
		"payload":   {Bandwidth: GBps, PacketPayloadBytes: -1},
		"header":    {Bandwidth: GBps, PacketHeaderBytes: -1},
		"chunk":     {Bandwidth: GBps, ChunkOverhead: -1},
	}
	for field, cfg := range cases {
		_, err := NewLink(NewEngine(0), "bad", cfg)
		assert.ErrorContains(t, err, field)
	}
	for _, gbps := range []float64{0, -1, 1e-12} {
		_, err := NewBandwidthGBps(gbps)
		assert.Error(t, err, "%v GB/s", gbps)
	}
}

func TestBandwidthConversions(t *testing.T) {
	b, err := NewBandwidthGBps(25.6)
	require.NoError(t, err)
	assert.Equal(t, Bandwidth(25_600_000_000), b)
	assert.Equal(t, "25.6GB/s", b.String())
	assert.Equal(t, int64(25_600), b.BytesIn(Microsecond))
	assert.Equal(t, Time(2500), b.TransferTime(64))
	assert.Equal(t, Time(0), b.TransferTime(0))
}

func TestEffectiveBandwidth(t *testing.T) {
	cfg := LinkConfig{Bandwidth: 10 * GBps, PacketPayloadBytes: 256, PacketHeaderBytes: 24}
	assert.InDelta(t, 10*256.0/280, cfg.EffectiveBandwidth().GBps(), 1e-6)
}

// TestLinkWireTimeRemembersItsSizes: the link's remembered wire times are
// its configuration's, for sizes repeated, new, zero and past the memo.
func TestLinkWireTimeRemembersItsSizes(t *testing.T) {
	cfg := LinkConfig{Bandwidth: 3 * GBps, Latency: 7, PacketPayloadBytes: 256, PacketHeaderBytes: 24, ChunkBytes: 4096, ChunkOverhead: 11}
	l, err := NewLink(NewEngine(0), "memo", cfg)
	require.NoError(t, err)
	r := NewStreams(5).Stream("sizes")
	for i := range 2000 {
		bytes := int64(r.IntN(9)) * 1000 // few sizes, as transfers repeat them, zero among them
		if i%7 == 0 {
			bytes = int64(r.IntN(1 << 30))
		}
		require.Equal(t, cfg.WireTime(bytes), l.WireTime(bytes), "%d B", bytes)
	}
}
