package scenario

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/hostcpu/store"
	_ "github.com/kvcosim/kvcosim/internal/golden"
	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/sim"
	"github.com/kvcosim/kvcosim/workloads"
)

func writeScenario(t *testing.T, text string) string {
	path := filepath.Join(t.TempDir(), "scenario.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func TestLoadErrorsNameFileLineAndKey(t *testing.T) {
	cases := []struct {
		name, yaml string
		sets       []string
		want       string
	}{
		{"unknown key", "seed: 1\nsystem:\n  desgin: fpga\n", nil, "scenario.yaml:3: key system.desgin: unknown key (valid keys here: design, export"},
		{"wrong type", "accelerator:\n  tp: four\n", nil, `scenario.yaml:2: key accelerator.tp: cannot use "four": want a whole number`},
		{"out of range", "system:\n  nodes: 0\n", nil, "scenario.yaml:2: key system.nodes: 0 is out of range (allowed: 1 to 1024)"},
		{"bad enum", "system:\n  design: gpu\n", nil, `scenario.yaml:2: key system.design: "gpu" is not allowed (allowed: recompute, cpu, fpga, lmcache, cachedattention)`},
		{"bad duration", "cpu:\n  host_access: 90 nanos\n", nil, `scenario.yaml:2: key cpu.host_access: duration "90 nanos"`},
		{"bad size", "storage:\n  capacity: lots\n", nil, `scenario.yaml:2: key storage.capacity: size "lots"`},
		{"buckets", "fpga:\n  buckets: 1000\n", nil, "scenario.yaml:2: key fpga.buckets: fpga: buckets = 1000: must be a power of two"},
		{"unknown preset", "model: gpt-9\n", nil, `scenario.yaml:1: key model: unknown model "gpt-9": valid models are bloom-176b, deepseek-v3, falcon-40b`},
		{"does not fit", "accelerator:\n  tp: 1\n", nil, "scenario.yaml:2: key accelerator.tp: model \"llama-3-70b\" does not fit 1 x h100-sxm"},
		{"not a mapping", "system: 3\n", nil, "scenario.yaml:1: key system: expected a mapping of keys"},
		{"bad yaml", "system: [\n", nil, "scenario.yaml: "},
		{"set unknown", "seed: 2\n", []string{"fpga.lanes=4"}, "--set fpga.lanes=4: key fpga.lanes: unknown key"},
		{"set bad value", "seed: 2\n", []string{"fpga.query_tasks=x"}, `--set fpga.query_tasks=x: key fpga.query_tasks: cannot use "x"`},
		{"set range", "seed: 2\n", []string{"system.migrate_fraction=2", "system.routing=migrate"}, "--set system.migrate_fraction=2: key system.migrate_fraction: 2 is out of range"},
		{"bad mode", "mode: exact\n", nil, `scenario.yaml:1: key mode: "exact" is not allowed (allowed: timing, functional)`},
		{"functional shape", "mode: functional\nfunctional:\n  heads: 3\n", nil, "scenario.yaml:3: key functional.heads: tinylm: heads = 3: must be at least 1 and divide hidden = 64"},
		{"functional decoding", "mode: functional\nfunctional:\n  decoding: nucleus\n", nil, `key functional.decoding: "nucleus" is not allowed (allowed: greedy, sample, beam)`},
		{"functional top_p", "mode: functional\nfunctional:\n  top_p: 0\n", nil, "key functional.top_p: 0 is out of range"},
		{"functional beams", "mode: functional\nfunctional:\n  decoding: beam\n  vocab: 8\n  top_k: 4\n  beams: 5\n", nil, "key functional.beams: vocab = 8: must be at least 2 x num_beams = 10"},
		{"kv capacity", "accelerator:\n  kv_capacity: small\n", nil, `scenario.yaml:2: key accelerator.kv_capacity: size "small"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(writeScenario(t, c.yaml), c.sets)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	_, err := Load(filepath.Join(t.TempDir(), "missing.yaml"), nil)
	assert.ErrorContains(t, err, "missing.yaml: cannot read the scenario")
	_, err = Load(writeScenario(t, "\n  \n"), nil)
	assert.ErrorContains(t, err, "the scenario file is empty")
}

// TestResolvedScenarioRoundTrips: the scenario.yaml of a scenario, read
// back, is the same scenario and resolves to the same models' settings,
// for every design, with tiers and in functional mode (until 2026-11-27
// the written fpga.hashing and fpga.layout overrode lmcache's and
// cachedattention's own, and tiers or functional mode were refused the
// storage.drives written beside them). cmd/simrun's
// TestScenarioYAMLRepeatsTheRun runs them.
func TestResolvedScenarioRoundTrips(t *testing.T) {
	tiers := "storage.tiers=[{name: dram, device: ddr5-4800, capacity: 16GB}, {name: ssd, device: kioxia-cm6, capacity: 2TB}]"
	for _, c := range []struct {
		name string
		sets []string
	}{
		{"fpga, block hashing", []string{"workload.sessions=7", "fpga.hashing=block"}},
		{"lmcache", []string{"system.design=lmcache"}},
		{"cachedattention", []string{"system.design=cachedattention"}},
		{"lmcache, patent hashing", []string{"system.design=lmcache", "fpga.hashing=patent"}},
		{"cpu with tiers", []string{"system.design=cpu", tiers}},
		{"lmcache with tiers", []string{"system.design=lmcache", tiers}},
		{"functional", []string{"mode=functional"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := Load("", c.sets)
			require.NoError(t, err)
			again, err := LoadBytes("resolved.yaml", l.YAML(), nil)
			require.NoError(t, err)
			assert.Equal(t, l.Scenario, again.Scenario, "scenario.yaml reproduces the run")
			first, second := *l.resolved, *again.resolved
			assert.Equal(t, first.host.Design.Name, second.host.Design.Name)
			first.host.Design, second.host.Design = store.Design{}, store.Design{} // its store's constructor is a func: never equal
			assert.Equal(t, first, second, "and resolves to the same")
			assert.Equal(t, string(l.YAML()), string(again.YAML()))
		})
	}
	assert.Contains(t, Keys(), "fpga.hashing")
	assert.Contains(t, Keys(), "workload.limit")
}

// run executes a scenario with overrides and returns its summary and CSV.
func run(t testing.TB, sets ...string) (reports.Summary, []byte) {
	return summaryAndCSV(t, executed(t, sets...))
}

// summaryAndCSV is a run's summary and its requests.csv.
func summaryAndCSV(t testing.TB, res *Result) (reports.Summary, []byte) {
	var csv bytes.Buffer
	require.NoError(t, reports.WriteRequestsCSV(&csv, res.Rows()))
	return res.Summary(), csv.Bytes()
}

// executed loads, builds and runs a scenario of the default's with sets.
func executed(t testing.TB, sets ...string) *Result {
	l, err := Load("", sets)
	require.NoError(t, err)
	r, err := Build(l)
	require.NoError(t, err)
	res, err := r.Execute()
	require.NoError(t, err)
	return res
}

func TestSameSeedSameBytes(t *testing.T) {
	for _, design := range []string{"recompute", "cpu", "fpga"} {
		a, csvA := run(t, "system.design="+design, "workload.sessions=40")
		b, csvB := run(t, "system.design="+design, "workload.sessions=40")
		var ja, jb bytes.Buffer
		require.NoError(t, a.WriteJSON(&ja))
		require.NoError(t, b.WriteJSON(&jb))
		assert.Equal(t, ja.String(), jb.String(), design)
		assert.Equal(t, csvA, csvB, design)
		c, _ := run(t, "system.design="+design, "workload.sessions=40", "seed=2")
		assert.NotEqual(t, a.TTFTms, c.TTFTms, "another seed, another run")
	}
}

// TestWatchedRunSameBytes: a watched run reports its progress as it goes,
// requests over and simulated time never going back, and writes the same
// bytes as a run nobody watches.
func TestWatchedRunSameBytes(t *testing.T) {
	sets := []string{"workload.sessions=120"}
	l, err := Load("", sets)
	require.NoError(t, err)
	r, err := Build(l)
	require.NoError(t, err)
	var seen []Progress
	r.Watch(func(p Progress) { seen = append(seen, p) })
	res, err := r.Execute()
	require.NoError(t, err)
	watched := res.Summary()
	var csv, ja, jb bytes.Buffer
	require.NoError(t, reports.WriteRequestsCSV(&csv, res.Rows()))
	plain, plainCSV := run(t, sets...)
	require.NoError(t, watched.WriteJSON(&ja))
	require.NoError(t, plain.WriteJSON(&jb))
	assert.Equal(t, jb.String(), ja.String())
	assert.Equal(t, plainCSV, csv.Bytes())

	require.Len(t, seen, int(watched.Events/sim.WatchEvents))
	for i, p := range seen {
		assert.Equal(t, watched.RequestsCompleted+int(watched.RequestsRejected), p.Requests, "the workload's requests")
		assert.LessOrEqual(t, p.Finished, p.Requests)
		if i > 0 {
			assert.GreaterOrEqual(t, p.Now, seen[i-1].Now)
			assert.GreaterOrEqual(t, p.Finished, seen[i-1].Finished)
		}
	}
	require.Greater(t, len(seen), 2)
	assert.Greater(t, seen[len(seen)-1].Finished, seen[0].Finished, "requests end as the run goes")
}

func TestClaim2Decisions(t *testing.T) {
	s, _ := run(t, "workload.sessions=60", "accelerator.reserve_gb=40") // room for ~58 K tokens
	d := s.Decisions
	assert.Equal(t, int64(60), d["first_tokens"], "one first request per session")
	assert.Equal(t, int64(s.RequestsCompleted), d["first_tokens"]+d["continuation"]+d["query"])
	assert.Equal(t, d["query"], d["query_hits"]+d["query_misses"], "patent hashing: first requests never query")
	assert.Greater(t, d["query_hits"], int64(0), "evicted sessions come back from the store")
	assert.Equal(t, s.PromptTokens, s.PrefillTokensComputed+s.PrefillTokensReused+s.PrefillTokensResident)
}

func TestBlockHashingQueriesFirstRequests(t *testing.T) {
	s, _ := run(t, "workload.sessions=40", "fpga.hashing=block", "fpga.block_tokens=256", "workload.system_prompt_tokens=600")
	d := s.Decisions
	assert.Equal(t, d["first_tokens"]+d["query"], d["query_hits"]+d["query_misses"], "first requests query too")
	assert.GreaterOrEqual(t, s.PrefillTokensReused, int64(39*512), "every later session finds the shared system prompt's two blocks")
}

func TestMigrationImportsFromTheSharedPool(t *testing.T) {
	s, _ := run(t, "workload.sessions=60", "system.nodes=2", "system.routing=migrate", "system.migrate_fraction=0.5", "accelerator.reserve_gb=40")
	assert.Greater(t, s.Decisions["migrations"], int64(10))
	assert.Greater(t, s.Decisions["query_hits"], s.Decisions["migrations"]/2, "a moved session's cache is in the shared pool")
	assert.Greater(t, s.Bytes["network_from_pool"], int64(0))
}

func TestRecomputeReusesNothingAndIsSlowerThanFPGA(t *testing.T) {
	if testing.Short() {
		t.Skip("the default workload")
	}
	recompute, _ := run(t, "system.design=recompute")
	fpga, _ := run(t, "system.design=fpga")
	cpu, _ := run(t, "system.design=cpu")
	assert.Zero(t, recompute.PrefillTokensReused)
	assert.Greater(t, fpga.PrefillTokensReused, int64(0))
	assert.Greater(t, recompute.TTFTms.Mean, fpga.TTFTms.Mean)
	assert.Greater(t, recompute.PrefillTokensComputed, fpga.PrefillTokensComputed)
	t.Logf("mean TTFT: recompute %.1f ms, cpu %.1f ms, fpga %.1f ms; reused tokens cpu %d fpga %d",
		recompute.TTFTms.Mean, cpu.TTFTms.Mean, fpga.TTFTms.Mean, cpu.PrefillTokensReused, fpga.PrefillTokensReused)
}

func TestBeamSearchChargesItsReorderPerStep(t *testing.T) {
	sample, _ := run(t, "workload.sessions=30")
	beams2, _ := run(t, "workload.sessions=30", "accelerator.decoding.kernel=beam", "accelerator.decoding.beams=2")
	beams8, _ := run(t, "workload.sessions=30", "accelerator.decoding.kernel=beam", "accelerator.decoding.beams=8")
	assert.Greater(t, beams2.TPOTms.Mean, sample.TPOTms.Mean, "the reorder copies the KV cache every step")
	assert.Greater(t, beams8.TPOTms.Mean, beams2.TPOTms.Mean, "four times the beams, four times the copies")
	t.Logf("mean TPOT: sample %.2f ms, 2 beams %.2f ms, 8 beams %.2f ms", sample.TPOTms.Mean, beams2.TPOTms.Mean, beams8.TPOTms.Mean)
}

// BenchmarkRunSmall runs 100 sessions with the patent's design and reports
// simulated requests per wall second.
func BenchmarkRunSmall(b *testing.B) {
	requests := 0
	for b.Loop() {
		s, _ := run(b, "workload.sessions=100")
		requests += s.RequestsCompleted
	}
	b.ReportMetric(float64(requests)/b.Elapsed().Seconds(), "requests/s")
}

// TestClosedLoopHitRatioEqualsTheIdeal replays Mooncake's traces closed
// loop, one request at a time, with unlimited storage and block hashing:
// every export lands before the next query, so the simulated hit ratio
// must be exactly the trace's ideal prefix hit ratio (a test of the whole
// query/export path). A small model keeps the KV traffic, and so the run,
// short; the hit accounting does not depend on it.
func TestClosedLoopHitRatioEqualsTheIdeal(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 16,024 requests")
	}
	for _, name := range []string{"mooncake_synthetic_trace.jsonl.gz", "mooncake_conversation_trace.jsonl.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("..", "workloads", "testdata", name)
			trace, err := workloads.ReadTrace("mooncake", path, false)
			require.NoError(t, err)
			ideal := trace.Stats()
			s, _ := run(t, "workload.kind=mooncake", "workload.path="+path, "workload.max_concurrency=1",
				"storage.capacity=unlimited", "fpga.hashing=block", "model=qwen2.5-7b", "accelerator.tp=1", longContext)
			require.Equal(t, ideal.Requests, s.RequestsCompleted)
			assert.Equal(t, ideal.HitTokens, s.PrefillTokensReused)
			assert.Equal(t, ideal.InputTokens, s.PromptTokens)
			assert.Equal(t, ideal.HitRatioTokens(), s.HitRatioTokens, "exactly the ideal ratio")
			t.Logf("hit_ratio_tokens %.6f = ideal %.6f (%d of %d tokens)", s.HitRatioTokens, ideal.HitRatioTokens(), s.PrefillTokensReused, s.PromptTokens)
		})
	}
}

func writeTrace(t *testing.T, lines string) string {
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(lines), 0o644))
	return path
}

const tinyMooncake = `{"timestamp": 0, "input_length": 1024, "output_length": 4, "hash_ids": [0, 1]}
{"timestamp": 2000, "input_length": 1100, "output_length": 4, "hash_ids": [0, 1, 2]}
{"timestamp": 4000, "input_length": 700, "output_length": 4, "hash_ids": [0, 9]}
`

func TestTraceWorkloadErrors(t *testing.T) {
	bad := writeTrace(t, tinyMooncake+`{"timestamp": 5000, "input_length": -3, "output_length": 4, "hash_ids": []}`+"\n")
	cases := []struct {
		name string
		sets []string
		want string
	}{
		{"no path", []string{"workload.kind=mooncake"}, "workload.path: a mooncake trace needs its file"},
		{"missing file", []string{"workload.kind=azure", "workload.path=/nonexistent/a.csv"}, "/nonexistent/a.csv: no such file"},
		{"bad line", []string{"workload.kind=mooncake", "workload.path=" + bad}, bad + ":4: field input_length: -3: must be at least 1"},
		{"block size", []string{"workload.kind=mooncake", "workload.path=" + bad, "workload.skip_bad_lines=true",
			"fpga.hashing=block", "fpga.block_tokens=256"}, "--set fpga.block_tokens=256: key fpga.block_tokens: the mooncake trace's block keys are 512-token blocks, the store's 256"},
		{"block size of a design's chunks", []string{"workload.kind=mooncake", "workload.path=/nonexistent/never-read.jsonl", "system.design=lmcache"},
			"key workload.kind: the mooncake trace's block keys are 512-token blocks, the store's 256 (fpga.block_tokens, or the design's chunks)"},
		{"bad kind", []string{"workload.kind=vidur"}, `"vidur" is not allowed`},
		{"bad scale", []string{"workload.time_scale=0"}, "workload.time_scale"},
		{"bad concurrency", []string{"workload.max_concurrency=-1"}, "workload.max_concurrency"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := loadAndBuild(t, "", c.sets)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	s, _ := run(t, "workload.kind=mooncake", "workload.path="+bad, "workload.skip_bad_lines=true")
	assert.Equal(t, 1, s.SkippedTraceLines)
	assert.Equal(t, 3, s.RequestsCompleted)
}

func TestTraceReplayModes(t *testing.T) {
	path := writeTrace(t, tinyMooncake)
	base := []string{"workload.kind=mooncake", "workload.path=" + path, "fpga.hashing=block", "storage.capacity=unlimited"}
	open, rows := run(t, base...)
	assert.Equal(t, 3, open.RequestsCompleted)
	assert.Contains(t, string(rows), "\n2,2,0,0,first_tokens,true,4000.000000,", "the third request arrives at 4 s")
	_, fast := run(t, append(base, "workload.time_scale=0.5")...)
	assert.Contains(t, string(fast), "\n2,2,0,0,first_tokens,true,2000.000000,", "half the inter-arrival times")
	limited, _ := run(t, append(base, "workload.limit=2")...)
	assert.Equal(t, 2, limited.RequestsCompleted)
	closed, _ := run(t, append(base, "workload.max_concurrency=1")...)
	assert.Equal(t, int64(1024+512), closed.PrefillTokensReused, "request 2 reuses blocks 0 and 1, request 3 block 0")
}

// TestClosedLoopNeverExceedsItsSlots checks against a plain sweep over the
// records: a request holds its slot from arrival to the end of its export.
func TestClosedLoopNeverExceedsItsSlots(t *testing.T) {
	for _, limit := range []int{1, 3, 8} {
		_, rows := run(t, "workload.sessions=40", fmt.Sprintf("workload.max_concurrency=%d", limit))
		records, err := csv.NewReader(bytes.NewReader(rows)).ReadAll()
		require.NoError(t, err)
		col := map[string]int{}
		for i, name := range records[0] {
			col[name] = i
		}
		type edge struct {
			at    float64
			delta int
		}
		var edges []edge
		for _, r := range records[1:] {
			num := func(name string) float64 { v, _ := strconv.ParseFloat(r[col[name]], 64); return v }
			start := num("arrival_ms")
			// the end is a sum of three values rounded to 1e-6 ms: allow for it
			edges = append(edges, edge{start, 1}, edge{start + num("e2e_ms") + num("export_ms") - 3e-6, -1})
		}
		sort.Slice(edges, func(i, j int) bool {
			return edges[i].at < edges[j].at || (edges[i].at == edges[j].at && edges[i].delta < edges[j].delta)
		})
		held, peak := 0, 0
		for _, e := range edges {
			held += e.delta
			peak = max(peak, held)
		}
		assert.Equal(t, limit, peak, "the slots fill but never overflow")
	}
}

// longContext lets Mooncake's requests (up to 191,386 tokens of prompt and
// output) run whole on the default Llama-3-70B, whose window is 8,192.
const longContext = "accelerator.max_model_len=262144"

// BenchmarkReplayMooncakeConversation replays the whole Mooncake
// conversation trace (12,031 requests over an hour) open loop on the
// default system with unlimited storage: the replay target (under
// 30 s and 4 GB on the 2-core machine).
func BenchmarkReplayMooncakeConversation(b *testing.B) {
	path := filepath.Join("..", "workloads", "testdata", "mooncake_conversation_trace.jsonl.gz")
	var s reports.Summary
	for b.Loop() {
		s, _ = run(b, append([]string{"workload.kind=mooncake", "workload.path=" + path, "storage.capacity=unlimited", longContext}, benchNode...)...)
	}
	b.ReportMetric(float64(s.Events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(s.RequestsCompleted), "requests")
}

// With accelerator.retain off every turn's KV leaves the device at its
// end: no resumed turn finds its history resident; recompute recomputes
// it all, the patent's design imports it from the store instead.
func TestRetainOffDropsEveryTurnsKV(t *testing.T) {
	for _, design := range []string{"recompute", "fpga"} {
		on, _ := run(t, "system.design="+design, "workload.sessions=40")
		off, _ := run(t, "system.design="+design, "workload.sessions=40", "accelerator.retain=off")
		require.Equal(t, on.RequestsCompleted, off.RequestsCompleted, design)
		assert.Positive(t, on.PrefillTokensResident, "%s: with retain on some resumed turns find their history resident", design)
		assert.Zero(t, off.PrefillTokensResident, design)
		assert.Equal(t, int64(off.RequestsCompleted), off.Evictions["device"], "%s: one drop per completed turn", design)
		if design == "recompute" {
			assert.Equal(t, off.PromptTokens, off.PrefillTokensComputed, "every prompt token recomputed")
		} else {
			assert.Greater(t, off.PrefillTokensReused, on.PrefillTokensReused, "the store serves what the device no longer holds")
		}
	}
	_, err := Load("", []string{"accelerator.retain=maybe"})
	assert.ErrorContains(t, err, `key accelerator.retain: "maybe" is not allowed (allowed: on, off)`)
}

// TestFullPrefixHitComputesTheLastToken: a request whose whole prompt is
// stored reuses all but its last token and computes that one, as vLLM
// does (the first logits need it), so that every request's reused,
// resident and computed tokens add up to its prompt. The full hit
// recorded the whole prompt reused and one token computed, a token counted
// twice (145 rows of the Mooncake synthetic replay).
func TestFullPrefixHitComputesTheLastToken(t *testing.T) {
	path := writeTrace(t, tinyMooncake+`{"timestamp": 6000, "input_length": 1024, "output_length": 4, "hash_ids": [0, 1]}`+"\n")
	res := simulate(t, "workload.kind=mooncake", "workload.path="+path, "fpga.hashing=block", "storage.capacity=unlimited")
	records := res.Run.sys.Records()
	require.Len(t, records, 4)
	for _, r := range records {
		assert.Equal(t, r.PromptTokens, r.ReusedTokens+r.ResidentTokens+r.ComputedTokens, "request %d", r.ID)
	}
	full := records[3]
	assert.Equal(t, int64(1023), full.ReusedTokens, "the whole prompt less its last token")
	assert.Equal(t, int64(1), full.ComputedTokens)
	s := res.Summary()
	assert.Equal(t, s.PromptTokens, s.PrefillTokensReused+s.PrefillTokensResident+s.PrefillTokensComputed)
}

// TestOneTurnReplaysSummariseTheirHits: in a one-turn trace every request
// is a session's first, yet a block-keyed one that hits the store waits
// for KV another session stored; summary.json's resumed_ttft_ms and
// kv_wait_ms are over the requests that hit the store as well as the
// later turns looked up or recomputed (they were 0 for a Mooncake replay
// while requests.csv showed a wait on every hit row).
func TestOneTurnReplaysSummariseTheirHits(t *testing.T) {
	res := simulate(t, "workload.kind=mooncake", "workload.path="+writeTrace(t, tinyMooncake), "fpga.hashing=block", "storage.capacity=unlimited")
	var ttft, wait []float64
	for _, r := range res.Run.sys.Records() {
		assert.Equal(t, hostcpu.FirstTokens, r.Decision, "request %d", r.ID)
		if r.Hit {
			ttft, wait = append(ttft, ms(r.TTFT)), append(wait, ms(r.KVWait))
		}
	}
	require.Len(t, wait, 2, "requests 2 and 3 hit")
	s := res.Summary()
	assert.Positive(t, s.KVWaitMs.Mean)
	assert.Equal(t, reports.NewPercentiles(wait), s.KVWaitMs)
	assert.Equal(t, reports.NewPercentiles(ttft), s.ResumedTTFTms)
}
