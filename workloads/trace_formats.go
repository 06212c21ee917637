package workloads

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kvcosim/kvcosim/internal/jsonkeys"
	"github.com/kvcosim/kvcosim/sim"
)

// MooncakeBlockTokens is the block size of Mooncake's hash_ids (FAST'25
// release traces: one id per 512-token block).
const MooncakeBlockTokens = 512

// decodeLine decodes one line into v (numbers kept as json.Number where v
// asks for them); missing fields are found by the caller through v's
// pointer fields.
func decodeLine(path string, line int, text string, v any) error {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return &LineError{path, line, "", "bad JSON: " + err.Error()}
	}
	if rest := strings.TrimSpace(text[dec.InputOffset():]); rest != "" { // it was ignored
		return &LineError{path, line, "", fmt.Sprintf("bad JSON: %q after the line's object", cut(rest, 40))}
	}
	var dup *jsonkeys.DuplicateError
	if errors.As(jsonkeys.Check([]byte(text)), &dup) {
		return &LineError{path, line, dup.Path, "written twice in the line's object: give each field once"}
	}
	return nil
}

// cut shortens text to at most n bytes for a message.
func cut(text string, n int) string {
	if len(text) <= n {
		return text
	}
	return text[:n] + "..."
}

// required reports a missing field.
func required(path string, line int, field string) error {
	return &LineError{path, line, field, "missing"}
}

// MaxRequestTokens bounds a request's token counts: 2^24, more than any
// model's context, and small enough that a run's token sums stay exact.
const MaxRequestTokens = 1 << 24

// lengths checks a request's token counts.
func lengths(path string, line int, input, output *int64, inName, outName string) (int64, int64, error) {
	switch {
	case input == nil:
		return 0, 0, required(path, line, inName)
	case output == nil:
		return 0, 0, required(path, line, outName)
	case *input < 1:
		return 0, 0, &LineError{path, line, inName, fmt.Sprintf("%d: must be at least 1", *input)}
	case *output < 1: // a request makes at least one token (a served one's max_tokens is at least 1)
		return 0, 0, &LineError{path, line, outName, fmt.Sprintf("%d: must be at least 1", *output)}
	case *input > MaxRequestTokens:
		return 0, 0, &LineError{path, line, inName, fmt.Sprintf("%d: more than the limit of %d tokens", *input, MaxRequestTokens)}
	case *output > MaxRequestTokens:
		return 0, 0, &LineError{path, line, outName, fmt.Sprintf("%d: more than the limit of %d tokens", *output, MaxRequestTokens)}
	}
	return *input, *output, nil
}

// seconds reads a non-negative time in the given unit (as a JSON number or
// a numeric string), at most sim.Horizon from the trace's start.
func seconds(path string, line int, field string, raw json.RawMessage, unit float64) (sim.Time, error) {
	if raw == nil {
		return 0, required(path, line, field)
	}
	text := strings.Trim(string(bytes.TrimSpace(raw)), `"`)
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || !(v >= 0) || math.IsInf(v, 0) {
		return 0, &LineError{path, line, field, fmt.Sprintf("%s: want a non-negative number", raw)}
	}
	if ps := v * unit * 1e12; ps > float64(sim.Horizon) {
		return 0, &LineError{path, line, field, fmt.Sprintf("%s is %.6g s from the trace's start, past the %v limit of a run (an epoch time? arrivals count from the trace's start)", raw, ps/1e12, sim.Horizon)}
	}
	return sim.TimeOf(v * unit * 1e12), nil
}

func parseMooncake(path string) lineParser {
	return func(text string, line int) (TraceRequest, error) {
		var v struct {
			Timestamp json.RawMessage `json:"timestamp"`
			Input     *int64          `json:"input_length"`
			Output    *int64          `json:"output_length"`
			HashIDs   *[]uint64       `json:"hash_ids"`
		}
		if err := decodeLine(path, line, text, &v); err != nil {
			return TraceRequest{}, err
		}
		at, err := seconds(path, line, "timestamp", v.Timestamp, 1e-3)
		if err != nil {
			return TraceRequest{}, err
		}
		in, out, err := lengths(path, line, v.Input, v.Output, "input_length", "output_length")
		if err != nil {
			return TraceRequest{}, err
		}
		if v.HashIDs == nil {
			return TraceRequest{}, required(path, line, "hash_ids")
		}
		if want := (in + MooncakeBlockTokens - 1) / MooncakeBlockTokens; int64(len(*v.HashIDs)) != want {
			return TraceRequest{}, &LineError{path, line, "hash_ids",
				fmt.Sprintf("%d ids for input_length %d: want ceil(%d / %d) = %d", len(*v.HashIDs), in, in, MooncakeBlockTokens, want)}
		}
		return TraceRequest{Arrival: at, Input: in, Output: out, BlockKeys: *v.HashIDs, Node: -1}, nil
	}
}

