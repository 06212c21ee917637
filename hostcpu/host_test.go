package hostcpu

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvcosim/kvcosim/hostcpu/store"
)

// TestTicketsCarryTheirEvent: a ticket gives back the op and the id it
// was made of, and a background move's ticket is the System's no-op.
func TestTicketsCarryTheirEvent(t *testing.T) {
	s := &System{}
	for _, c := range []struct {
		op int32
		id int
	}{{opQueried, 0}, {opImported, 7}, {opExportStep, 1 << 40}, {opPreloaded, 123456}} {
		ev := eventOf(s, ticket(c.op, c.id))
		assert.Equal(t, c.op, ev.Op)
		assert.Equal(t, int64(c.id), ev.Arg)
		assert.Same(t, s, ev.Handler)
	}
	assert.Equal(t, int32(opNone), eventOf(s, store.Background).Op)
}
