package hostcpu

import "fmt"

// exportFaults checks the exports' count: every export started ended,
// stored or failed, or was dropped by a full asynchronous buffer.
func (c Counts) exportFaults() []string {
	if c.ExportsStarted == c.Exports+c.ExportsDropped {
		return nil
	}
	return []string{fmt.Sprintf("exports: %d started but %d ended (%d of them failed) + %d dropped",
		c.ExportsStarted, c.Exports, c.ExportFailed, c.ExportsDropped)}
}

// leftovers names what a run whose requests have all ended still holds and
// must not: exports in flight or waiting for the asynchronous buffer,
// bytes in that buffer or in a node's read buffer, requests, transfers or
// sessions still waiting for something.
func (s *System) leftovers() []string {
	var out []string
	add := func(n int64, what string) {
		if n != 0 {
			out = append(out, fmt.Sprintf("%d %s at the end", n, what))
		}
	}
	add(int64(s.export.tasks.Len()), "exports in the export table")
	add(int64(s.export.blocked.Len()), "exports waiting for room in the asynchronous buffer")
	add(s.export.buffered, "bytes in the asynchronous save buffer")
	add(int64(s.reqs.Len()), "requests in the request table")
	add(int64(s.moves.moves.Len()), "transfers in the transfer table")
	add(int64(len(s.waiting)), "keys kept for waiting requests (queue-aware eviction)")
	for _, n := range s.nodes {
		add(n.preloadBytes, fmt.Sprintf("bytes in node %d's pre-load read buffer", n.index))
	}
	var exporting, parked, raising int64
	for _, sess := range s.sessions {
		if sess.exporting || sess.exportAgain {
			exporting++
		}
		if sess.parked >= 0 {
			parked++
		}
		if sess.raising > 0 {
			raising++
		}
	}
	add(exporting, "sessions still exporting")
	add(parked, "requests parked behind an export")
	add(raising, "sessions whose look-ahead raise is moving")
	return out
}
