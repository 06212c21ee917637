package scenario

import (
	"github.com/kvcosim/kvcosim/hostcpu/mech"
	"github.com/kvcosim/kvcosim/hostcpu/store"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/accel"
	"github.com/kvcosim/kvcosim/fpga"
	"github.com/kvcosim/kvcosim/hostcpu"
	"github.com/kvcosim/kvcosim/kvstore"
)

// TestDocsListEveryEnumFromItsTable holds docs/scenario.md to the tables
// the code parses with: each enum key's row lists exactly the table's
// names, in its order, so that adding a design or a policy to its table
// fails here until the page says so too.
func TestDocsListEveryEnumFromItsTable(t *testing.T) {
	page, err := os.ReadFile("../docs/scenario.md")
	require.NoError(t, err)
	enums := map[string][]string{
		"system.design":       store.DesignNames(),
		"system.export":       hostcpu.ExportPolicies.Names(),
		"fpga.hashing":        kvstore.Schemes.Names(),
		"fpga.alloc_policy":   kvstore.AllocPolicies.Names(),
		"fpga.placement":      fpga.Placements.Names(),
		"fpga.layout":         kvstore.Layouts.Names(),
		"fpga.export_mode":    kvstore.ExportModes.Names(),
		"functional.decoding": accel.DecodeKinds.Names(),
		"accelerator.engine":  accel.EngineNames(),
		"store.load":          mech.LoadModes.Names(),
		"store.save":          mech.SaveModes.Names(),
		"store.async_full":    mech.FullPolicies.Names(),
		"store.prefetch":      mech.PrefetchPolicies.Names(),
		"store.preload":       mech.PreloadPolicies.Names(),
		"store.eviction":      mech.EvictionPolicies.Names(),
	}
	for key, names := range enums {
		row := docRow(string(page), key)
		require.NotEmpty(t, row, "docs/scenario.md has no row for %s", key)
		want := "`" + strings.Join(names, "`, `") + "`"
		assert.Equal(t, want, strings.TrimSpace(strings.Split(row, "|")[2]), key)
	}
}

// docRow is the table row of docs/scenario.md for key.
func docRow(page, key string) string {
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "| `"+key+"` |") {
			return line
		}
	}
	return ""
}
