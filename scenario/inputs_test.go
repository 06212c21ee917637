package scenario

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tiersAtFirst is a cpu-design scenario whose first tier has the capacity
// given; the second tier's is small, so the index checks pass.
func tiersAtFirst(capacity string) string {
	return "system:\n  design: cpu\nstorage:\n  tiers:\n    - name: a\n      device: kioxia-cm6\n      capacity: " + capacity +
		"\n    - name: b\n      device: kioxia-cm6\n      capacity: 1TB\n"
}

// customModel is a scenario of model: custom with the vocabulary given
// (line 9).
func customModel(vocab string) string {
	return "model: custom\ncustom_model:\n  layers: 2\n  hidden: 64\n  heads: 4\n  kv_heads: 2\n  head_dim: 16\n  intermediate: 128\n  vocab: " + vocab + "\n  params_b: 0.01\n"
}

// TestWrongInputsAreRefusedNamingTheKey holds issue 38's reproducers of a
// scenario accepted against the docs or read silently wrong: each is now an
// error naming the file and line or --set, the key, and what is allowed.
func TestWrongInputsAreRefusedNamingTheKey(t *testing.T) {
	cases := []struct {
		name, yaml string
		sets       []string
		want       string
	}{
		{"a tier past the index's reach", tiersAtFirst("8PiB"), nil,
			"scenario.yaml:7: key storage.tiers[0].capacity: 8PiB is more than the 4503599625273344 B (2147483647 regions of 2 MiB, fpga.region_mib) the index addresses"},
		{"storage.capacity past the index's reach", "", []string{"storage.capacity=8PiB"},
			"--set storage.capacity=8PiB: key storage.capacity: 8PiB is more than the 4503599625273344 B"},
		{"a second document", "seed: 3\n---\nseed: 4\n", nil, "scenario.yaml:2: a second YAML document: a file holds one"},
		{"a second document after comments", "seed: 3\n\n# more\n---\nseed: 4\n", nil, "scenario.yaml:4: a second YAML document"},
		// accepted against the docs
		{"an empty tier list", "", []string{"storage.tiers=[]"}, "--set storage.tiers=[]: key storage.tiers: an empty list: give one tier or more"},
		{"an empty tier list in a file", "storage:\n  tiers: []\n", nil, "scenario.yaml:2: key storage.tiers: an empty list"},
		{"an empty resolution", "", []string{"storage.resolution="}, `--set storage.resolution=: key storage.resolution: "" is not allowed (allowed: page, request)`},
		{"preload with recompute", "", []string{"system.design=recompute", "store.preload=queue"}, "--set store.preload=queue: key store.preload: queue pre-loads a CPU-run store's"},
		{"a DRAM tier for the cpu design", "", []string{"system.design=cpu", "store.dram_tier=8GiB"},
			"--set store.dram_tier=8GiB: key store.dram_tier: 8GiB: the cpu design has no host-DRAM tier (lmcache and cachedattention have one)"},
		{"a DRAM tier beside tiers", "", []string{"system.design=lmcache", "store.dram_tier=8GiB", "storage.tiers=[{name: ssd, device: kioxia-cm6, capacity: 1TB}]"},
			"--set store.dram_tier=8GiB: key store.dram_tier: 8GiB: storage.tiers is given, and replaces the design's host-DRAM tier"},
		{"a KV cap above the device's memory", "", []string{"accelerator.kv_capacity=1TB"},
			"--set accelerator.kv_capacity=1TB: key accelerator.kv_capacity: 1TB is more than the 146892587008 B the device's memory leaves for KV"},
		// a tier item's left-out key was blamed on (default)
		{"a tier without a capacity by --set", "", []string{"system.design=cpu", "storage.tiers=[{name: a, device: kioxia-cm6}]"},
			"--set storage.tiers=[{name: a, device: kioxia-cm6}]: key storage.tiers[0].capacity: missing: every tier wants a capacity"},
		{"a tier without a device in a file", "system:\n  design: cpu\nstorage:\n  tiers:\n    - name: a\n      capacity: 1TB\n    - name: b\n      capacity: 2TB\n", nil,
			"scenario.yaml:5: key storage.tiers[0].device: missing: every tier wants a device (allowed: kioxia-cm6,"},
		{"a bad tier device by --set", "", []string{"system.design=cpu", "storage.tiers=[{name: a, device: nope, capacity: 1TB}]"},
			`--set storage.tiers=[{name: a, device: nope, capacity: 1TB}]: key storage.tiers[0].device: "nope" is not allowed`},
		// messages that blamed a key the user never set
		{"a custom vocabulary of 1", customModel("1"), nil, "scenario.yaml:9: key custom_model.vocab: 1 is out of range (allowed: 2 to 16777216)"},
		{"the default top-k over a custom vocabulary", customModel("10"), nil,
			"scenario.yaml:9: key custom_model.vocab: accelerator.decoding.top_k 50 is more than the model's vocabulary of 10 tokens"},
		{"a top-k set over a custom vocabulary", customModel("10"), []string{"accelerator.decoding.top_k=20"},
			"--set accelerator.decoding.top_k=20: key accelerator.decoding.top_k: accelerator.decoding.top_k 20 is more than the model's vocabulary of 10 tokens"},
		{"a custom shape left out", "model: custom\ncustom_model:\n  layers: 2\n", nil,
			"scenario.yaml:1: key custom_model.hidden: missing: model: custom needs every key of its shape"},
		{"a pre-load buffer past the KV memory", "", []string{"system.design=cachedattention", "workload.max_concurrency=4", "store.preload_buffer=39GB"},
			"--set store.preload_buffer=39GB: key store.preload_buffer: 39GB leaves 1000000000 B of the accelerator's 40000000000 B for KV, less than one request of the whole 8192-token context window"},
		{"a think median past the default p90", "", []string{"workload.think_median_s=400"},
			"--set workload.think_median_s=400: key workload.think_median_s: p90 302 (workload.think_p90_s) must be finite and at least the median 400 (workload.think_median_s)"},
		{"a negative system prompt", "", []string{"workload.system_prompt_tokens=-5"},
			"--set workload.system_prompt_tokens=-5: key workload.system_prompt_tokens: workload.system_prompt_tokens = -5: must be at least 0"},
		{"functional sample's default top-k over a small vocabulary", "", []string{"mode=functional", "functional.vocab=8", "functional.decoding=sample", "accelerator.decoding.top_k=8"},
			"--set functional.vocab=8: key functional.vocab: functional.top_k 40 is more than functional.vocab's 8 tokens"},
		{"a whole load against the design's prefetch", "system:\n  design: cachedattention\nstore:\n  load: whole\n", nil,
			"scenario.yaml:4: key store.load: store.prefetch (the cachedattention design's own): queue needs store.load: layerwise"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := loadAndBuild(t, c.yaml, c.sets)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// TestTierCapacityIsNotClamped: a tier within the index's reach keeps its
// bytes (whole regions), the largest the index addresses included.
func TestTierCapacityIsNotClamped(t *testing.T) {
	l, err := Load(writeScenario(t, tiersAtFirst("4503599625273344B")), nil)
	require.NoError(t, err)
	assert.Equal(t, int64(4503599625273344), l.resolved.tiers[0].Bytes)
}

// TestSweepAndDeviceFileErrorsNameTheirLine: the files a scenario reads
// besides itself refuse a second document too, and an empty grid is named
// at its line.
func TestSweepAndDeviceFileErrorsNameTheirLine(t *testing.T) {
	sweep := filepath.Join(t.TempDir(), "sweep.yaml")
	require.NoError(t, os.WriteFile(sweep, []byte("grid:\n  seed: [1, 2]\n---\ngrid:\n  seed: [3]\n"), 0o644))
	_, err := LoadSweep(sweep)
	assert.ErrorContains(t, err, "sweep.yaml:3: a second YAML document")
	require.NoError(t, os.WriteFile(sweep, []byte("set:\n  seed: 1\ngrid: {}\n"), 0o644))
	_, err = LoadSweep(sweep)
	assert.ErrorContains(t, err, "sweep.yaml:3: key grid: the grid is empty", "the grid's line")
	_, err = Load(writeDeviceFile(t, "base: h100-sxm\n---\nbase: a100-80gb\n"), nil)
	assert.ErrorContains(t, err, "key accelerator.device_file: ")
	assert.ErrorContains(t, err, "my-gpu.yaml:2: a second YAML document")
}

// TestKeysAtTheDefaultStayQuiet: a key the design does not read, given the
// default's value (as a run's scenario.yaml gives every key), is taken.
func TestKeysAtTheDefaultStayQuiet(t *testing.T) {
	require.NoError(t, loadAndBuild(t, "", []string{"system.design=cpu", "store.dram_tier=64GiB", "store.preload=", "workload.sessions=2"}))
	// beam search reads no top-k: the default's 40 over a vocabulary of 8 was refused, blaming functional.top_k
	require.NoError(t, loadAndBuild(t, "", []string{"mode=functional", "functional.vocab=8", "functional.decoding=beam", "accelerator.decoding.top_k=8"}))
}

// TestDeviceFileMemoryIsBlamedOnTheFile: a device file's memory too small
// for the model blames the device file, not the model the user left at
// the default.
func TestDeviceFileMemoryIsBlamedOnTheFile(t *testing.T) {
	_, err := Load(writeDeviceFile(t, "base: h100-sxm\nmem_gb: 1\n"), nil)
	assert.ErrorContains(t, err, "run.yaml:2: key accelerator.device_file: model \"llama-3-70b\" does not fit 4 x h100-sxm")
}

// TestVerifyBlamesTheUsersKeys: simrun verify's own settings (functional
// mode, its store's capacity) are not blamed for a key of the user's file.
func TestVerifyBlamesTheUsersKeys(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"storage:\n  drives: 2\n", "scenario.yaml:2: key storage.drives: functional mode keeps the stored bytes on one drive"},
		{"storage:\n  tiers:\n    - {name: a, device: kioxia-cm6, capacity: 1TB}\n", "scenario.yaml:3: key storage.tiers: functional mode stores real bytes on one SSD"},
		{"storage:\n  device: nope\n", "scenario.yaml:2: key storage.device: "},
	} {
		_, err := Verify(writeScenario(t, c.yaml), 1, 1, nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
		assert.NotContains(t, err.Error(), verifySets)
	}
}
