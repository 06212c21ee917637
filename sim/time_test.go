package sim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTimeString(t *testing.T) {
	cases := []struct {
		in   Time
		want string
	}{
		{0, "0s"},
		{1, "1ps"},
		{999, "999ps"},
		{250 * Nanosecond, "250ns"},
		{1500 * Nanosecond, "1.5us"},
		{1500*Nanosecond + 1, "1.500001us"},
		{2 * Millisecond, "2ms"},
		{3 * Second, "3s"},
		{90 * Second, "90s"},
		{-1500 * Nanosecond, "-1.5us"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.in.String(), "Time(%d)", int64(c.in))
	}
}

func TestParseTime(t *testing.T) {
	cases := []struct {
		in   string
		want Time
	}{
		{"250ns", 250 * Nanosecond},
		{"1.5 us", 1500 * Nanosecond},
		{"1.5µs", 1500 * Nanosecond},
		{"2ms", 2 * Millisecond},
		{"3s", 3 * Second},
		{"40ps", 40},
		{" 0.000001s ", Microsecond},
		{".5ns", 500},
		{"0s", 0},
	}
	for _, c := range cases {
		got, err := ParseTime(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
}

func TestParseTimeRejects(t *testing.T) {
	for _, bad := range []string{"", "ns", "-5ns", "5", "5 minutes", "1.2.3ns", "1e3ns", "0.5ps", "abcns", "99999999999s", "5m", "."} {
		_, err := ParseTime(bad)
		require.Error(t, err, "%q", bad)
		assert.Contains(t, err.Error(), `"`+bad+`"`, "the error names the text")
	}
}

func TestTimeRoundTrip(t *testing.T) {
	r := NewStreams(7).Stream("roundtrip")
	for range 10000 {
		v := Time(r.Int64N(int64(100 * Second)))
		got, err := ParseTime(v.String())
		require.NoError(t, err)
		require.Equal(t, v, got)
	}
}

func TestTimeRound(t *testing.T) {
	cases := []struct{ in, unit, want Time }{
		{1499, 1000, 1000}, {1500, 1000, 2000}, {-1500, 1000, -2000}, {-1499, 1000, -1000}, {7, 0, 7},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.in.Round(c.unit), "%d round %d", c.in, c.unit)
	}
}

func TestAddTimeRefusesOverflow(t *testing.T) {
	cases := []struct {
		a, b Time
		want Time
		ok   bool
	}{
		{Second, Second, 2 * Second, true},
		{MaxTime, 0, MaxTime, true},
		{MaxTime, Picosecond, 0, false},
		{MaxTime / 2, MaxTime/2 + 2, 0, false},
		{-MaxTime, -2, 0, false},
		{Horizon, 3 * Horizon, 4 * Horizon, true},
	}
	for _, c := range cases {
		got, ok := AddTime(c.a, c.b)
		assert.Equal(t, c.ok, ok, "%v + %v", c.a, c.b)
		assert.Equal(t, c.want, got, "%v + %v", c.a, c.b)
	}
}

func TestScaleTimeRefusesOverflow(t *testing.T) {
	cases := []struct {
		t    Time
		k    float64
		want Time
		ok   bool
	}{
		{Second, 0.5, 500 * Millisecond, true},
		{Second, 1e9, 0, false},
		{Horizon, 5, 0, false},
		{Second, math.NaN(), 0, false},
		{Second, math.Inf(1), 0, false},
	}
	for _, c := range cases {
		got, ok := ScaleTime(c.t, c.k)
		assert.Equal(t, c.ok, ok, "%v x %v", c.t, c.k)
		assert.Equal(t, c.want, got, "%v x %v", c.t, c.k)
	}
}

// SumTime adds up to MaxTime and stops there: a sum past it would wrap
// round to a negative time (an accelerator step of absurd parts got faster).
func TestSumTimeSaturatesAtMaxTime(t *testing.T) {
	cases := []struct {
		name string
		ts   []Time
		want Time
	}{
		{"nothing", nil, 0},
		{"plain", []Time{1, 2, 3}, 6},
		{"up to MaxTime", []Time{MaxTime - 5, 5}, MaxTime},
		{"past it", []Time{MaxTime - 5, 6}, MaxTime},
		{"two at MaxTime", []Time{MaxTime, MaxTime, 1}, MaxTime},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, SumTime(c.ts...), c.name)
	}
}
