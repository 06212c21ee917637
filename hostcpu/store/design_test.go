package store

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseDesign: every row of the table parses back by its name and has
// a store; an unknown name is refused with the list of every design.
func TestParseDesign(t *testing.T) {
	names := DesignNames()
	require.Len(t, names, len(designs))
	assert.Equal(t, "recompute", names[0], "the baseline comes first")
	for _, name := range names {
		d, err := ParseDesign(name)
		require.NoError(t, err)
		assert.Equal(t, name, d.String())
		assert.NotNil(t, d.New, name)
		assert.Equal(t, d.Card, d.Card && d.Stores, "%s: a card is a store", name)
	}
	_, err := ParseDesign("tpu")
	assert.EqualError(t, err, fmt.Sprintf(`"tpu" is not allowed (allowed: %s)`, strings.Join(names, ", ")))
}
