// Package slurm holds the scripts that run a sweep on Slurm (a job array
// of shards and a dependent merge) and the test that runs them on a
// one-node cluster of this machine.
package slurm

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSweepOnSlurm runs selftest.sh: a sweep of 8 points as an array of 4
// tasks and a dependent merge on a one-node Slurm cluster it starts, then
// a byte-for-byte comparison with a local sweep of the same file. It needs
// root and Slurm and MUNGE installed (install-debian.sh, run first), so it
// runs only with KVCOSIM_SLURM=1.
func TestSweepOnSlurm(t *testing.T) {
	if os.Getenv("KVCOSIM_SLURM") != "1" {
		t.Skip("set KVCOSIM_SLURM=1 to run a sweep on a one-node Slurm cluster (needs root and tools/slurm/install-debian.sh run first)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testBudget(t))
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "selftest.sh")
	// On a timeout the script gets SIGTERM, so that it stops its daemons.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Log("selftest.sh:\n" + out.String())
	require.NoError(t, err, "selftest.sh failed; its output is above")
	assert.Contains(t, out.String(), "selftest: PASS: 4 array tasks and the merge match the local sweep byte for byte")
}

// testBudget is the time selftest.sh may take: ten minutes, or less when
// go test's own -timeout would end the test first (then a minute short of
// it, so that the script still stops its daemons).
func testBudget(t *testing.T) time.Duration {
	budget := 10 * time.Minute
	if deadline, ok := t.Deadline(); ok {
		budget = min(budget, time.Until(deadline)-time.Minute)
	}
	require.Positive(t, budget, "go test's -timeout leaves selftest.sh no time: raise it")
	return budget
}
