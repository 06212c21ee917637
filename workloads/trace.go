package workloads

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvcosim/kvcosim/sim"
)

// TraceRequest is one request of a trace.
type TraceRequest struct {
	// Arrival is the time from the trace's start.
	Arrival       sim.Time
	Input, Output int64
	// BlockKeys are prefix-chained block ids of the prompt (Mooncake's
	// hash_ids, or keys chained from RAGPulse's chunk ids); nil when the
	// trace has no reuse information.
	BlockKeys []uint64
	// Session groups a conversation's turns ("" when the trace has none).
	Session string
	// Tokens are the new prompt tokens, when a sessions trace gives ids.
	Tokens []uint32
	// Node pins the request to a node (-1: the router decides).
	Node int
	// Line is the request's line in its file.
	Line int
}

// Trace is a trace's requests in file order.
type Trace struct {
	Format   string
	Path     string
	Requests []TraceRequest
	// BlockTokens is the block size of the block keys (0 without keys).
	BlockTokens int64
	// SkippedLines counts malformed lines skipped (skip_bad_lines).
	SkippedLines int
}

// TraceFormats are the formats ReadTrace knows.
var TraceFormats = []string{"mooncake", "azure", "ragpulse", "sessions"}

// LineError is a malformed line: its file, line number and field.
type LineError struct {
	Path  string
	Line  int
	Field string
	Msg   string
}

func (e *LineError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: field %s: %s", e.Path, e.Line, e.Field, e.Msg)
}

// lineParser turns one line into a request; a *LineError rejects the line.
type lineParser func(text string, line int) (TraceRequest, error)

// ReadTrace reads a trace of the given format, streaming line by line
// (gzip-compressed when the name ends in .gz). A malformed line is an error
// naming file, line and field, or, with skipBad, skipped and counted.
func ReadTrace(format, path string, skipBad bool) (*Trace, error) {
	t := &Trace{Format: format, Path: path}
	var parse lineParser
	header := false
	switch format {
	case "mooncake":
		parse, t.BlockTokens = parseMooncake(path), MooncakeBlockTokens
	case "azure":
		parse, header = parseAzure(path), true
	case "ragpulse":
		chunks, err := readChunkLengths(filepath.Dir(path))
		if err != nil {
			return nil, err
		}
		parse = parseRAGPulse(path, chunks)
	case "sessions":
		parse = parseSessions(path)
	default:
		return nil, fmt.Errorf("trace format %q: known formats are %s", format, strings.Join(TraceFormats, ", "))
	}
	err := eachLine(path, header, func(text string, line int) error {
		r, err := parse(text, line)
		if err == nil {
			err = t.checkOrder(r, line)
		}
		if err != nil {
			if skipBad {
				t.SkippedLines++
				return nil
			}
			return err
		}
		r.Line = line
		t.Requests = append(t.Requests, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(t.Requests) == 0 {
		return nil, fmt.Errorf("%s: no requests (empty file, or every line skipped)", path)
	}
	return t, nil
}

// checkOrder rejects arrivals going backwards.
func (t *Trace) checkOrder(r TraceRequest, line int) error {
	if n := len(t.Requests); n > 0 && r.Arrival < t.Requests[n-1].Arrival {
		return &LineError{t.Path, line, "timestamp", fmt.Sprintf("%v goes backwards (previous request at %v)", r.Arrival, t.Requests[n-1].Arrival)}
	}
	return nil
}

// eachLine calls f on every non-blank line (after the header line when
// there is one), with its 1-based line number.
func eachLine(path string, header bool, f func(text string, line int) error) error {
	file, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("trace: %v", err)
	}
	defer file.Close()
	var r io.Reader = file
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(file)
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		defer gz.Close()
		r = gz
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		if (header && line == 1) || strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		if err := f(sc.Text(), line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %v", path, line+1, err)
	}
	if line == 0 {
		return fmt.Errorf("%s: empty file", path)
	}
	return nil
}

// statEither finds path, or path.gz when path is absent.
func statEither(path string) (string, error) {
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if _, err := os.Stat(path + ".gz"); err == nil {
		return path + ".gz", nil
	}
	_, err := os.Stat(path)
	return "", err
}
