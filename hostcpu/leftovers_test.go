package hostcpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/kvstore"
	"github.com/kvcosim/kvcosim/workloads"
)

// TestConservationNamesWhatARunLeftBehind ends a run, then leaves behind
// in turn each thing the conservation check must find: a miscounted
// export and every table or buffer that must be empty at the end. The
// error names it and the simulated time.
func TestConservationNamesWhatARunLeftBehind(t *testing.T) {
	cases := []struct {
		name  string
		leave func(s *System)
		want  string
	}{
		{"an export started, never ended", func(s *System) { s.counts.ExportsStarted++ }, "exports: 1 started but 0 ended (0 of them failed) + 0 dropped"},
		{"an export in the table", func(s *System) { s.export.tasks.Put(exportTask{}) }, "1 exports in the export table at the end"},
		{"an export blocked", func(s *System) { s.export.blocked.Push(0) }, "1 exports waiting for room in the asynchronous buffer"},
		{"bytes in the async buffer", func(s *System) { s.export.buffered = 4096 }, "4096 bytes in the asynchronous save buffer"},
		{"a request", func(s *System) { s.reqs.Put(request{}) }, "1 requests in the request table"},
		{"a transfer", func(s *System) { s.moves.moves.Put(transfer{}) }, "1 transfers in the transfer table"},
		{"a kept key", func(s *System) { s.waiting = map[kvstore.Key]int{{Tokens: 1}: 1} }, "1 keys kept for waiting requests"},
		{"a pre-load's bytes", func(s *System) { s.nodes[0].preloadBytes = 512 }, "512 bytes in node 0's pre-load read buffer"},
		{"a session exporting", func(s *System) { s.sessions[0].exportAgain = true }, "1 sessions still exporting"},
		{"a request parked", func(s *System) { s.sessions[0].parked = 3 }, "1 requests parked behind an export"},
		{"a raise moving", func(s *System) { s.sessions[0].raising = 2 }, "1 sessions whose look-ahead raise is moving"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _, eng := newTestSystem(t, recomputeConfig(), 1000, workloads.Session{ID: 0, Turns: []workloads.Turn{turn(100, 2, 0), turn(10, 2, 5)}})
			eng.Run()
			_, err := s.Conservation()
			require.NoError(t, err)
			c.leave(s)
			_, err = s.Conservation()
			require.Error(t, err)
			assert.ErrorContains(t, err, c.want)
			assert.ErrorContains(t, err, "hostcpu: at "+eng.Now().String()+": counts not conserved")
		})
	}
}