// azureTimeLayout is the Azure 2023 trace's TIMESTAMP (100 ns digits).
const azureTimeLayout = "2006-01-02 15:04:05.9999999"

// azureColumns is the Azure trace's header line.
const azureColumns = "TIMESTAMP,ContextTokens,GeneratedTokens"

// azureHeader checks the header line, so that a file without it does not
// lose its first request and reordered columns are blamed on the header.
func azureHeader(path string) func(text string) error {
	return func(text string) error {
		if got := strings.TrimSpace(text); got != azureColumns {
			return &LineError{path, 1, "header", fmt.Sprintf("%q: want the columns %s", got, azureColumns)}
		}
		return nil
	}
}

func parseAzure(path string) lineParser {
	var first time.Time
	started := false // first may be the zero time (year 0001)
	return func(text string, line int) (TraceRequest, error) {
		fields := strings.Split(strings.TrimSpace(text), ",")
		if len(fields) != 3 {
			return TraceRequest{}, &LineError{path, line, "", fmt.Sprintf("%d fields: want TIMESTAMP,ContextTokens,GeneratedTokens", len(fields))}
		}
		at, err := time.Parse(azureTimeLayout, fields[0])
		if err != nil {
			return TraceRequest{}, &LineError{path, line, "TIMESTAMP", fmt.Sprintf("%q: want %s", fields[0], azureTimeLayout)}
		}
		var counts [2]int64
		for i, name := range []string{"ContextTokens", "GeneratedTokens"} {
			if counts[i], err = strconv.ParseInt(fields[i+1], 10, 64); err != nil {
				return TraceRequest{}, &LineError{path, line, name, fmt.Sprintf("%q: want an integer", fields[i+1])}
			}
		}
		in, out, err := lengths(path, line, &counts[0], &counts[1], "ContextTokens", "GeneratedTokens")
		if err != nil {
			return TraceRequest{}, err
		}
		if !started {
			first, started = at, true
		}
		since := at.Sub(first)
		if since > time.Duration(sim.Horizon/sim.Nanosecond) || since < -time.Duration(sim.Horizon/sim.Nanosecond) {
			return TraceRequest{}, &LineError{path, line, "TIMESTAMP", fmt.Sprintf("%q is more than the %v limit of a run from the first request (%s)",
				fields[0], sim.Horizon, first.Format(azureTimeLayout))}
		}
		return TraceRequest{Arrival: sim.Time(since.Nanoseconds()) * sim.Nanosecond, Input: in, Output: out, Node: -1}, nil
	}
}

// ragpulseComponents are a RAGPulse prompt's parts in prompt order, with
// the companion file giving each part's chunk lengths and its id field.
var ragpulseComponents = []struct{ key, file, idField string }{
	{"sys_prompt", "1_sys_prompt.jsonl", "sys_prompt_id"},
	{"passages_ids", "2_passages.jsonl", "passage_id"},
	{"history", "3_history.jsonl", "history_id"},
	{"web_search", "5_web_search.jsonl", "web_search_id"},
	{"user_input", "4_user_input.jsonl", "user_input_id"},
}

// readChunkLengths reads the companion files beside the trace (optionally
// .gz): per component, chunk id to token length.
func readChunkLengths(dir string) (map[string]map[uint64]int64, error) {
	out := map[string]map[uint64]int64{}
	for _, c := range ragpulseComponents {
		path, err := statEither(filepath.Join(dir, c.file))
		if err != nil {
			return nil, fmt.Errorf("ragpulse: the companion file %s (or .gz) is needed beside the trace: %v", c.file, err)
		}
		m := map[uint64]int64{}
		err = eachLine(path, nil, func(text string, line int, err error) error {
			if err != nil {
				return err
			}
			var v map[string]json.Number
			if err := decodeLine(path, line, text, &v); err != nil {
				return err
			}
			id, err1 := strconv.ParseUint(string(v[c.idField]), 10, 64)
			n, err2 := strconv.ParseInt(string(v["token_length"]), 10, 64)
			if err1 != nil || err2 != nil || n < 0 {
				return &LineError{path, line, c.idField + "/token_length", "want a chunk id and a non-negative length"}
			}
			m[id] = n
			return nil
		})
		if err != nil {
			return nil, err
		}
		out[c.key] = m
	}
	return out, nil
}

