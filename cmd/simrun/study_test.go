package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/scenario"
)

func TestStudyWritesTheReport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "study")
	code, stdout, stderr := simrun("-o", out, "--set", "workload.sessions=30", "--set", "study.seeds=2")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "report: "+filepath.Join(out, "report.html"))
	for _, f := range []string{"comparison.csv", "recompute/summary.json", "cpu/requests.csv", "fpga/scenario.yaml",
		"lmcache/summary.json", "cachedattention/requests.csv", breakEvenFile,
		"ttft_cdf.png", "ttft_cdf.svg", "ttft_breakdown.svg", "break_even_history.svg", "break_even_path.png", "latency_vs_load.png",
		"throughput_vs_load.svg", "hit_ratio_vs_capacity.svg", "storage_levels.png", "endurance.svg", "host_load.svg", "session_timeline.svg"} {
		assert.FileExists(t, filepath.Join(out, f))
	}
	page, err := os.ReadFile(filepath.Join(out, "report.html"))
	require.NoError(t, err)
	html := string(page)
	assert.Contains(t, html, "<th>design</th>")
	assert.Contains(t, html, `<img src="session_timeline.svg"`)
	assert.Contains(t, html, "system:\n    design: fpga", "the resolved scenario")
	assert.NotContains(t, html, "<script", "a static page")
	comparison := readCSVFile(t, filepath.Join(out, "comparison.csv"))
	assert.Len(t, comparison, 1+len(studyDesigns), "a header and every design")
	assert.Contains(t, html, `<figure id="break_even_crossovers"><table>`, "the crossovers, printed")
	assert.Contains(t, stdout, "break-even: the history from which")
	assert.Contains(t, html, `<figure id="break_even_card"><table>`, "the map seen from the card")
	assert.Contains(t, stdout, "break-even, the patent's card (fpga) against each design")
	assert.Regexp(t, `(Where the patent's card \(fpga\) wins|The patent's card \(fpga\) wins nowhere) by more than the seeds' spread`, stdout, "the verdict")
	assert.Contains(t, html, "the mean over 2 seeds with bars from their least to their greatest")
	assert.Regexp(t, `p50 of \d+(-\d+)? resumed turns`, stdout, "a p50 says how many turns it covers")
	assert.Regexp(t, `(between|at or below|not up to) [0-9.]+x`, stdout, "saturation bracketed by the loads measured")
	assertSpreadHoldsTheMean(t, comparison)
	assertPlotDataMatchesTheRuns(t, out, html)
	assertMorePlotDataMatchesTheRuns(t, out)
	assertSeedsRepeat(t, out, comparison)
}

// assertSpreadHoldsTheMean: comparison.csv has each figure's least and
// greatest over the seeds beside it, around its mean, and the seeds do
// move some of them.
func assertSpreadHoldsTheMean(t *testing.T, comparison [][]string) {
	require.Equal(t, reports.SpreadColumns(false), comparison[0])
	moved := 0
	for c, name := range comparison[0] {
		lo, hi := slices.Index(comparison[0], name+"_min"), slices.Index(comparison[0], name+"_max")
		if lo < 0 {
			continue
		}
		require.Equal(t, []int{c + 1, c + 2}, []int{lo, hi}, "%s: its least and greatest beside it", name)
		for _, r := range comparison[1:] {
			if r[c] == "" {
				assert.Equal(t, []string{"", ""}, r[lo:hi+1], "%s of %s: no mean, no spread", name, r[0])
				continue
			}
			mean, least, most := mustFloat(t, r[c]), mustFloat(t, r[lo]), mustFloat(t, r[hi])
			assert.True(t, least <= mean && mean <= most, "%s of %s: %v <= %v <= %v", name, r[0], least, mean, most)
			if least < most {
				moved++
			}
		}
	}
	assert.Positive(t, moved, "the seeds move some figure")
}

