package main

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/scenario"
)

// folderFiles reads every file under dir, by its path inside dir.
func folderFiles(t *testing.T, dir string) map[string][]byte {
	files := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		files[rel], err = os.ReadFile(path)
		return err
	}))
	return files
}

// requireSameFolder requires two output folders to hold the same files,
// byte for byte.
func requireSameFolder(t *testing.T, a, b string) {
	t.Helper()
	fa, fb := folderFiles(t, a), folderFiles(t, b)
	require.NotEmpty(t, fa, a)
	require.Equal(t, slices.Sorted(maps.Keys(fa)), slices.Sorted(maps.Keys(fb)), "%s and %s hold other files", a, b)
	for name, data := range fa {
		if !assert.Equal(t, string(data), string(fb[name]), "%s differs between %s and %s", name, a, b) {
			return
		}
	}
}

// roundTripSmall keeps the round trips short: few sessions, whose KV
// leaves the accelerator after each turn so that resumed turns go to the
// store.
var roundTripSmall = []string{"workload.sessions=12", "accelerator.retain=off"}

// Two tiers, and one, for the designs that take them.
const (
	twoTiers = "storage.tiers=[{name: dram, device: ddr5-4800, capacity: 16GB}, {name: ssd, device: kioxia-cm6, capacity: 2TB}]"
	oneTier  = "storage.tiers=[{name: ssd, device: samsung-pm1743, capacity: 1TB}]"
)

// roundTripCase is a run whose scenario.yaml must repeat it.
type roundTripCase struct {
	name string
	sets []string
}

// roundTripCases are every design, with tiers and at both resolutions.
var roundTripCases = []roundTripCase{
	{"recompute", []string{"system.design=recompute"}},
	{"cpu", []string{"system.design=cpu"}},
	{"fpga", []string{"system.design=fpga"}},
	{"lmcache", []string{"system.design=lmcache"}},
	{"cachedattention", []string{"system.design=cachedattention"}},
	{"recompute with tiers", []string{"system.design=recompute", twoTiers}},
	{"cpu with tiers", []string{"system.design=cpu", twoTiers}},
	{"fpga with one tier", []string{"system.design=fpga", oneTier}},
	{"lmcache with tiers", []string{"system.design=lmcache", twoTiers}},
	{"cachedattention with tiers", []string{"system.design=cachedattention", twoTiers}},
	{"fpga at the request resolution", []string{"system.design=fpga", "storage.resolution=request"}},
	{"cpu with tiers at the request resolution", []string{"system.design=cpu", twoTiers, "storage.resolution=request"}},
	{"lmcache at the request resolution", []string{"system.design=lmcache", "storage.resolution=request"}},
	{"cachedattention at the request resolution", []string{"system.design=cachedattention", "storage.resolution=request"}},
	// issue 43: the arrival process's parameters left out are recorded at their defaults; tenants and objectives as given
	{"fpga, spike arrivals, tenants and objectives", []string{"system.design=fpga", "workload.arrival=spike", "workload.spike_at_s=2", "slo.tpot_ms=40",
		"workload.tenants=[{name: a, share: 0.25, output_median_tokens: 50, slo: {ttft_ms: 300}}, {name: b, share: 0.75}]"}},
	{"cpu, gamma arrivals", []string{"system.design=cpu", "workload.arrival=gamma", "slo.ttft_ms=500"}},
}

// roundTripMechanisms are each store mechanism of docs/scenario.md set,
// the keys a design chooses for itself set against it, and the other
// forms of a run: several nodes, a trace, functional mode.
var roundTripMechanisms = []roundTripCase{
	{"fpga, one drive", []string{"system.design=fpga", "storage.drives=1"}},
	{"fpga, block hashing", []string{"system.design=fpga", "fpga.hashing=block", "fpga.block_tokens=128"}},
	{"lmcache, patent hashing and claim-9 layout", []string{"system.design=lmcache", "fpga.hashing=patent", "fpga.layout=claim9"}},
	{"cachedattention, 64-token blocks", []string{"system.design=cachedattention", "fpga.hashing=block", "fpga.block_tokens=64"}},
	{"fpga, delta exports", []string{"system.design=fpga", "fpga.export_mode=delta", "fpga.layout=layer-major"}},
	{"fpga, write-back", []string{"system.design=fpga", "system.export=on_evict", "accelerator.retain=on"}},
	{"cpu, layer-wise load", []string{"system.design=cpu", "store.load=layerwise", "store.load_wait=request"}},
	{"cpu, async save", []string{"system.design=cpu", "store.save=async", "store.async_buffer=4GiB", "store.async_full=drop"}},
	{"lmcache, whole load and sync save", []string{"system.design=lmcache", "store.load=whole", "store.save=sync"}},
	{"cpu, prefetch", []string{"system.design=cpu", twoTiers, "store.load=layerwise", "store.prefetch=queue", "store.eviction=queue-aware"}},
	{"cachedattention, no prefetch", []string{"system.design=cachedattention", "store.prefetch=none", "store.eviction=lru"}},
	{"cachedattention, look-ahead and pre-load", []string{"system.design=cachedattention", "workload.max_concurrency=2", "store.dram_tier=16GiB",
		"store.prefetch_window=3", "store.preload=queue", "store.preload_buffer=4GiB", "workload.closed_order=session"}},
	{"cpu, whole extents", []string{"system.design=cpu", "store.chunk=0"}},
	{"lmcache, pageable host buffers", []string{"system.design=lmcache", "store.host_buffers=pageable", "store.pageable_gbps=12"}},
	{"fpga, two nodes migrating", []string{"system.design=fpga", "system.nodes=2", "system.routing=migrate", "system.migrate_fraction=0.5"}},
	{"lmcache on a trace", append([]string{"system.design=lmcache", "workload.kind=mooncake", "workload.path=../../workloads/testdata/mooncake_conversation_trace.jsonl.gz",
		"workload.limit=40", "fpga.block_tokens=512", "accelerator.max_model_len=262144", "store.async_buffer=128GiB"}, scenario.SyntheticDefaults()...)}, // the synthetic keys back to the default's
	{"functional", []string{"mode=functional", "workload.sessions=3", "workload.first_prompt_median_tokens=40", "workload.first_prompt_p90_tokens=80",
		"workload.follow_up_median_tokens=20", "workload.follow_up_p90_tokens=40", "workload.output_median_tokens=10", "workload.output_p90_tokens=20"}},
}

