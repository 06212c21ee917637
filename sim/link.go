package sim

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
)

// Bandwidth is a data rate in bytes per second.
type Bandwidth int64

// GBps is one gigabyte (1e9 bytes) per second.
const GBps Bandwidth = 1_000_000_000

// NewBandwidthGBps converts a rate in GB/s (1e9 bytes per second) to a
// Bandwidth, rounding to the nearest byte per second; the rate must be
// positive and finite.
func NewBandwidthGBps(gbps float64) (Bandwidth, error) {
	bps := math.Round(gbps * 1e9)
	if !(bps >= 1) || bps > math.MaxInt64 {
		return 0, fmt.Errorf("bandwidth %v GB/s: must be positive and finite", gbps)
	}
	return Bandwidth(bps), nil
}

// GBps returns the rate in GB/s, for reports.
func (b Bandwidth) GBps() float64 { return float64(b) / 1e9 }

// String prints the rate in GB/s.
func (b Bandwidth) String() string { return strconv.FormatFloat(b.GBps(), 'f', -1, 64) + "GB/s" }

// TransferTime returns ceil(bytes / b) as a Time: the time to serialise
// bytes at this rate, exact to the picosecond, and at most MaxTime (a
// quotient past it, 1.2 TB at 0.125 MB/s, wrapped to a negative time, and
// one past 2^64 ps, 2.4 TB, panicked).
func (b Bandwidth) TransferTime(bytes int64) Time {
	if bytes <= 0 {
		return 0
	}
	if hi, _ := bits.Mul64(uint64(bytes), psPerSecond); hi >= uint64(b) {
		return MaxTime
	}
	q := ceilMulDiv(uint64(bytes), psPerSecond, uint64(b))
	if q > uint64(MaxTime) {
		return MaxTime
	}
	return Time(q)
}

// BytesIn returns how many whole bytes this rate moves in t.
func (b Bandwidth) BytesIn(t Time) int64 {
	hi, lo := bits.Mul64(uint64(t), uint64(b))
	q, _ := bits.Div64(hi, lo, psPerSecond)
	return int64(q)
}

// LinkConfig describes a one-way channel.
type LinkConfig struct {
	// Bandwidth is the raw rate of the wire, header bytes included.
	Bandwidth Bandwidth
	// Latency is the one-way delay from the end of serialisation to arrival.
	Latency Time
	// PacketPayloadBytes, when positive, cuts every transfer into packets of
	// at most this many payload bytes, each costing PacketHeaderBytes more on
	// the wire (a PCIe TLP, for example).
	PacketPayloadBytes int64
	// PacketHeaderBytes is the per-packet overhead on the wire.
	PacketHeaderBytes int64
	// ChunkBytes, when positive, makes every ChunkBytes of payload cost
	// ChunkOverhead more wire time (a DMA engine's per-descriptor work).
	ChunkBytes    int64
	ChunkOverhead Time
}

// Validate checks the configuration; errors name the field and value.
func (c LinkConfig) Validate() error {
	switch {
	case c.Bandwidth <= 0:
		return fmt.Errorf("link bandwidth %d B/s: must be positive", c.Bandwidth)
	case c.Latency < 0:
		return fmt.Errorf("link latency %v: must not be negative", c.Latency)
	case c.PacketPayloadBytes < 0:
		return fmt.Errorf("link packet payload %d B: must not be negative", c.PacketPayloadBytes)
	case c.PacketHeaderBytes < 0:
		return fmt.Errorf("link packet header %d B: must not be negative", c.PacketHeaderBytes)
	case c.ChunkBytes < 0 || c.ChunkOverhead < 0:
		return fmt.Errorf("link chunk %d B / overhead %v: must not be negative", c.ChunkBytes, c.ChunkOverhead)
	}
	return nil
}

// WireBytes returns the bytes on the wire for a payload of bytes.
func (c LinkConfig) WireBytes(bytes int64) int64 {
	if c.PacketPayloadBytes <= 0 || bytes <= 0 {
		return bytes
	}
	packets := (bytes + c.PacketPayloadBytes - 1) / c.PacketPayloadBytes
	return bytes + packets*c.PacketHeaderBytes
}

// WireTime returns how long a payload of bytes occupies the wire: its wire
// bytes at the link's rate plus the per-chunk overheads, at most MaxTime.
func (c LinkConfig) WireTime(bytes int64) Time {
	t := c.Bandwidth.TransferTime(c.WireBytes(bytes))
	if c.ChunkBytes > 0 && bytes > 0 {
		t = SumTime(t, MulTime((bytes+c.ChunkBytes-1)/c.ChunkBytes, c.ChunkOverhead))
	}
	return t
}