// assertSeedsRepeat: seed s of a design's headline run is its folder's
// scenario with the seed one more for each seed past the first; over the
// study's seeds they give comparison.csv's spread.
func assertSeedsRepeat(t *testing.T, out string, comparison [][]string) {
	row := comparison[slices.IndexFunc(comparison, func(r []string) bool { return r[0] == "fpga" })]
	var p50s []float64
	for _, seed := range []string{"1", "2"} {
		dir := filepath.Join(t.TempDir(), "seed"+seed)
		code, _, stderr := simrun("run", "-c", filepath.Join(out, "fpga", "scenario.yaml"), "--seed", seed, "-o", dir)
		require.Equal(t, 0, code, stderr)
		var sum reports.Summary
		js, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(js, &sum))
		p50s = append(p50s, sum.ResumedTTFTms.P50)
	}
	col := slices.Index(comparison[0], "resumed_ttft_ms_p50")
	assert.InDelta(t, slices.Min(p50s), mustFloat(t, row[col+1]), 1e-6)
	assert.InDelta(t, slices.Max(p50s), mustFloat(t, row[col+2]), 1e-6)
}

// assertPlotDataMatchesTheRuns: every plot on the study's page has its
// values beside it, linked, with a header and rows; and where the runs'
// own outputs hold the same figure, the file agrees with them: the TTFT
// distribution with every design's requests.csv, the load curves at the
// scenario's load (mean, least and greatest) with comparison.csv, the
// endurance and energy bars (the first seed's) and the host table with each
// design's summary.json.
func assertPlotDataMatchesTheRuns(t *testing.T, out, html string) {
	images := regexp.MustCompile(`<img src="([a-z_]+)\.svg"`).FindAllStringSubmatch(html, -1)
	require.NotEmpty(t, images)
	data := map[string][][]string{}
	for _, m := range images {
		assert.Contains(t, html, `href="`+m[1]+`.csv"`, "the page links %s's data", m[1])
		rows := readCSVFile(t, filepath.Join(out, m[1]+".csv"))
		require.Greater(t, len(rows), 1, "%s.csv: a header and rows", m[1])
		data[m[1]] = rows
	}
	comparison := readCSVFile(t, filepath.Join(out, "comparison.csv"))
	figure := func(design, column string) float64 {
		row := slices.IndexFunc(comparison, func(r []string) bool { return r[0] == design })
		return mustFloat(t, comparison[row][slices.Index(comparison[0], column)])
	}
	// values is a drawn value's cells: y, then its least and greatest where
	// the plot has them.
	values := func(file, panel, series, x string) []float64 {
		for _, r := range data[file][1:] {
			if panel != "" {
				if r[0] != panel {
					continue
				}
				r = r[1:]
			}
			if r[0] == series && r[1] == x {
				var out []float64
				for _, v := range r[2:] {
					out = append(out, mustFloat(t, v))
				}
				return out
			}
		}
		t.Fatalf("%s: no value of %s at %s in panel %q", file, series, x, panel)
		return nil
	}
	at := func(file, panel, series, x string) float64 { return values(file, panel, series, x)[0] }
	for _, design := range studyDesigns {
		for _, c := range []struct{ file, panel, column string }{
			{"throughput_vs_load", "", "sustained_output_tokens_per_s"},
			{"latency_vs_load", "resumed-turn TTFT p50 (ms)", "resumed_ttft_ms_p50"},
			{"latency_vs_load", "TTFT p99 (ms)", "ttft_ms_p99"},
			{"latency_vs_load", "TPOT p50 (ms)", "tpot_ms_p50"},
		} {
			want := []float64{figure(design, c.column), figure(design, c.column+"_min"), figure(design, c.column+"_max")}
			assert.InDeltaSlice(t, want, values(c.file, c.panel, design, "1"), 1e-6, "%s %s: mean, least and greatest", design, c.column)
		}

		requests := readCSVFile(t, filepath.Join(out, design, "requests.csv"))
		col := slices.Index(requests[0], "ttft_ms")
		var want, got []float64
		for _, r := range requests[1:] {
			if v := mustFloat(t, r[col]); v > 0 {
				want = append(want, v)
			}
		}
		for _, r := range data["ttft_cdf"][1:] {
			if r[0] == design {
				got = append(got, mustFloat(t, r[1]))
			}
		}
		slices.Sort(want)
		require.Len(t, got, len(want), "%s: every request's TTFT in the distribution", design)
		for i := range want {
			assert.InDelta(t, want[i], got[i], 1e-6)
		}
		var energy struct {
			Host struct {
				CPUCoreS float64 `json:"cpu_core_s"`
			} `json:"host"`
			Energy struct {
				PerToken float64 `json:"joules_per_output_token"`
			} `json:"energy"`
		}
		js, err := os.ReadFile(filepath.Join(out, design, "summary.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(js, &energy))
		stacked := 0.0
		for _, r := range data["energy"][1:] {
			if r[1] == design {
				stacked += mustFloat(t, r[2])
			}
		}
		assert.InDelta(t, energy.Energy.PerToken, stacked, 1e-9*energy.Energy.PerToken, "%s: the energy bars add up to its joules per output token", design)
		assert.Contains(t, html, fmt.Sprintf("<td>%s</td><td>%.3g</td>", design, energy.Host.CPUCoreS), "%s: its host core-seconds in the host table", design)
		if design == "recompute" {
			continue
		}
		assertHostLoadMatchesTheRuns(t, values, js, design, func(column string) []float64 {
			return []float64{figure(design, column), figure(design, column+"_min"), figure(design, column+"_max")}
		})
		var sum struct {
			Tiers []struct {
				DriveWritesPerDay float64 `json:"sustained_drive_writes_per_day"`
			} `json:"tiers"`
		}
		require.NoError(t, json.Unmarshal(js, &sum))
		dwpd := 0.0 // the most written tier of drives
		for _, tier := range sum.Tiers {
			dwpd = max(dwpd, tier.DriveWritesPerDay)
		}
		assert.InDelta(t, dwpd, at("endurance", "", "full exports", design), 1e-9, design) // the first seed's
		assert.True(t, figure(design, "sustained_drive_writes_per_day_min")-1e-6 <= dwpd && dwpd <= figure(design, "sustained_drive_writes_per_day_max")+1e-6, design)
	}
}

// assertHostLoadMatchesTheRuns: the busy-host axis at the scenario's host
// load (0) is the headline runs': its resumed-turn TTFT p50 comparison.csv's
// mean, least and greatest, its host figures per resumed turn around the
// first seed's summary.json; the top load has a spread of its own.
func assertHostLoadMatchesTheRuns(t *testing.T, values func(file, panel, series, x string) []float64, summary []byte, design string, spread func(column string) []float64) {
	assert.InDeltaSlice(t, spread("resumed_ttft_ms_p50"), values("host_load", "resumed-turn TTFT p50 (ms)", design, "0"), 1e-6, "%s: the axis at host load 0", design)
	var sum reports.Summary
	require.NoError(t, json.Unmarshal(summary, &sum))
	for panel, first := range map[string]float64{
		"host core-s per resumed turn":    hostCoreSPerResumedTurn(&sum),
		"host DRAM per resumed turn (GB)": hostDRAMGBPerResumedTurn(&sum),
	} {
		v := values("host_load", panel, design, "0")
		assert.True(t, v[1]-1e-12 <= first && first <= v[2]+1e-12, "%s %s: the first seed's %v within %v", design, panel, first, v)
	}
	top := values("host_load", "resumed-turn TTFT p50 (ms)", design, "0.9")
	assert.True(t, top[1] <= top[0] && top[0] <= top[2], "%s: mean within its least and greatest at the top host load: %v", design, top)
}

// Bad input fails the study before any run, with nothing written: a mode
// it does not compare, a seed count out of range, a design the scenario cannot take (named), a tier
// list.
func TestStudyRefusesBadInput(t *testing.T) {
	for _, c := range []struct {
		name, set string
		want      []string
	}{
		{"functional mode", "mode=functional", []string{"mode: functional: the default study compares the designs' timing"}},
		{"no seeds", "study.seeds=0", []string{"--set study.seeds=0: key study.seeds: 0 is out of range (allowed: 1 to 100)"}},
		{"a design the scenario cannot take", "store.async_buffer=1GiB", []string{"simrun: cachedattention: ", "key store.async_buffer"}},
		{"a tier list", "storage.tiers=[{name: ssd, device: kioxia-cm6, capacity: 2TB}]",
			[]string{"simrun: storage.tiers: the default study varies the store's size and its drives"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "study")
			code, _, stderr := simrun("-o", out, "--set", c.set)
			assert.Equal(t, 2, code)
			for _, w := range c.want {
				assert.Contains(t, stderr, w)
			}
			assert.NoDirExists(t, out, "nothing written")
		})
	}
}

// The study takes the default scenario as a file (its storage keys then
// come from the file: the break-even map leaves out the DRAM path, which
// would put storage.tiers beside them) and a model whose KV is 8 times
// Llama-3-70B's (the map keeps the histories its memory holds); on one
// seed, to stay fast.
func TestStudyTakesOtherScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("two whole studies (8 s; minutes under the race detector): run without -short")
	}
	for _, c := range []struct {
		name string
		args []string
		path string
	}{
		{"the default as a file", []string{"-c", "../../scenario/default.yaml", "--set", "workload.sessions=20", "--set", "study.seeds=1"}, "2 drives, Gen5 card"},
		{"an MHA model", []string{"--set", "model=llama-65b", "--set", "workload.sessions=20", "--set", "store.async_buffer=1TB", "--set", "study.seeds=1"}, "host DRAM"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "study")
			code, stdout, stderr := simrun(append([]string{"-o", out}, c.args...)...)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stdout, c.path)
		})
	}
}

