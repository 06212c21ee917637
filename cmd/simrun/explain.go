package main

import (
	"fmt"
	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/hostcpu/mech"
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"io"
	"strconv"
	"strings"

	"github.com/kvcosim/kvcosim/scenario"
	"github.com/kvcosim/kvcosim/sim"
)

// runExplain narrates one session's walk through the system: every stage
// on the CPU, the FPGA engine, the storage and the accelerator, with its
// time, cycles and bytes and the patent claim it implements.
func runExplain(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("explain", stderr)
	cfg := fs.String("c", "", "scenario file (default: the embedded default scenario)")
	session := fs.Int64("session", 0, "the session to follow (its id in the workload; needed)")
	var sets setFlags
	fs.Var(&sets, "set", "override a key: --set dotted.key=value (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "simrun explain: unexpected argument %q\n", fs.Arg(0))
		return 2
	case !flagGiven(fs, "session"):
		fmt.Fprintln(stderr, "simrun explain: --session: missing: give the session to follow (usage: simrun explain [-c FILE] [--set key=value]... --session ID)")
		return 2
	case *session < 0:
		fmt.Fprintf(stderr, "simrun explain: --session %d: want a session id, 0 or more (usage: simrun explain [-c FILE] [--set key=value]... --session ID)\n", *session)
		return 2
	}
	l, err := scenario.Load(*cfg, sets)
	if err != nil {
		fmt.Fprintf(stderr, "simrun explain: %v\n", err)
		return 2
	}
	run, err := scenario.Build(l)
	if err != nil {
		fmt.Fprintf(stderr, "simrun explain: %v\n", err)
		return 2
	}
	design, err := store.ParseDesign(l.System.Design)
	if err != nil {
		fmt.Fprintf(stderr, "simrun explain: %v\n", err)
		return 2
	}
	sink := &sessionSink{id: *session}
	run.AddSpanSink(sink)
	if _, err := executeWatched(run, runMeter(stderr)); err != nil {
		fmt.Fprintf(stderr, "simrun explain: the run stopped: %v\n", err)
		return 1
	}
	if len(sink.spans) == 0 {
		fmt.Fprintf(stderr, "simrun explain: --session %d: that session made no request in this scenario (%s)\n", *session, l.Describe())
		return 2
	}
	fmt.Fprintf(stdout, "session %d, %s\n", *session, l.Describe())
	own := designText(design, l.Store.Load)
	for _, sp := range sink.spans {
		fmt.Fprintln(stdout, narrate(sp, own))
	}
	return 0
}

// sessionSink keeps one session's stage spans, in the order they end.
type sessionSink struct {
	id    int64
	spans []sim.Span
}

func (s *sessionSink) Span(sp sim.Span) {
	if sp.ID == s.id && sp.Part != "" && sp.Part != accel.Part {
		s.spans = append(s.spans, sp)
	}
}

// stepText says what a stage does and which claim it implements; %B is
// replaced by its bytes, %T by its tokens (4 B each), %A by an attribute.
var stepText = map[string]string{
	"decide/first_tokens":  "CPU decides: the session's first tokens go straight to the accelerator; they are stored after (claim 2)",
	"decide/continuation":  "CPU decides: a continuation of the history still on this accelerator, no query (claim 2)",
	"decide/recomputed":    "CPU decides: no store, the whole history is recomputed",
	"query/dma-tokens":     "FPGA reads the session's computed tokens from host memory by DMA: %B (%T tokens) (claim 3)",
	"query/hash":           "FPGA hashes the %T tokens with XXH64 (claim 3)",
	"query/bucket-read":    "FPGA reads the hash's bucket of the address-mapping table: %B (claim 4)",
	"query/chain-walk":     "FPGA walks the bucket's chain links, matching (token count, hash): %B of links read (claim 5)",
	"query/import":         "FPGA imports the cache data from the SSD into the exchange memory: %B (claim 6; a stage of its query task, booked as the turn's import, not query time)",
	"query/signal-cpu":     "FPGA signals the CPU that the query task is done",
	"queue":                "the request waits for room in the accelerator's batch",
	"prefill":              "the accelerator prefills the tokens it lacks; the first token is out at the end",
	"decode":               "the accelerator decodes the rest of the answer",
	"preempt/recompute":    "a step found no free KV block: the request, the most recently admitted, is preempted; its %A(tokens) tokens of KV stay in its freed blocks until they are taken, then it prefills them again",
	"preempt/swap":         "a step found no free KV block: the request, the most recently admitted, is preempted and its %A(tokens) tokens of KV swapped to host memory over the accelerator's link: %B",
	"preempt/store":        "a step found no free KV block: the request, the most recently admitted, is preempted and its %A(tokens) tokens of KV handed to the store by its export path: %B",
	"resume/swap":          "let in again, the request's KV comes back from host memory over the accelerator's link: %B",
	"resume/store":         "let in again, the request's KV comes back from the store: %B",
	"export/exchange-read": "FPGA reads the updated cache from device memory: %B (claim 7)",
	"export/dma-tokens":    "FPGA reads the computed tokens from host memory: %B (claim 7)",
	"export/hash":          "FPGA hashes all %T computed tokens (claim 7)",
	"export/bucket-read":   "FPGA reads the bucket of the new hash: %B (claim 8)",
	"export/chain-walk":    "FPGA walks the chain to the previous version's link: %B of links read (claim 8)",
	"export/fifo-allocate": "FPGA takes free region addresses from FIFO 1 / FIFO 2 (claim 10)",
	"export/stream-out":    "FPGA streams the cache from device memory (claim 7) through the exchange memory to the SSD in the claim-9 layout, writing each piece as the next crosses the peer link: %B (claim 9)",
	"export/storage-write": "FPGA writes the cache to the SSD in the claim-9 layout (token ids, K per layer in token order, V per layer column by column): %B (claim 9)",
	"export/chain-insert":  "FPGA inserts the new chain link, linking prev and next pointers: %B (claim 8)",
	"export/fifo-free":     "FPGA frees the superseded version's regions into FIFO 2: %B of addresses (claims 8, 10)",
	"export/signal-cpu":    "FPGA signals the CPU that the export task is done",
	"export":               "export done: regions %A(regions) from address %A(first_address); links inserted %A(inserted), superseded %A(superseded), evicted %A(evicted)",
	"export failed":        "export failed, nothing stored: %A(error)",
}

