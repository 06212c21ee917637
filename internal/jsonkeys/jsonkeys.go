// Package jsonkeys finds a key written twice in one JSON object, which
// encoding/json reads silently as the last of them: a profile's "gpu"
// given twice was read as the second GPU.
package jsonkeys

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// DuplicateError is a key written twice in one object: Path is its dotted
// path from the top ("decode.llama-3-8b[0].step_s"), Line and First the
// lines (from 1) of the second and the first.
type DuplicateError struct {
	Path        string
	Line, First int
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("line %d: key %s: written twice (first on line %d): give each key once", e.Line, e.Path, e.First)
}

// container is an object or array being read, and where in it the reader is.
type container struct {
	object  bool
	path    string
	keys    map[string]int64 // an object's keys and the offsets they end at
	key     string           // the key whose value comes next
	wantKey bool
	index   int // an array's next element
}

// valuePath is the path of the value that comes next in c.
func (c *container) valuePath() string {
	switch {
	case c == nil:
		return ""
	case !c.object:
		return fmt.Sprintf("%s[%d]", c.path, c.index)
	case c.path == "":
		return c.key
	}
	return c.path + "." + c.key
}

// Check returns a *DuplicateError for the first key written twice in one
// object of data, or nil. Data that is not JSON is not its concern: it
// stops there, and the caller's decoder reports the syntax. A byte scan
// answers first (a trace's line is read at a few times the speed of a
// token walk); only data with a duplicate is walked for its path.
func Check(data []byte) error {
	if !hasDuplicate(data) {
		return nil
	}
	return walk(data)
}

// hasDuplicate scans data's bytes for an object key given twice: a string
// followed by a colon is a key of the innermost object.
func hasDuplicate(data []byte) bool {
	var stack []map[string]bool // nil for an array
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{':
			stack = append(stack, map[string]bool{})
		case '[':
			stack = append(stack, nil)
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case '"':
			end := closingQuote(data, i+1)
			if end < 0 {
				return false
			}
			raw := data[i : end+1]
			i = end
			next := bytes.TrimLeft(data[end+1:], " \t\r\n")
			if len(stack) == 0 || stack[len(stack)-1] == nil || len(next) == 0 || next[0] != ':' {
				continue
			}
			key := string(raw[1 : len(raw)-1])
			if bytes.IndexByte(raw, '\\') >= 0 && json.Unmarshal(raw, &key) != nil {
				return false
			}
			top := stack[len(stack)-1]
			if top[key] {
				return true
			}
			top[key] = true
		}
	}
	return false
}

// closingQuote is the index of the quote that ends the string whose text
// starts at from, or -1.
func closingQuote(data []byte, from int) int {
	for j := from; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}

// walk reads data token by token for the first duplicate's path and lines.
func walk(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []*container
	top := func() *container {
		if len(stack) == 0 {
			return nil
		}
		return stack[len(stack)-1]
	}
	for {
		tok, err := dec.Token()
		if err != nil { // the end, or not JSON
			return nil
		}
		c := top()
		if c != nil && c.object && c.wantKey {
			if key, ok := tok.(string); ok {
				end := dec.InputOffset()
				if first, dup := c.keys[key]; dup {
					c.key = key
					return &DuplicateError{Path: c.valuePath(), Line: lineAt(data, end), First: lineAt(data, first)}
				}
				c.keys[key], c.key, c.wantKey = end, key, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &container{object: true, path: c.valuePath(), keys: map[string]int64{}, wantKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, &container{path: c.valuePath()})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if p := top(); p != nil { // a value of p ended
			p.wantKey = p.object
			p.index++
		}
	}
}

// lineAt is the line (from 1) of a byte offset.
func lineAt(data []byte, offset int64) int {
	return 1 + bytes.Count(data[:min(offset, int64(len(data)))], []byte("\n"))
}
