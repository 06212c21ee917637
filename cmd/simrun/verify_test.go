package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVerifyPrintsVariantsAndTheClosingLine(t *testing.T) {
	code, stdout, stderr := simrun("verify", "--sessions", "12", "--seed", "5")
	assert.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	assert.Equal(t, "12 passed, 0 failed", lines[len(lines)-1])
	assert.Contains(t, stdout, "variant block/fpga/sample")
	assert.Contains(t, stdout, "variant patent/cpu/delta/beam")
	assert.Contains(t, stderr, "variant 6/6 done, ", "progress on standard error")
}

func TestVerifyBadUsageExitsTwo(t *testing.T) {
	for _, args := range [][]string{{"verify", "--sessions", "0"}, {"verify", "extra"}, {"verify", "--seed", "x"}} {
		code, _, stderr := simrun(args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.NotEmpty(t, stderr)
	}
}
