package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/internal/golden"
)

// TestExplainDefaultSession is a teaching fixture: session 3 of the
// default scenario, whose second turn is a query that hits.
func TestExplainDefaultSession(t *testing.T) {
	code, stdout, stderr := simrun("explain", "--session", "3")
	require.Equal(t, 0, code, stderr)
	golden.Check(t, filepath.Join("testdata", "explain-session3.golden"), stdout)
	assert.Contains(t, stdout, "FPGA imports the cache data from the SSD into the exchange memory")
	assert.Contains(t, stdout, "(claim 9)")
}

func TestExplainBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"explain"}, "usage: simrun explain"},
		{[]string{"explain", "--session", "100000", "--set", "workload.sessions=5"}, "session 100000 made no request in this scenario"},
		{[]string{"explain", "--session", "1", "--set", "fpga.hashing=md5"}, "key fpga.hashing"},
	} {
		code, _, stderr := simrun(c.args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Contains(t, stderr, c.want)
	}
}
