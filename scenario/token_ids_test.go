package scenario

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMixedSessionIsRefused: a session that gives token ids on one turn
// and a count on another is refused when the scenario is built, naming
// the file and line, in either mode (functional mode once ran off the end
// of its prompt).
func TestMixedSessionIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mixed.jsonl")
	text := `{"session": "a", "turn": 0, "arrival_s": 0, "token_ids": [1, 2, 3, 4, 5], "output_tokens": 5}` + "\n" +
		`{"session": "a", "turn": 1, "arrival_s": 10, "new_tokens": 30, "output_tokens": 5}` + "\n" +
		`{"session": "a", "turn": 2, "arrival_s": 20, "token_ids": [1, 2], "output_tokens": 5}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	for _, mode := range []string{"timing", "functional"} {
		t.Run(mode, func(t *testing.T) {
			l, err := Load("", []string{"mode=" + mode, "workload.kind=sessions", "workload.path=" + path})
			require.NoError(t, err)
			_, err = Build(l)
			assert.ErrorContains(t, err, path+`:2: field token_ids: missing: session "a" gave token_ids from its turn 0 (line 1)`)
		})
	}
}
