package textdiff_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	_ "github.com/kvcosim/kvcosim/internal/golden" // accepts -update
	"github.com/kvcosim/kvcosim/internal/textdiff"
)

func TestDiff(t *testing.T) {
	assert.Empty(t, textdiff.Diff("a\nb\n", "a\nb\n"))
	assert.Equal(t, "line 2:\n- b\n+ c\nline 3:\n- \n+ d\n", textdiff.Diff("a\nb\n", "a\nc\nd"))
}
