// Package sim is kvcosim's discrete-event kernel: simulated time, clock
// domains, the event engine, queueing servers, links, named random streams,
// statistics and trace hooks. It knows no component of the simulated system.
package sim

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Time is simulated time in picoseconds. The 1 ps tick is the resolution of
// every model (as in gem5 and SST); int64 covers about 106 days.
type Time int64

// Units of Time.
const (
	Picosecond  Time = 1
	Nanosecond  Time = 1000 * Picosecond
	Microsecond Time = 1000 * Nanosecond
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// MaxTime is the largest representable time; it stands for "never".
const MaxTime Time = math.MaxInt64

// Horizon is the latest time that one input of a run (a duration, an
// arrival, a trace's span) may stand for: 2,000,000 s (about 23 days),
// under a quarter of MaxTime, so that a run's sums of a few such times stay
// far from overflow.
const Horizon Time = 2_000_000 * Second

// SumTime adds non-negative times, at most MaxTime: a sum that would pass
// it is MaxTime, which the engine refuses to schedule (an *Overflow), where
// a plain sum would wrap round to a negative time.
func SumTime(ts ...Time) Time {
	var s Time
	for _, t := range ts {
		if t > 0 && s > MaxTime-t {
			return MaxTime
		}
		s += t
	}
	return s
}

// MulTime returns n times t for non-negative n and t, at most MaxTime: a
// count of accesses times a latency (a chain walk of ten million hops at
// cpu.host_access 1s) that would pass it is MaxTime, where a plain product
// wraps round, to a negative time or to a small positive one.
func MulTime(n int64, t Time) Time {
	if n > 0 && t > 0 && n > int64(MaxTime/t) {
		return MaxTime
	}
	return Time(n) * t
}

// AddTime returns a+b, or false when the sum is outside int64 picoseconds.
func AddTime(a, b Time) (Time, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

// ScaleTime returns t times k rounded to the picosecond, or false when k is
// not finite or the product is outside int64 picoseconds.
func ScaleTime(t Time, k float64) (Time, bool) {
	p := float64(t) * k
	if math.IsNaN(p) || p >= float64(MaxTime) || p <= -float64(MaxTime) {
		return 0, false
	}
	return Time(math.Round(p)), true
}

// timeUnits lists the printable units, largest first.
var timeUnits = []struct {
	name string
	size Time
}{
	{"s", Second}, {"ms", Millisecond}, {"us", Microsecond}, {"ns", Nanosecond}, {"ps", Picosecond},
}

// String prints t exactly in the largest unit not greater than |t|, with the
// fraction trimmed of trailing zeros: "1.5us", "250ns", "3s", "0s".
func (t Time) String() string {
	if t == 0 {
		return "0s"
	}
	sign := ""
	mag := uint64(t)
	if t < 0 {
		sign = "-"
		mag = uint64(-t) // MinInt64 wraps to its own magnitude as uint64
	}
	for _, u := range timeUnits {
		size := uint64(u.size)
		if mag < size && u.size != Picosecond {
			continue
		}
		whole, frac := mag/size, mag%size
		s := sign + strconv.FormatUint(whole, 10)
		if frac != 0 {
			digits := len(strconv.FormatUint(size, 10)) - 1
			fs := fmt.Sprintf("%0*d", digits, frac)
			s += "." + strings.TrimRight(fs, "0")
		}
		return s + u.name
	}
	panic("unreachable")
}

// Seconds returns t in seconds as a float64, for reports only: models keep
// time in picoseconds.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// ParseTime parses a non-negative duration such as "250ns", "1.5 us", "2ms",
// "3s" or "40ps" (also "µs"). The value must be exact to the picosecond.
// Errors quote the offending text.
func ParseTime(text string) (Time, error) {
	s := strings.TrimSpace(text)
	num := strings.TrimRightFunc(s, func(r rune) bool { return r == 's' || r == 'm' || r == 'u' || r == 'n' || r == 'p' || r == 'µ' })
	unitName := strings.TrimSpace(s[len(num):])
	num = strings.TrimSpace(num)
	unit, ok := unitByName(unitName)
	if !ok {
		return 0, fmt.Errorf("duration %q: unit must be one of ps, ns, us, ms, s", text)
	}
	ps, err := parseDecimalScaled(num, uint64(unit))
	if err != nil {
		return 0, fmt.Errorf("duration %q: %v", text, err)
	}
	return Time(ps), nil
}

func unitByName(name string) (Time, bool) {
	if name == "µs" {
		name = "us"
	}
	for _, u := range timeUnits {
		if u.name == name {
			return u.size, true
		}
	}
	return 0, false
}

// parseDecimalScaled parses an unsigned decimal "123.456" and multiplies it
// by scale exactly, failing if the result is fractional or exceeds int64.
func parseDecimalScaled(num string, scale uint64) (int64, error) {
	if num == "" {
		return 0, fmt.Errorf("missing number")
	}
	if strings.HasPrefix(num, "-") {
		return 0, fmt.Errorf("negative values are not allowed")
	}
	intPart, fracPart, _ := strings.Cut(num, ".")
	if intPart == "" && fracPart == "" {
		return 0, fmt.Errorf("missing digits")
	}
	for _, part := range []string{intPart, fracPart} {
		if strings.TrimLeft(part, "0123456789") != "" {
			return 0, fmt.Errorf("malformed number %q", num)
		}
	}
	whole := uint64(0)
	if intPart != "" {
		w, err := strconv.ParseUint(intPart, 10, 63)
		if err != nil {
			return 0, fmt.Errorf("number %q out of range", num)
		}
		whole = w
	}
	if whole > uint64(math.MaxInt64)/scale {
		return 0, fmt.Errorf("number %q out of range", num)
	}
	total := whole * scale
	fracPart = strings.TrimRight(fracPart, "0")
	div := scale
	for i, c := range fracPart {
		if div%10 != 0 {
			return 0, fmt.Errorf("finer than 1ps at digit %d of %q", i+1, num)
		}
		div /= 10
		total += uint64(c-'0') * div
	}
	if total > math.MaxInt64 {
		return 0, fmt.Errorf("number %q out of range", num)
	}
	return int64(total), nil
}

// Round returns t rounded to the nearest multiple of unit (half away from
// zero); unit must be positive.
func (t Time) Round(unit Time) Time {
	if unit <= 0 {
		return t
	}
	r := t % unit
	if r < 0 {
		r = -r
	}
	if r+r < unit {
		return t - t%unit
	}
	if t < 0 {
		return t - t%unit - unit
	}
	return t - t%unit + unit
}

// Interpolate returns the point k/n of the way from a to b (b >= a, 0 <=
// k <= n), a time or a byte count, rounded up, with a 128-bit product: a
// point inside a span whose length times a byte count passes int64.
func Interpolate[T ~int64](a, b T, k, n int64) T {
	if n <= 0 || k <= 0 || b <= a {
		return a
	}
	return a + T(ceilMulDiv(uint64(b-a), uint64(min(k, n)), uint64(n)))
}
