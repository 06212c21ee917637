package store

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvcosim/kvcosim/kvstore"
)

// TestUnsavedSplitsAnExtentAtTheWritesInFlight: the bytes an asynchronous
// export is still writing come from its buffer, the rest from the tier.
func TestUnsavedSplitsAnExtentAtTheWritesInFlight(t *testing.T) {
	x := func(addr, bytes int64, tier int) kvstore.Extent {
		return kvstore.Extent{Addr: addr, Bytes: bytes, Tier: tier}
	}
	for _, c := range []struct {
		name     string
		e        kvstore.Extent
		saving   []kvstore.Extent
		buffered int64
		rest     []kvstore.Extent
	}{
		{"nothing in flight", x(100, 50, 0), nil, 0, []kvstore.Extent{x(100, 50, 0)}},
		{"all of it in flight", x(100, 50, 0), []kvstore.Extent{x(80, 100, 0)}, 50, nil},
		{"another tier's write", x(100, 50, 0), []kvstore.Extent{x(100, 50, 1)}, 0, []kvstore.Extent{x(100, 50, 0)}},
		{"its tail in flight (a delta)", x(100, 50, 0), []kvstore.Extent{x(130, 40, 0)}, 20, []kvstore.Extent{x(100, 30, 0)}},
		{"two writes in its middle", x(100, 100, 0), []kvstore.Extent{x(120, 10, 0), x(150, 20, 0)}, 30,
			[]kvstore.Extent{x(100, 20, 0), x(130, 20, 0), x(170, 30, 0)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			buffered, rest := unsaved(c.e, c.saving)
			assert.Equal(t, c.buffered, buffered)
			assert.Equal(t, c.rest, rest)
		})
	}
}
