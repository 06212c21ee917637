package scenario

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cachedAttentionPaper are the published multi-turn figures of
// CachedAttention (Gao et al., USENIX ATC 2024, Figures 13 and 14): the
// TTFT reduction of CA against recomputing every turn, and CA's hit rate,
// per model. kvcosim's figures (docs/examples/cachedattention-paper.yaml)
// are held within paperBand of them, but LLaMA-65B's, above the band: its
// replay misses no lookup for want of room, where the paper's misses
// (docs/fidelity.md, "At the paper's scale").
var cachedAttentionPaper = []struct {
	model                  string
	ttftReduction, hitRate float64
	// aboveBand: kvcosim's TTFT reduction and hit rate lie above the band,
	// for the reason docs/fidelity.md gives; the check then holds them
	// there, so that a change that brings them back says so
	aboveBand bool
}{
	{"llama-2-13b", 0.85, 0.86, false},
	{"llama-65b", 0.61, 0.71, true},
	{"llama-2-70b", 0.87, 0.89, false},
	{"falcon-40b", 0.86, 0.90, false},
}

// paperBand is how far, in points, a figure may lie from the published one.
const paperBand = 0.10

// TestCachedAttentionPaperBand replays the paper's experiment for each
// model: recompute against cachedattention, the TTFT reduction as
// 1 - mean TTFT of CA / mean TTFT of RE and the hit rate as the share of
// prompt tokens CA reused, both over the turns after the scenario's
// warm-up (docs/fidelity.md).
func TestCachedAttentionPaperBand(t *testing.T) {
	if testing.Short() {
		t.Skip("replays eight runs of 5,000 turns")
	}
	sw, err := LoadSweep("../docs/examples/cachedattention-paper.yaml")
	require.NoError(t, err)
	for _, c := range cachedAttentionPaper {
		t.Run(c.model, func(t *testing.T) {
			mean := map[string]float64{}
			var hit float64
			for _, p := range sw.Points() {
				if !slices.Contains(p.Values, c.model) {
					continue
				}
				s := simulate(t, p.Sets...).Summary()
				require.NotNil(t, s.AfterWarmup, "the scenario warms the store up as the paper does")
				mean[s.Design] = s.AfterWarmup.TTFTms.Mean
				if s.Design == "cachedattention" {
					hit = s.AfterWarmup.HitRatioTokens
				}
			}
			require.Len(t, mean, 2)
			reduction := 1 - mean["cachedattention"]/mean["recompute"]
			t.Logf("%s: TTFT reduction %.1f %% (paper %.0f %%), hit rate %.1f %% (paper %.0f %%)",
				c.model, 100*reduction, 100*c.ttftReduction, 100*hit, 100*c.hitRate)
			if c.aboveBand {
				assert.Greater(t, reduction, c.ttftReduction+paperBand, "TTFT reduction above the band (docs/fidelity.md)")
				assert.Greater(t, hit, c.hitRate+paperBand, "hit rate above the band (docs/fidelity.md)")
				return
			}
			assert.LessOrEqual(t, math.Abs(reduction-c.ttftReduction), paperBand, "TTFT reduction")
			assert.LessOrEqual(t, math.Abs(hit-c.hitRate), paperBand, "hit rate")
		})
	}
}
