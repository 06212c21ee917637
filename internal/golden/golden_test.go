package golden

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDiff(t *testing.T) {
	assert.Empty(t, Diff("a\nb\n", "a\nb\n"))
	assert.Equal(t, "line 2:\n- b\n+ c\nline 3:\n- \n+ d\n", Diff("a\nb\n", "a\nc\nd"))
}
