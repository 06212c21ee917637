package workloads

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
	// wholePrompt: a request's input counts the whole conversation so far
	// (the format's).
	wholePrompt bool
}

// formatReader is how one file of a format is read: its line parser and
// its header check (nil: no header).
type formatReader struct {
	parse  lineParser
	header func(text string) error
}

// traceFormat names a format and opens a file of it; blockTokens is the
// block size of its block keys, fixed by the format (0 without keys);
// wholePrompt says a request's input counts the whole conversation so far,
// not only the turn's new tokens; arrival is the field a line's arrival
// time is read from.
type traceFormat struct {
	name        string
	blockTokens int64
	wholePrompt bool
	arrival     string
	open        func(path string) (formatReader, error)
}

// traceFormats are the formats ReadTrace knows: a new format is a file
// with its line parser and one row here.
var traceFormats = []traceFormat{
	{"mooncake", MooncakeBlockTokens, false, "timestamp", func(path string) (formatReader, error) {
		return formatReader{parse: parseMooncake(path)}, nil
	}},
	{"azure", 0, false, "TIMESTAMP", func(path string) (formatReader, error) {
		return formatReader{parse: parseAzure(path), header: azureHeader(path)}, nil
	}},
	{"ragpulse", 0, true, "timestamp", func(path string) (formatReader, error) {
		chunks, err := readChunkLengths(filepath.Dir(path))
		return formatReader{parse: parseRAGPulse(path, chunks)}, err
	}},
	{"sessions", 0, false, "arrival_s", func(path string) (formatReader, error) { return formatReader{parse: parseSessions(path)}, nil }},
}

// TraceBlockTokens is the block size of a format's block keys (0 for a
// format without them, or an unknown one): a scenario checks its block
// hashing against it before it reads the file.
func TraceBlockTokens(format string) int64 {
	for _, f := range traceFormats {
		if f.name == format {
			return f.blockTokens
		}
	}
	return 0
}

// TraceFormats are the names of the formats ReadTrace knows.
var TraceFormats = func() []string {
	var names []string
	for _, f := range traceFormats {
		names = append(names, f.name)
	}
	return names
}()

// Kinds are the names of the kinds of workload: the synthetic generator,
// then the trace formats (scenario's workload.kind).
var Kinds = append([]string{SyntheticKind}, TraceFormats...)

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
	i := slices.IndexFunc(traceFormats, func(f traceFormat) bool { return f.name == format })
	if i < 0 {
		return nil, fmt.Errorf("trace format %q: known formats are %s", format, strings.Join(TraceFormats, ", "))
	}
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return nil, fmt.Errorf("%s is a folder, not a trace file", path)
	}
	fr, err := traceFormats[i].open(path)
	if err != nil {
		return nil, err
	}
	t := &Trace{Format: format, Path: path, BlockTokens: traceFormats[i].blockTokens, wholePrompt: traceFormats[i].wholePrompt}
	var firstBad error
	err = eachLine(path, fr.header, func(text string, line int, err error) error {
		var r TraceRequest
		if err == nil {
			r, err = fr.parse(text, line)
		}
		if err == nil {
			err = t.checkOrder(r, line, traceFormats[i].arrival)
		}
		if err != nil {
			if !skipBad {
				return err
			}
			t.SkippedLines++
			firstBad = cmp.Or(firstBad, err)
			return nil
		}
		r.Line = line
		t.Requests = append(t.Requests, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(t.Requests) == 0 && firstBad != nil {
		return nil, fmt.Errorf("%s: no requests: every line skipped as malformed; the first: %w", path, firstBad)
	}
	if len(t.Requests) == 0 {
		return nil, fmt.Errorf("%s: no requests (empty file)", path)
	}
	return t, nil
}

// checkOrder rejects arrivals going backwards, naming the format's
// arrival field.
func (t *Trace) checkOrder(r TraceRequest, line int, field string) error {
	if n := len(t.Requests); n > 0 && r.Arrival < t.Requests[n-1].Arrival {
		return &LineError{t.Path, line, field, fmt.Sprintf("%v goes backwards (previous request at %v)", r.Arrival, t.Requests[n-1].Arrival)}
	}
	return nil
}

// MaxLineBytes is the longest trace line read; a longer one is a malformed
// line (skipped with skip_bad_lines) and is never held in memory whole.
const MaxLineBytes = 64 << 20

// EachTraceLine calls f on every non-blank line of a trace file
// (gzip-compressed when the name ends in .gz) with its 1-based line
// number, as the readers see them: for a tool that splits or filters a
// trace without parsing it. A line longer than MaxLineBytes is an error.
func EachTraceLine(path string, f func(text string, line int) error) error {
	return eachLine(path, nil, func(text string, line int, err error) error {
		if err != nil {
			return err
		}
		return f(text, line)
	})
}

// eachLine calls f on every non-blank line (after the header line, which
// header checks, when there is one), with its 1-based line number; a line
// longer than MaxLineBytes comes with a *LineError instead of its text.
func eachLine(path string, header func(text string) error, f func(text string, line int, err error) error) error {
	file, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("trace: %v", err)
	}
	defer file.Close()
	var r io.Reader = file
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(file)
		if err != nil {
			return fmt.Errorf("%s: not a gzip stream: %v", path, err)
		}
		defer gz.Close()
		r = gz
	}
	br := bufio.NewReaderSize(r, 64<<10)
	line := 0
	for {
		text, tooLong, err := readLine(br)
		if err == io.EOF && text == "" && !tooLong {
			break
		}
		if err != nil && err != io.EOF {
			return readError(path, line, err)
		}
		line++
		switch {
		case tooLong:
			err = f("", line, &LineError{path, line, "", fmt.Sprintf("longer than the %d MiB line limit", MaxLineBytes>>20)})
		case header != nil && line == 1:
			err = header(text)
		case strings.TrimSpace(text) != "":
			err = f(text, line, nil)
		default:
			err = nil
		}
		if err != nil {
			return err
		}
	}
	if line == 0 {
		return fmt.Errorf("%s: empty file", path)
	}
	return nil
}

// readLine reads one line without its end of line; a line longer than
// MaxLineBytes is read to its end but not kept (tooLong). err is io.EOF
// after the last line.
func readLine(br *bufio.Reader) (text string, tooLong bool, err error) {
	var buf []byte
	read := 0
	for {
		chunk, err := br.ReadSlice('\n')
		if read += len(chunk); read > maxUnendedBytes {
			return "", true, errNoLineEnd
		}
		if !tooLong {
			buf = append(buf, chunk...)
			if len(buf) > MaxLineBytes+2 {
				buf, tooLong = nil, true
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return strings.TrimRight(string(buf), "\r\n"), tooLong, err
	}
}

// maxUnendedBytes bounds how much of a too-long line is read to skip it:
// a file with no end of line (a device such as /dev/zero) would be read
// forever.
const maxUnendedBytes = 16 * MaxLineBytes

// errNoLineEnd is readLine's error for a line past maxUnendedBytes.
var errNoLineEnd = errors.New("no end of line")

// readError names a read failure after a line: a truncated gzip stream
// says so, and a line without an end stops the read even when bad lines
// are skipped.
func readError(path string, line int, err error) error {
	if errors.Is(err, errNoLineEnd) {
		return &LineError{path, line + 1, "", fmt.Sprintf("no end of line in %d MiB: not a trace of lines", maxUnendedBytes>>20)}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s: truncated gzip stream after line %d", path, line)
	}
	return fmt.Errorf("%s: after line %d: %v", path, line, err)
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