// designText says what the steps that differ between the designs do: the
// patent's card queries and imports itself; every other design's host
// looks the session up in its own index and moves the data, from its
// host-DRAM tier where it has one; a layer-wise load (store.load, or the
// design's own) lets each layer's prefill start as that layer lands.
func designText(d store.Design, load string) map[string]string {
	if load == "" {
		load = mech.LoadModes.Name(d.Mech.Load)
	}
	layers := ""
	if load == mech.LoadModes.Name(mech.LoadLayerwise) {
		layers = ", layer by layer, each layer's prefill starting as it lands"
	}
	if d.Card {
		return map[string]string{
			"decide/query": "CPU decides: the history is not on this accelerator, so the FPGA runs a query task (claim 2)",
			"query":        "query decided by the FPGA (token DMA, hashing, table walk): hit %A(hit), chain links visited %A(hops), blocks matched %A(matched_blocks)",
			"import":       "the KV moves into the accelerator: the FPGA reads it from the SSD and forwards it over the peer link" + layers + ": %B",
		}
	}
	from := "reads it from the drives into host memory"
	if d.DRAMTier {
		from = "reads it from its host-DRAM tier (or from the drives below it, into host memory)"
	}
	return map[string]string{
		"decide/query": "CPU decides: the history is not on this accelerator, so the host looks it up in its own index in host DRAM",
		"query":        "query decided by a host core (hashing the tokens, walking the index): hit %A(hit), chain links visited %A(hops), blocks matched %A(matched_blocks)",
		"import":       "the KV moves into the accelerator: the host " + from + " and copies it over PCIe" + layers + ": %B",
	}
}

// narrate is one line: when, where, what, how long (and how many cycles);
// own says the steps that differ between the designs (designText).
func narrate(sp sim.Span, own map[string]string) string {
	op := sp.Operation
	if sp.Attr("error") != "" {
		op += " failed" // a step whose span carries its error
	}
	text, ok := own[op]
	if !ok {
		text, ok = stepText[op]
	}
	if !ok {
		text = sp.Operation
	}
	r := strings.NewReplacer("%B", bytesText(sp.Bytes), "%T", thousands(sp.Bytes/4))
	text = r.Replace(text)
	for _, a := range sp.Attrs {
		text = strings.ReplaceAll(text, "%A("+a.Key+")", a.Value)
	}
	took := "took " + duration(sp.End-sp.Start)
	if sp.Clocked {
		took = fmt.Sprintf("%s cycles, %s", thousands(int64(sp.Cycles)), duration(sp.End-sp.Start))
	}
	at, turn := sp.Start, ""
	if t := sp.Attr("turn"); t != "" {
		turn = "turn " + t + ": "
	}
	if !sp.Clocked && (sp.Task == hostcpu.TaskQuery || sp.Task == hostcpu.TaskExport) {
		at = sp.End // a task's summary, after its stages
	}
	return fmt.Sprintf("t=%12s ms  %-18s %s%s [%s]", strconv.FormatFloat(ms(at), 'f', 3, 64), sp.Component, turn, text, took)
}

// duration writes a span's length in the unit that suits it.
func duration(t sim.Time) string {
	switch {
	case t >= sim.Second:
		return fmt.Sprintf("%.3f s", t.Seconds())
	case t >= sim.Millisecond:
		return fmt.Sprintf("%.3f ms", ms(t))
	case t >= sim.Microsecond:
		return fmt.Sprintf("%.3f us", float64(t)/float64(sim.Microsecond))
	}
	return fmt.Sprintf("%d ns", t/sim.Nanosecond)
}

// bytesText writes a byte count with its unit.
func bytesText(b int64) string {
	switch {
	case b >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(b)/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.2f MB", float64(b)/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(b)/1e3)
	}
	return fmt.Sprintf("%d B", b)
}
