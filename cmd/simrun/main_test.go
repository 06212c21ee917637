package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func simrun(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestUsageAndUnknownCommand(t *testing.T) {
	code, _, stderr := simrun("frobnicate")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `unknown command "frobnicate"`)
	code, stdout, _ := simrun("help")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "calibrate")
}

func TestCalibrateJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every calibration")
	}
	code, stdout, stderr := simrun("calibrate", "--json")
	require.Equal(t, 0, code, stderr)
	var rows []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &rows))
	require.NotEmpty(t, rows)
	for _, r := range rows {
		keys := []string{}
		for k := range r {
			keys = append(keys, k)
		}
		assert.ElementsMatch(t, []string{"name", "target", "model", "unit", "tolerance", "source", "ok"}, keys)
		assert.Equal(t, true, r["ok"], r["name"])
	}
}

func TestCalibrateTable(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every calibration")
	}
	code, stdout, _ := simrun("calibrate")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "name  ")
	assert.Contains(t, stdout, "kioxia-cm6 QD1 4KiB read latency")
	assert.Regexp(t, `\d+ passed, 0 failed\n$`, stdout)
}

func TestCalibrateRejectsArguments(t *testing.T) {
	code, _, stderr := simrun("calibrate", "extra")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `unexpected argument "extra"`)
	code, _, _ = simrun("calibrate", "--bogus")
	assert.Equal(t, 2, code)
}