// EffectiveBandwidth is the payload rate of a long transfer, overheads
// included.
func (c LinkConfig) EffectiveBandwidth() Bandwidth {
	const probe = 1 << 30
	return Bandwidth(float64(probe) / c.WireTime(probe).Seconds())
}

// Link moves bytes one way. Transfers serialise: each starts when the wire
// is free, occupies it for WireBytes/Bandwidth, and arrives Latency later
// (so back-to-back transfers pipeline behind the latency, as on a real
// wire). A full-duplex channel is two Links.
type Link struct {
	eng       *Engine
	name      string
	cfg       LinkConfig
	freeAt    Time
	busy      Time
	bytes     int64
	transfers int64
	// arrivals holds the done events: arrivals never overtake each other
	arrivals *Lane
	// wires memoises WireTime for the last sizes asked: transfers repeat a
	// few sizes (a DMA chunk, an NVMe command's MDTS, an export's pieces),
	// and each is two divisions. A zero entry is right as it is:
	// WireTime(0) is 0.
	wires    [4]wireTime
	nextWire uint8
	// holder has booked transfers ahead on the link (hold.go)
	holder Holder
}

// NewLink validates cfg and returns a link.
func NewLink(eng *Engine, name string, cfg LinkConfig) (*Link, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("link %q: %w", name, err)
	}
	return &Link{eng: eng, name: name, cfg: cfg, arrivals: NewLane(eng, name)}, nil
}

// Name returns the link's name.
func (l *Link) Name() string { return l.name }

// Config returns the link's configuration.
func (l *Link) Config() LinkConfig { return l.cfg }

// wireTime is one size's WireTime.
type wireTime struct {
	bytes int64
	wire  Time
}

// WireTime is Config().WireTime(bytes), remembered for the last four
// sizes asked.
func (l *Link) WireTime(bytes int64) Time {
	for _, w := range &l.wires {
		if w.bytes == bytes {
			return w.wire
		}
	}
	w := wireTime{bytes, l.cfg.WireTime(bytes)}
	l.wires[l.nextWire%uint8(len(l.wires))] = w
	l.nextWire++
	return w.wire
}

// Transfer sends bytes and raises done when they have arrived (done with a
// nil Handler raises nothing). It returns the arrival time.
func (l *Link) Transfer(bytes int64, done Event) Time {
	return l.TransferFrom(l.eng.Now(), bytes, done)
}

// TransferFrom is Transfer as if asked for at time at. Earlier than now: a
// component that worked out its own traffic in closed form replays its
// transfers through it in the order it asked for them, so that the wire's
// state and totals are what Transfer would have left (a transfer that has
// arrived by now takes an empty done). Later than now: a holder books its
// chain of transfers ahead (hold.go). Either way it first makes any holder
// of the link yield.
func (l *Link) TransferFrom(at Time, bytes int64, done Event) Time {
	l.Free()
	start := max(at, l.freeAt)
	serial := l.WireTime(bytes)
	freeAt, ok := AddTime(start, serial)
	arrival, ok2 := AddTime(freeAt, l.cfg.Latency)
	if !ok || !ok2 {
		l.eng.overflow(done, fmt.Sprintf("%v + %v on link %s (%d B)", start, serial, l.name, bytes))
	}
	l.freeAt = freeAt
	l.busy += serial
	l.bytes += bytes
	l.transfers++
	if done.Handler != nil {
		l.arrivals.Schedule(arrival, done)
	}
	if tr := l.eng.Trace(); tr.AllSpans() {
		tr.Emit(Span{Component: l.name, Operation: "transfer", ID: done.Arg, Start: start, End: arrival, Bytes: bytes})
	}
	return arrival
}

// Account adds transfers that a component worked out in closed form and
// that have all arrived by now, as TransferFrom would have added them one
// by one: their number, bytes and serialisation time, and when the wire
// finishes the last of them (no earlier than it is free now).
func (l *Link) Account(transfers, bytes int64, busy, freeAt Time) {
	l.Free()
	if freeAt < l.freeAt {
		panic(fmt.Sprintf("sim: link %s at %v: transfers accounted to end at %v, before the wire is free at %v", l.name, l.eng.Now(), freeAt, l.freeAt))
	}
	l.freeAt = freeAt
	l.busy += busy
	l.bytes += bytes
	l.transfers += transfers
}

// FreeAt returns when the wire finishes its last accepted transfer.
func (l *Link) FreeAt() Time {
	l.Free()
	return l.freeAt
}

// LinkStats are a link's totals.
type LinkStats struct {
	Transfers, Bytes int64
	// Busy is the time the wire spent serialising.
	Busy Time
}

// Stats returns the totals so far.
func (l *Link) Stats() LinkStats {
	l.Free()
	return LinkStats{Transfers: l.transfers, Bytes: l.bytes, Busy: l.busy}
}
