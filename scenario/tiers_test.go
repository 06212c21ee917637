package scenario

import (
	"fmt"
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/memory"
)

const twoTiers = "storage.tiers=[{name: dram, device: ddr5-4800, capacity: 24GB}, {name: ssd, device: kioxia-cm6, capacity: 2TB}]"

// TestTwoTierPoolRunsEndToEnd runs the cpu design over host DRAM in front
// of the CM6: the DRAM overflows, so objects are demoted to the SSD and
// promoted back when their sessions resume. Every object ends in one tier
// (the run's end-of-run check), demotions out of DRAM are demotions into
// the SSD, and each tier's device wrote exactly the bytes the pool put in
// that tier.
func TestTwoTierPoolRunsEndToEnd(t *testing.T) {
	res, _ := execute(t, "system.design=cpu", "workload.sessions=60", "accelerator.reserve_gb=40", twoTiers)
	s := res.Summary()
	require.Len(t, s.Tiers, 2)
	dram, ssd := s.Tiers[0], s.Tiers[1]
	assert.Equal(t, "ddr5-4800", dram.Device)
	assert.Positive(t, dram.Hits, "resumed sessions found in DRAM")
	assert.Positive(t, ssd.Hits, "and on the SSD")
	assert.Positive(t, dram.DemotedOut, "the DRAM overflowed")
	assert.Equal(t, dram.DemotedOut, ssd.DemotedIn, "what leaves DRAM lands on the SSD")
	assert.Positive(t, ssd.Promoted, "SSD hits go back to DRAM")
	for i, tier := range s.Tiers {
		assert.Equal(t, res.Run.pool.Stats(i).BytesWritten, tier.BytesWritten, "%s: its device wrote what the pool put there", tier.Name)
	}
	assert.Equal(t, s.Bytes["storage_write"], dram.BytesWritten+ssd.BytesWritten)
	assert.Zero(t, lost(res), "a 2 TB SSD behind DRAM loses nothing")
}

// Every design takes a one-tier list (recompute builds it and leaves it
// idle; it used to index a device list it had not filled), and the SSD
// tier reports its drive writes per day against its rating.
func TestEveryDesignTakesATierList(t *testing.T) {
	for _, design := range store.DesignNames() {
		t.Run(design, func(t *testing.T) {
			res, _ := execute(t, "system.design="+design, "workload.sessions=20", "store.prefetch=none",
				"storage.tiers=[{name: ssd, device: kioxia-cm6, capacity: 2TB}]")
			s := res.Summary()
			if design == "recompute" {
				assert.Empty(t, s.Tiers)
				return
			}
			require.Len(t, s.Tiers, 1)
			ssd := s.Tiers[0]
			assert.Equal(t, 1, ssd.Drives)
			assert.Equal(t, 1.0, ssd.RatedDWPD, "the CM6's rating")
			require.Positive(t, ssd.BytesWritten)
			perDay := float64(ssd.BytesWritten) * 86400 / s.SimTimeS
			assert.InDelta(t, perDay, ssd.DriveBytesPerDay, 1e-9*perDay)
			assert.InDelta(t, perDay/3.84e12, ssd.DriveWritesPerDay, 1e-9*perDay/3.84e12)
		})
	}
}

// The one-tier form's drives are sized to their share of the store, but a
// drive write is the drive sold: 3.84 TB for the CM6, whatever the store's
// capacity (it was the share: 1 TB each for the default's 2 TB on two
// drives, and an unlimited store's made next to no drive writes).
func TestOneTierDriveWritesAreOverTheDrivesSold(t *testing.T) {
	for _, c := range []struct{ capacity, drives string }{{"2TB", "2"}, {"unlimited", "2"}, {"500GB", "1"}} {
		t.Run(c.capacity+"/"+c.drives, func(t *testing.T) {
			res, _ := execute(t, "system.design=fpga", "workload.sessions=20", "storage.capacity="+c.capacity, "storage.drives="+c.drives)
			s := res.Summary()
			require.Len(t, s.Tiers, 1)
			ssd := s.Tiers[0]
			require.Positive(t, ssd.BytesWritten)
			perDrive := float64(ssd.BytesWritten) / float64(ssd.Drives) * 86400 / s.SimTimeS
			assert.Equal(t, c.drives, fmt.Sprint(ssd.Drives))
			assert.InDelta(t, perDrive, ssd.DriveBytesPerDay, 1e-9*perDrive)
			assert.InDelta(t, perDrive/3.84e12, ssd.DriveWritesPerDay, 1e-9*perDrive/3.84e12)
		})
	}
}

func TestTierListErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		name, yaml string
		sets       []string
		want       string
	}{
		{"both forms", "storage:\n  device: kioxia-cm6\n  tiers:\n    - {name: dram, device: ddr5-4800, capacity: 1TB}\n", nil,
			"scenario.yaml:2: key storage.device: storage.tiers is given too"},
		{"unknown device", "system:\n  design: cpu\nstorage:\n  tiers:\n    - name: dram\n      device: ddr9\n      capacity: 1TB\n", nil,
			`scenario.yaml:6: key storage.tiers[0].device: "ddr9" is not allowed (allowed: `},
		{"repeated name", "system:\n  design: cpu\nstorage:\n  tiers:\n    - {name: a, device: ddr5-4800, capacity: 1TB}\n    - {name: a, device: kioxia-cm6, capacity: 1TB}\n", nil,
			`scenario.yaml:6: key storage.tiers[1].name: "a": want a name of its own (tier 0 has it)`},
		{"below a region", "system:\n  design: cpu\nstorage:\n  tiers:\n    - {name: a, device: ddr5-4800, capacity: 1KB}\n", nil,
			"scenario.yaml:5: key storage.tiers[0].capacity: 1KB is smaller than one 2 MiB region"},
		{"unknown tier key", "storage:\n  tiers:\n    - {name: a, kind: ssd}\n", nil, "key storage.tiers[0].kind: unknown key (valid keys here: capacity, device, name)"},
		{"not a list", "storage:\n  tiers: dram\n", nil, "scenario.yaml:2: key storage.tiers: expected a list of mappings"},
		{"the fpga design has one tier", "seed: 1\n", []string{twoTiers}, "key storage.tiers: the fpga design reaches one tier"},
		{"functional mode has one SSD", "mode: functional\nsystem:\n  design: cpu\nstorage:\n  tiers:\n    - {name: a, device: kioxia-cm6, capacity: 1TB}\n", nil,
			"key storage.tiers: functional mode stores real bytes on one SSD"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(writeScenario(t, c.yaml), c.sets)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// TestStripedDrivesHoldTheWholeCapacity: each of storage.drives holds
// whole stripes, and together they hold every address of the pool, so
// that the last region's last stripe has a drive (10 TB over 3 and 4
// drives used to fall short by part of a stripe).
func TestStripedDrivesHoldTheWholeCapacity(t *testing.T) {
	for _, drives := range []int{2, 3, 4, 7} {
		l, err := Load("", []string{"storage.capacity=10TB", fmt.Sprintf("storage.drives=%d", drives)})
		require.NoError(t, err)
		rs := l.resolved
		pool := rs.tiers[len(rs.tiers)-1].Bytes
		per := rs.ssd.CapacityBytes
		assert.Zero(t, per%memory.StripeBytes, "%d drives", drives)
		lastStripe := (pool - 1) / memory.StripeBytes
		assert.Less(t, lastStripe/int64(drives)*memory.StripeBytes, per, "%d drives: the last stripe fits its drive", drives)
		assert.GreaterOrEqual(t, per*int64(drives), pool)
	}
}

// Unlimited is as many regions as the index addresses, but no more bytes
// than a size may be: with regions of 8 GiB and more, 2^31-1 of them
// overflowed int64 and the error quoted a negative size against a key the
// user had not set.
func TestUnlimitedFitsInt64WithTheLargestRegions(t *testing.T) {
	for _, sets := range [][]string{
		{"storage.capacity=unlimited", "fpga.region_mib=16384"},
		{"storage.capacity=unlimited", "fpga.region_mib=8192"},
		{"system.design=lmcache", "fpga.region_mib=16384", "store.dram_tier=unlimited"},
		{"system.design=cpu", "fpga.region_mib=16384", "storage.tiers=[{name: flash, device: kioxia-cm6, capacity: unlimited}]"},
	} {
		t.Run(strings.Join(sets, ","), func(t *testing.T) {
			res, _ := execute(t, append(sets, "workload.sessions=10")...)
			for _, tier := range res.Summary().Tiers {
				assert.Positive(t, tier.CapacityBytes, tier.Name)
				assert.LessOrEqual(t, tier.CapacityBytes, int64(maxSizeBytes), tier.Name)
			}
		})
	}
}

// TestAnObjectLargerThanTheTopTierIsStoredBelowIt: cachedattention over a
// top tier smaller than any session's KV (a DRAM tier of one 2 MiB region;
// three tiers of 4 MiB, 3 GiB and 6 GiB) stores every object in the
// first tier below that holds it, and its sessions find their KV there.
// Until 2026-11-26 every export failed (the probe's 40 sessions: 133 of
// 133) and no prefill token was reused.
func TestAnObjectLargerThanTheTopTierIsStoredBelowIt(t *testing.T) {
	base := []string{"system.design=cachedattention", "accelerator.retain=off", "workload.sessions=12",
		"workload.session_rate_per_s=5", "workload.max_concurrency=4"}
	for _, c := range []struct {
		name     string
		tier     string
		lossless bool // the last tier holds every object (2 TB); 9 GiB in all drops some
	}{
		{"a DRAM tier of one region", "store.dram_tier=2MiB", true},
		{"three tiers", "storage.tiers=[{name: dram, device: ddr5-4800, capacity: 4MiB}, {name: cxl, device: ddr5-4800, capacity: 3GiB}, " +
			"{name: ssd, device: kioxia-cm6, capacity: 6GiB}]", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := simulate(t, append(base, c.tier)...)
			s := res.Summary()
			require.Positive(t, s.Store["exports"])
			assert.Zero(t, s.Store["exports_failed"])
			assert.Positive(t, s.HitRatioTokens, "sessions reuse their stored KV")
			top, next := s.Tiers[0], s.Tiers[1]
			assert.Zero(t, top.BytesWritten+top.Hits+top.Objects, "the top tier holds no object")
			assert.Positive(t, next.Hits, "lookups find the objects in the tier below")
			assert.Zero(t, next.Promoted, "nothing is promoted into a top tier too small for it")
			if c.lossless {
				assert.Zero(t, lost(res), "no looked-up object is lost")
			}
		})
	}
}

// TestExpirationsAreCountedInEveryTier: with a TTL, objects demoted to the
// SSD expire there too, and summary.json's store_expired counts every
// tier's expirations (it read the top tier's alone, so the 38 objects
// demoted to the SSD here expired uncounted).
func TestExpirationsAreCountedInEveryTier(t *testing.T) {
	res := simulate(t, "system.design=cpu", "workload.sessions=60", "accelerator.reserve_gb=40", twoTiers, "fpga.ttl=120s")
	s := res.Summary()
	var total int64
	for i := range res.Run.pool.Tiers() {
		total += res.Run.pool.Tier(i).Stats().Expirations
		assert.Equal(t, res.Run.pool.Tier(i).Stats().Expirations, s.Tiers[i].Expirations, "tier %s", s.Tiers[i].Name)
	}
	require.Positive(t, res.Run.pool.Tier(1).Stats().Expirations, "objects demoted to the SSD expire there")
	assert.Equal(t, total, s.Evictions["store_expired"], "every tier's expirations")
}