func TestStudyRefusesAForeignFolder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "thesis.tex"), []byte("mine"), 0o644))
	code, _, stderr := simrun("-o", dir)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "exists and is not a kvcosim output: choose another or pass --force")
}

// assertMorePlotDataMatchesTheRuns holds the plots' files that
// assertPlotDataMatchesTheRuns leaves out to the runs' outputs (the first
// seed's): each stage of the TTFT breakdown to its column's mean in the
// design's requests.csv; the hit ratio at the scenario's store size to
// fpga's summary.json; and the store's levels at the end of fpga's run to
// what its summary.json says the store holds.
func assertMorePlotDataMatchesTheRuns(t *testing.T, out string) {
	columns := map[string]string{"query (hashing, table walk)": "query_ms", "import (moving the KV)": "import_ms",
		"queue": "queue_ms", "prefill": "prefill_ms"}
	breakdown := readCSVFile(t, filepath.Join(out, "ttft_breakdown.csv"))
	checked := 0
	for _, r := range breakdown[1:] {
		column, ok := columns[r[0]]
		if !ok {
			continue // the CPU's part: what the TTFT leaves
		}
		requests := readCSVFile(t, filepath.Join(out, r[1], "requests.csv"))
		col := slices.Index(requests[0], column)
		mean := 0.0
		for _, req := range requests[1:] {
			mean += mustFloat(t, req[col]) / float64(len(requests)-1)
		}
		assert.InDelta(t, mean, mustFloat(t, r[2]), 1e-5, "%s of %s", r[0], r[1])
		checked++
	}
	assert.Equal(t, len(columns)*len(studyDesigns), checked, "every stage of every design")

	var sum struct {
		HitRatio float64 `json:"hit_ratio_tokens"`
		Store    struct {
			FIFO1 int64 `json:"fifo1_regions"`
			FIFO2 int64 `json:"fifo2_regions"`
		} `json:"store"`
		Tiers []struct {
			Capacity int64 `json:"capacity_bytes"`
			Held     int64 `json:"held_bytes"`
		} `json:"tiers"`
	}
	js, err := os.ReadFile(filepath.Join(out, "fpga", "summary.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(js, &sum))
	capacity, held := int64(0), int64(0)
	for _, tier := range sum.Tiers {
		capacity, held = capacity+tier.Capacity, held+tier.Held
	}
	hits := readCSVFile(t, filepath.Join(out, "hit_ratio_vs_capacity.csv"))
	last := hits[len(hits)-1] // the sizes ascend to the scenario's
	assert.InDelta(t, float64(capacity)/1e9, mustFloat(t, last[1]), 0.01*float64(capacity)/1e9, "the last size is the scenario's")
	assert.InDelta(t, sum.HitRatio, mustFloat(t, last[2]), 1e-12, "at the scenario's size, fpga's own run")

	levels := map[string]float64{}
	for _, r := range readCSVFile(t, filepath.Join(out, "storage_levels.csv"))[1:] {
		levels[r[1]] = mustFloat(t, r[3]) // the last sample of each: the run's end
	}
	assert.InDelta(t, float64(held)/1e9, levels["stored"], 1e-9, "the bytes held at the end")
	assert.Equal(t, float64(sum.Store.FIFO1), levels["FIFO 1"])
	assert.Equal(t, float64(sum.Store.FIFO2), levels["FIFO 2"])
}

func TestHeaviestFirst(t *testing.T) {
	for _, c := range []struct {
		name    string
		weights []float64
		want    []int
	}{
		{"none weighed: in order", []float64{0, 0, 0}, []int{0, 1, 2}},
		{"heaviest first", []float64{1, 6, 0.5, 4}, []int{1, 3, 0, 2}},
		{"ties in order", []float64{1, 2, 1, 2, 0}, []int{1, 3, 0, 2, 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			points := make([]point, len(c.weights))
			for i, w := range c.weights {
				points[i].weight = w
			}
			assert.Equal(t, c.want, heaviestFirst(points))
		})
	}
}

// TestStudyPlanWeighsItsRuns checks that the study starts its heaviest
// runs first: the top load's, then the next load's, and the break-even
// map's short runs last.
func TestStudyPlanWeighsItsRuns(t *testing.T) {
	base, err := scenario.Load("", nil)
	require.NoError(t, err)
	plan, err := planStudy(base, nil, t.TempDir())
	require.NoError(t, err)
	order := heaviestFirst(plan.points)
	for _, i := range order[:len(studyDesigns)] {
		assert.Contains(t, plan.points[i].label, "at 6x the load")
	}
	last := plan.points[order[len(order)-1]].label
	assert.Contains(t, last, "break-even")
}

// TestStudyRunsTheScenariosStoreOnce checks that the capacity curve takes
// the fpga design's own run at the scenario's store size (2 TB by
// default) rather than running it again, and runs every size another
// store size leaves out.
func TestStudyRunsTheScenariosStoreOnce(t *testing.T) {
	for _, c := range []struct {
		capacity string
		own      int // the size the fpga design's run stands for; -1: none
	}{{"", len(studyCapacities) - 1}, {"64GB", 1}, {"1TB", -1}} {
		t.Run(c.capacity, func(t *testing.T) {
			var sets []string
			if c.capacity != "" {
				sets = []string{"storage.capacity=" + c.capacity}
			}
			base, err := scenario.Load("", sets)
			require.NoError(t, err)
			plan, err := planStudy(base, sets, t.TempDir())
			require.NoError(t, err)
			require.Len(t, plan.capacities, len(studyCapacities))
			for i, k := range plan.capacities {
				if i == c.own {
					assert.Equal(t, plan.designs[fpgaDesign][0], k, "%s: the fpga design's run", studyCapacities[i])
					continue
				}
				assert.Equal(t, "fpga with a "+studyCapacities[i]+" store", plan.points[k].label)
			}
		})
	}
}