// withSets is simrun's arguments with a --set for each of sets.
func withSets(args []string, sets ...string) []string {
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	return args
}

// TestScenarioYAMLRepeatsTheRun: a run of the scenario.yaml a run wrote
// writes the same folder, byte for byte (until 2026-11-27 the defaults
// written for fpga.hashing and fpga.layout overrode lmcache's and
// cachedattention's own choices read back, and a run with storage.tiers
// wrote storage.device, capacity and drives beside them, refused). With
// -short, the mechanisms are left out.
func TestScenarioYAMLRepeatsTheRun(t *testing.T) {
	cases := roundTripCases
	if !testing.Short() {
		cases = append(slices.Clone(cases), roundTripMechanisms...)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			first, again := filepath.Join(dir, "first"), filepath.Join(dir, "again")
			code, _, stderr := simrun(withSets([]string{"run", "-o", first}, append(roundTripSmall, c.sets...)...)...)
			require.Equal(t, 0, code, stderr)
			code, _, stderr = simrun("run", "-o", again, "-c", filepath.Join(first, "scenario.yaml"))
			require.Equal(t, 0, code, stderr)
			requireSameFolder(t, first, again)
		})
	}
}

// TestSameSeedSameFolder: two runs of one scenario and seed write the
// same folder, every file, their traces included.
func TestSameSeedSameFolder(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a", "b"} {
		out := filepath.Join(dir, name)
		args := []string{"run", "-o", out, "--seed", "7", "--trace", filepath.Join(out, "trace.json"), "--vcd", filepath.Join(out, "signals.vcd")}
		code, stdout, stderr := simrun(withSets(args, "system.design=cachedattention", "workload.sessions=6", "accelerator.retain=off")...)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stdout, "wall time", "the wall time goes to the console")
	}
	requireSameFolder(t, filepath.Join(dir, "a"), filepath.Join(dir, "b"))
	summary, err := os.ReadFile(filepath.Join(dir, "a", "summary.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(summary), "wall_time")
}

// TestSweepPointsRepeat: two runs of a sweep write the same folder, its
// report included (not with -short), and each point's scenario.yaml
// repeats the point.
func TestSweepPointsRepeat(t *testing.T) {
	spec := writeSweepFile(t, "set:\n  workload.sessions: 6\n  accelerator.retain: \"off\"\ngrid:\n  system.design: [lmcache, cachedattention]\n  storage.resolution: [page, request]\n")
	dir := t.TempDir()
	for _, name := range []string{"a", "b"} {
		code, _, stderr := simrun("sweep", "-c", spec, "-o", filepath.Join(dir, name), "-j", "2")
		require.Equal(t, 0, code, stderr)
		if !testing.Short() {
			code, _, stderr = simrun("report", "-i", filepath.Join(dir, name))
			require.Equal(t, 0, code, stderr)
		}
	}
	requireSameFolder(t, filepath.Join(dir, "a"), filepath.Join(dir, "b"))
	points, err := os.ReadDir(filepath.Join(dir, "a", "points"))
	require.NoError(t, err)
	require.Len(t, points, 4)
	for i, p := range points {
		point, again := filepath.Join(dir, "a", "points", p.Name()), filepath.Join(dir, fmt.Sprintf("again%d", i))
		code, _, stderr := simrun("run", "-o", again, "-c", filepath.Join(point, "scenario.yaml"))
		require.Equal(t, 0, code, stderr)
		requireSameFolder(t, point, again)
	}
}

// TestScenarioYAMLNamesTheDeviceFileItRead: a device file given beside a
// scenario file (a path relative to that file's folder) is recorded by
// the path the run read, so that the scenario.yaml in the output folder
// repeats the run (until 2026-11-27 it named the relative path, which
// read back from the output folder named no file).
func TestScenarioYAMLNamesTheDeviceFileItRead(t *testing.T) {
	dir := t.TempDir()
	inputs := filepath.Join(dir, "inputs")
	require.NoError(t, os.Mkdir(inputs, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(inputs, "gpu.yaml"), []byte("base: h100-sxm\nname: slow-h100\nmem_bandwidth_tbps: 2\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(inputs, "scenario.yaml"), []byte("accelerator:\n  device_file: gpu.yaml\nworkload:\n  sessions: 8\n"), 0o644))
	first, again := filepath.Join(dir, "first"), filepath.Join(dir, "again")
	code, _, stderr := simrun("run", "-o", first, "-c", filepath.Join(inputs, "scenario.yaml"))
	require.Equal(t, 0, code, stderr)
	code, _, stderr = simrun("run", "-o", again, "-c", filepath.Join(first, "scenario.yaml"))
	require.Equal(t, 0, code, stderr)
	requireSameFolder(t, first, again)
}
