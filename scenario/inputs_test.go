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
