package jsonkeys

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckFindsTheFirstKeyWrittenTwice(t *testing.T) {
	cases := []struct {
		name, json string
		want       *DuplicateError
	}{
		{"top level", "{\"gpu\": \"H100\",\n \"gpu\": \"A100\"}", &DuplicateError{Path: "gpu", Line: 2, First: 1}},
		{"in a row of a list", "{\"decode\": {\"m\": [{\"a\": 1}, {\"step_s\": 1,\n\n\"step_s\": 2}]}}", &DuplicateError{Path: "decode.m[1].step_s", Line: 3, First: 1}},
		{"after a nested object", `{"a": {"b": 1}, "c": [1, {"d": 2}], "a": 3}`, &DuplicateError{Path: "a", Line: 1, First: 1}},
		{"in a list of lists", `[[{"x": 1, "x": 2}]]`, &DuplicateError{Path: "[0][0].x", Line: 1, First: 1}},
		{"the same key in two objects", `[{"x": 1}, {"x": 2}, {"y": {"x": 3}}]`, nil},
		{"a key equal to a value", `{"a": "b", "b": "a"}`, nil},
		{"empty objects and lists", `{"a": {}, "b": [], "c": [{}]}`, nil},
		{"cut short after a duplicate", `{"a": 1, "a": `, &DuplicateError{Path: "a", Line: 1, First: 1}},
		{"an escaped duplicate", `{"a": 1, "\u0061": 2}`, &DuplicateError{Path: "a", Line: 1, First: 1}},
		{"braces and colons in strings", `{"a": "{\"a\": 1}", "b": [":", "}"], "c": {"a": "x"}}`, nil},
		{"an escaped quote in a key", `{"a\"": 1, "a": 2}`, nil},
		{"broken before a duplicate", `{"a": 1, ]`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check([]byte(c.json))
			if c.want == nil {
				assert.NoError(t, err)
				return
			}
			var got *DuplicateError
			require.ErrorAs(t, err, &got)
			assert.Equal(t, c.want, got)
		})
	}
}

func ExampleCheck() {
	err := Check([]byte("{\"gpu\": \"NVIDIA H100\",\n \"gpu\": \"NVIDIA A100\"}"))
	fmt.Println(err)
	// Output: line 2: key gpu: written twice (first on line 1): give each key once
}

// FuzzScanAgreesWithTheWalk: on valid JSON the byte scan finds a duplicate
// exactly when the token walk does.
func FuzzScanAgreesWithTheWalk(f *testing.F) {
	for _, seed := range []string{`{"a": 1, "a": 2}`, `[{"x": [1, {"y": 2, "y": 3}]}]`, `{"a": "\"a\":", "b": {"a": 1}}`,
		`{"\u0061": 1, "a": 2}`, `{"a\\": 1, "a": 2}`, `"x"`, `[]`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		if scan, walked := hasDuplicate(data), walk(data) != nil; scan != walked {
			t.Fatalf("%q: the scan says %v, the walk %v", data, scan, walked)
		}
	})
}
