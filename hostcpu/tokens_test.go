package hostcpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/sim"
	"github.com/kvcosim/kvcosim/workloads"
)

// idTurn is a turn of n new token ids (from first on) and outputs output
// tokens, their ids given or not.
func idTurn(first uint32, n, outputs int64, givenOutputs bool) workloads.Turn {
	tr := turn(n, outputs, 10)
	for i := range n {
		tr.NewTokens = append(tr.NewTokens, first+uint32(i))
	}
	if givenOutputs {
		for i := range outputs {
			tr.Output = append(tr.Output, 900+uint32(i))
		}
	}
	return tr
}

// TestSessionMixingIDsAndCountsIsRefused: a workload whose session gives
// ids on one turn and a count on another is refused, not run.
func TestSessionMixingIDsAndCountsIsRefused(t *testing.T) {
	cases := []struct {
		name  string
		turns []workloads.Turn
		want  string
	}{
		{"ids then a count", []workloads.Turn{idTurn(1, 5, 2, false), turn(3, 2, 10)}, "workload: session 7: turn 1 gives its new tokens as a count, turn 0 as ids"},
		{"a count then ids", []workloads.Turn{turn(3, 2, 10), turn(3, 2, 10), idTurn(1, 5, 2, false)}, "workload: session 7: turn 2 gives its new tokens as ids, turn 0 as a count"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eng := sim.NewEngine(64)
			kv, err := accel.NewKVMemory(1000, 1, 1)
			require.NoError(t, err)
			w := &workloads.Workload{Sessions: []workloads.Session{{ID: 7, Turns: c.turns}}}
			_, err = NewSystem(eng, recomputeConfig(), []Node{{Exec: &fakeExecutor{eng: eng, took: sim.Millisecond}, KV: kv}}, nil, w, sim.NewStreams(1))
			assert.ErrorContains(t, err, c.want)
		})
	}
}
