package sim

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
)

// Cycles counts clock edges of one clock domain. It is a type of its own so
// that a cycle count can never be added to a Time without a Clock.
type Cycles int64

// psPerSecond is the number of Time ticks in a second.
const psPerSecond = uint64(Second)

// Clock is a clock domain of a whole number of hertz. Its k-th rising edge
// (k >= 0, edge 0 at time 0) is at floor(k * 1e12 / hz) picoseconds, computed
// exactly in 128-bit arithmetic, so clocks whose period is not a whole
// number of picoseconds (3 GHz, 322.265625 MHz) never drift.
type Clock struct {
	hz uint64
}

// NewClock returns a clock of hz hertz; hz must be positive.
func NewClock(hz int64) (Clock, error) {
	if hz <= 0 {
		return Clock{}, fmt.Errorf("clock frequency %d Hz: must be positive", hz)
	}
	return Clock{hz: uint64(hz)}, nil
}

// NewClockMHz returns a clock of mhz megahertz, which must be positive and a
// whole number of hertz (322.265625 MHz is allowed, 0.1234567 MHz is not).
func NewClockMHz(mhz float64) (Clock, error) {
	hz := mhz * 1e6
	if !(hz > 0) || hz > math.MaxInt64 || math.IsInf(hz, 0) {
		return Clock{}, fmt.Errorf("clock frequency %v MHz: must be positive and finite", mhz)
	}
	if hz != math.Round(hz) {
		return Clock{}, fmt.Errorf("clock frequency %v MHz: must be a whole number of hertz", mhz)
	}
	return NewClock(int64(hz))
}

// MustClockMHz is NewClockMHz for constants in code; it panics on a bad
// constant, which is a programming error.
func MustClockMHz(mhz float64) Clock {
	c, err := NewClockMHz(mhz)
	if err != nil {
		panic(err)
	}
	return c
}

// Hz returns the frequency in hertz.
func (c Clock) Hz() int64 { return int64(c.hz) }

// String prints the frequency, for example "322.265625MHz".
func (c Clock) String() string {
	return strconv.FormatFloat(float64(c.hz)/1e6, 'f', -1, 64) + "MHz"
}

// Edge returns the time of the k-th edge, floor(k * 1e12 / hz).
func (c Clock) Edge(k Cycles) Time {
	if k < 0 {
		panic(fmt.Sprintf("sim: Clock.Edge of negative cycle %d", k))
	}
	hi, lo := bits.Mul64(uint64(k), psPerSecond)
	if hi >= c.hz {
		panic(fmt.Sprintf("sim: Clock.Edge(%d) at %v overflows Time", k, c))
	}
	q, _ := bits.Div64(hi, lo, c.hz)
	if q > math.MaxInt64 {
		panic(fmt.Sprintf("sim: Clock.Edge(%d) at %v overflows Time", k, c))
	}
	return Time(q)
}

// CyclesAt returns the index of the last edge at or before t (t >= 0): the
// number of whole cycles that have elapsed by t.
func (c Clock) CyclesAt(t Time) Cycles {
	// edge(k) <= t  <=>  k*1e12/hz < t+1  <=>  k < (t+1)*hz/1e12
	return Cycles(ceilMulDiv(uint64(t)+1, c.hz, psPerSecond) - 1)
}

// FirstEdgeAtOrAfter returns the index of the first edge at or after t.
func (c Clock) FirstEdgeAtOrAfter(t Time) Cycles {
	// edge(k) >= t  <=>  k*1e12/hz >= t  <=>  k >= t*hz/1e12
	return Cycles(ceilMulDiv(uint64(t), c.hz, psPerSecond))
}

// NextEdge returns the time of the first edge at or after t.
func (c Clock) NextEdge(t Time) Time { return c.Edge(c.FirstEdgeAtOrAfter(t)) }

// After returns the time n cycles after the first edge at or after t: the
// moment an operation of n cycles that starts at t (aligned to the clock)
// completes.
func (c Clock) After(t Time, n Cycles) Time { return c.Edge(c.FirstEdgeAtOrAfter(t) + n) }

// Duration returns the length of n cycles that start at edge 0. Use After
// for operations that start at an arbitrary time: the length of n cycles
// varies by up to one picosecond with the starting edge.
func (c Clock) Duration(n Cycles) Time { return c.Edge(n) }

// ceilMulDiv returns ceil(a*b/d) for a 128-bit intermediate product.
func ceilMulDiv(a, b, d uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi >= d {
		panic(fmt.Sprintf("sim: %d*%d/%d overflows", a, b, d))
	}
	q, r := bits.Div64(hi, lo, d)
	if r != 0 {
		q++
	}
	return q
}
