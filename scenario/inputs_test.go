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
		// a tier item's left-out key was blamed on (default)
		{"a tier without a capacity by --set", "", []string{"system.design=cpu", "storage.tiers=[{name: a, device: kioxia-cm6}]"},
			"--set storage.tiers=[{name: a, device: kioxia-cm6}]: key storage.tiers[0].capacity: missing: every tier wants a capacity"},
		{"a tier without a device in a file", "system:\n  design: cpu\nstorage:\n  tiers:\n    - name: a\n      capacity: 1TB\n    - name: b\n      capacity: 2TB\n", nil,
			"scenario.yaml:5: key storage.tiers[0].device: missing: every tier wants a device (allowed: kioxia-cm6,"},
		{"a bad tier device by --set", "", []string{"system.design=cpu", "storage.tiers=[{name: a, device: nope, capacity: 1TB}]"},
			`--set storage.tiers=[{name: a, device: nope, capacity: 1TB}]: key storage.tiers[0].device: "nope" is not allowed`},
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

// TestSweepAndDeviceFilesHoldOneDocument: the files a scenario reads
// besides itself refuse a second document too.
func TestSweepAndDeviceFilesHoldOneDocument(t *testing.T) {
	sweep := filepath.Join(t.TempDir(), "sweep.yaml")
	require.NoError(t, os.WriteFile(sweep, []byte("grid:\n  seed: [1, 2]\n---\ngrid:\n  seed: [3]\n"), 0o644))
	_, err := LoadSweep(sweep)
	assert.ErrorContains(t, err, "sweep.yaml:3: a second YAML document")
	_, err = Load(writeDeviceFile(t, "base: h100-sxm\n---\nbase: a100-80gb\n"), nil)
	assert.ErrorContains(t, err, "key accelerator.device_file: ")
	assert.ErrorContains(t, err, "my-gpu.yaml:2: a second YAML document")
}

// TestKeysAtTheDefaultStayQuiet: a key the design does not read, given the
// default's value (as a run's scenario.yaml gives every key), is taken.
func TestKeysAtTheDefaultStayQuiet(t *testing.T) {
	require.NoError(t, loadAndBuild(t, "", []string{"system.design=cpu", "store.dram_tier=64GiB", "store.preload=", "workload.sessions=2"}))
}