// parseRAGPulse reads RAGPulse lines. Its chunk ids (at most 512 tokens
// each) are not prefix-chained block keys, so its requests carry none.
func parseRAGPulse(path string, chunks map[string]map[uint64]int64) lineParser {
	return func(text string, line int) (TraceRequest, error) {
		var v struct {
			Timestamp json.RawMessage     `json:"timestamp"`
			Input     *int64              `json:"input_length"`
			Output    *int64              `json:"output_length"`
			Session   *string             `json:"session_id"`
			HashIDs   map[string][]uint64 `json:"hash_ids"`
		}
		if err := decodeLine(path, line, text, &v); err != nil {
			return TraceRequest{}, err
		}
		at, err := seconds(path, line, "timestamp", v.Timestamp, 1)
		if err != nil {
			return TraceRequest{}, err
		}
		in, out, err := lengths(path, line, v.Input, v.Output, "input_length", "output_length")
		if err != nil {
			return TraceRequest{}, err
		}
		if v.Session == nil {
			return TraceRequest{}, required(path, line, "session_id")
		}
		if v.HashIDs == nil {
			return TraceRequest{}, required(path, line, "hash_ids")
		}
		for _, c := range ragpulseComponents {
			for _, id := range v.HashIDs[c.key] {
				if _, ok := chunks[c.key][id]; !ok {
					return TraceRequest{}, &LineError{path, line, "hash_ids." + c.key, fmt.Sprintf("chunk %d is not in %s", id, c.file)}
				}
			}
		}
		return TraceRequest{Arrival: at, Input: in, Output: out, Session: *v.Session, Node: -1}, nil
	}
}

// parseSessions reads sessions lines; a session's turns are numbered 0, 1,
// 2 ... in file order, and give token_ids on every turn or on none (turn 0
// decides: a history is ids or a count).
func parseSessions(path string) lineParser {
	nextTurn := map[string]int{}
	idsFrom := map[string]int{}   // session -> its turn 0's line, when it gave token_ids
	countFrom := map[string]int{} // session -> its turn 0's line, when it gave a count
	return func(text string, line int) (TraceRequest, error) {
		var v struct {
			Session   *string         `json:"session"`
			Turn      *int            `json:"turn"`
			Arrival   json.RawMessage `json:"arrival_s"`
			NewTokens *int64          `json:"new_tokens"`
			TokenIDs  []uint32        `json:"token_ids"`
			Output    *int64          `json:"output_tokens"`
			Node      *int            `json:"node"`
		}
		if err := decodeLine(path, line, text, &v); err != nil {
			return TraceRequest{}, err
		}
		if v.Session == nil {
			return TraceRequest{}, required(path, line, "session")
		}
		if v.Turn == nil || *v.Turn < 0 {
			return TraceRequest{}, &LineError{path, line, "turn", "missing or negative"}
		}
		if want := nextTurn[*v.Session]; *v.Turn != want {
			return TraceRequest{}, &LineError{path, line, "turn", fmt.Sprintf("%d: session %q's next turn is %d (turns count 0, 1, 2 ... in file order)", *v.Turn, *v.Session, want)}
		}
		at, err := seconds(path, line, "arrival_s", v.Arrival, 1)
		if err != nil {
			return TraceRequest{}, err
		}
		if v.TokenIDs != nil {
			n := int64(len(v.TokenIDs))
			if v.NewTokens != nil && *v.NewTokens != n {
				return TraceRequest{}, &LineError{path, line, "new_tokens", fmt.Sprintf("%d, but token_ids has %d", *v.NewTokens, n)}
			}
			v.NewTokens = &n
		}
		in, out, err := lengths(path, line, v.NewTokens, v.Output, "new_tokens", "output_tokens")
		if err != nil {
			return TraceRequest{}, err
		}
		node := -1
		if v.Node != nil {
			if *v.Node < 0 {
				return TraceRequest{}, &LineError{path, line, "node", fmt.Sprintf("%d: must not be negative", *v.Node)}
			}
			node = *v.Node
		}
		if err := sameKind(path, line, *v.Session, *v.Turn, v.TokenIDs != nil, idsFrom, countFrom); err != nil {
			return TraceRequest{}, err
		}
		nextTurn[*v.Session]++
		return TraceRequest{Arrival: at, Input: in, Output: out, Session: *v.Session, Tokens: v.TokenIDs, Node: node}, nil
	}
}

// sameKind checks that a sessions line gives its new tokens as its
// session's turn 0 did (ids, or a count), and records turn 0's choice.
func sameKind(path string, line int, session string, turn int, ids bool, idsFrom, countFrom map[string]int) error {
	if turn == 0 {
		if ids {
			idsFrom[session] = line
		} else {
			countFrom[session] = line
		}
		return nil
	}
	if first, ok := idsFrom[session]; ok && !ids {
		return &LineError{path, line, "token_ids", fmt.Sprintf("missing: session %q gave token_ids from its turn 0 (line %d), and a session gives token_ids on every turn or on none", session, first)}
	}
	if first, ok := countFrom[session]; ok && ids {
		return &LineError{path, line, "token_ids", fmt.Sprintf("session %q gave new_tokens without token_ids from its turn 0 (line %d), and a session gives token_ids on every turn or on none", session, first)}
	}
	return nil
}
