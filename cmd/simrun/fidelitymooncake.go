package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kvcosim/kvcosim/reports"
	"github.com/kvcosim/kvcosim/scenario"
	"github.com/kvcosim/kvcosim/workloads"
)

// The Mooncake paper's prefill savings (FAST'25 §5.2.3, Figure 8, p.10):
// with its global cache Mooncake takes 36 % (conversation), 53 %
// (tool&agent, a trace not bundled) and 64 % (synthetic) off the average
// prefill GPU time of a request against vLLM v0.5.1 without prefix caching;
// vLLM with its prefix caching (a cache in each instance's HBM) takes 1.43x
// (conversation), 1.40x (tool&agent) and 2.59x (synthetic) Mooncake's time.
const mooncakePrefillSource = "Mooncake FAST'25 §5.2.3, Fig. 8 p.10"

// mooncakeTestbed is the paper's setup as kvcosim has it (§5.1 p.8 and
// §5 p.8; docs/fidelity.md): a dummy model of LLaMA3-70B's architecture on
// a node of 8 A800-SXM4-80GB (one instance a node: tensor parallel over
// the eight), its KV in all the memory the weights leave; a window past the
// traces' longest request (191,386 tokens), so that none is cut; prompts
// prefilled whole, as vLLM v0.5.1 does without its chunked-prefill flag
// (the paper measures that flag apart); no KV kept on the GPU between
// requests (the baseline has no prefix caching, and Mooncake's reuse is its
// store's); one request at a time, so that a request's prefill_ms is the
// GPU time of its own prefill iteration, never shared with another's.
var mooncakeTestbed = []string{"model=llama-3-70b", "accelerator.device=a800", "accelerator.tp=8", "accelerator.kv_capacity=auto",
	"accelerator.max_model_len=262144", "accelerator.chunked_prefill=off", "accelerator.token_budget=262144",
	"accelerator.retain=off", "workload.kind=mooncake", "workload.max_concurrency=1"}

// mooncakeGlobalCache is Mooncake Store as kvcosim has it: a store run by
// the host's CPU (the cpu design) keying the traces' prefix-chained
// 512-token blocks, in one host-DRAM tier with room for everything, so
// that no lookup misses for want of it (Figure 9's plateau, p.11). Its
// loads are whole, before the request queues, so they are no part of the
// prefill time measured.
var mooncakeGlobalCache = blockCache("unlimited")

// blockCache is a store keying the traces' 512-token blocks in one tier
// of capacity, least recently used out first.
func blockCache(capacity string) []string {
	return []string{"system.design=cpu", "fpga.hashing=block",
		"storage.tiers=[{name: dram, device: ddr5-4800, capacity: " + capacity + "}]"}
}

// vllmInstances is how many instances of each vLLM configuration Figure 8
// measured: 16 nodes a system (§5.2.2 p.9), one instance a node (§5.1
// p.8), each with its own prefix cache.
const vllmInstances = 16

// vllmPrefixCache is one vLLM instance's prefix caching as kvcosim has
// it: the same block keys, least recently used out first, in as many bytes
// as the instance's HBM leaves for KV (accelerator.kv_capacity: auto, the
// testbed's). Its hits skip their prefill as the HBM cache's do; the
// store's loads are outside prefill_ms, as an HBM hit moves nothing.
func vllmPrefixCache(trace string) ([]string, error) {
	l, err := scenario.Load("", append(slices.Clone(mooncakeTestbed), "workload.path="+trace))
	if err != nil {
		return nil, err
	}
	perToken, tokens := l.KVRoom()
	return blockCache(fmt.Sprintf("%dB", perToken*tokens)), nil
}

// mooncakePrefillTrace is a bundled trace, its published saving and vLLM
// with prefix caching's prefill time over Mooncake's.
type mooncakePrefillTrace struct {
	name, path            string
	saving, prefixCaching float64
}

var mooncakePrefillTraces = []mooncakePrefillTrace{
	{"conversation", mooncakeConversation, 0.36, 1.43},
	{"synthetic", mooncakeSynthetic, 0.64, 2.59},
}

// mooncakePrefillCheck replays each trace on the testbed as vLLM
// (recompute), as Mooncake (mooncakeGlobalCache) and as vLLM with prefix
// caching (vllmPrefixCache) on vllmInstances instances, one run each, the
// trace dealt to them in turn; on one seed: the traces draw nothing at
// random, and every seed gives the same prefill times (docs/fidelity.md).
func mooncakePrefillCheck() fidelityCheck {
	runs := func(env fidelityEnv) ([]fidelityRun, error) {
		var runs []fidelityRun
		for _, t := range mooncakePrefillTraces {
			path := filepath.Join(env.root, t.path)
			common := append(slices.Clone(mooncakeTestbed), "workload.path="+path)
			runs = append(runs,
				fidelityRun{label: t.name + " vllm", sets: append(slices.Clone(common), "system.design=recompute")},
				fidelityRun{label: t.name + " mooncake", sets: slices.Concat(common, mooncakeGlobalCache)})
			hbm, err := vllmPrefixCache(path)
			if err != nil {
				return nil, err
			}
			parts, err := dealTrace(path, filepath.Join(env.tmp, t.name), vllmInstances)
			if err != nil {
				return nil, err
			}
			for i, part := range parts {
				runs = append(runs, fidelityRun{label: prefixCachingLabel(t.name, i),
					sets: slices.Concat(mooncakeTestbed, []string{"workload.path=" + part}, hbm)})
			}
		}
		return runs, nil
	}
	c := fidelityCheck{name: "mooncake prefill", runs: runs, maxSeeds: 1}
	for _, t := range mooncakePrefillTraces {
		c.figures = append(c.figures, fidelityFigure{Figure: t.name + " prefill GPU time saved", Published: t.saving, Unit: "share",
			Source: mooncakePrefillSource, Status: primary, Band: pointsBand10, value: func(in fidelityInputs, seed int) float64 {
				r := in.requests[seed]
				return prefillSaving(r[t.name+" vllm"], r[t.name+" mooncake"])
			}})
	}
	for _, t := range mooncakePrefillTraces {
		c.figures = append(c.figures, fidelityFigure{Figure: t.name + " vLLM prefix caching / Mooncake prefill time", Published: t.prefixCaching,
			Unit: "x", Source: mooncakePrefillSource, Status: primary, Band: relativeBand15, value: func(in fidelityInputs, seed int) float64 {
				r := in.requests[seed]
				var instances []reports.RequestRow
				for i := range vllmInstances {
					instances = append(instances, r[prefixCachingLabel(t.name, i)]...)
				}
				return prefillTimeRatio(instances, r[t.name+" mooncake"])
			}})
	}
	return c
}

// prefixCachingLabel names the run of a trace's i-th vLLM instance with
// prefix caching.
func prefixCachingLabel(trace string, i int) string {
	return fmt.Sprintf("%s vllm prefix caching %d/%d", trace, i+1, vllmInstances)
}

// dealTrace deals a trace's requests (its non-blank lines) to n files
// named prefix-1.jsonl ... prefix-n.jsonl in turn, in trace order, as a
// front end that knows nothing of caches spreads them over n instances,
// and returns the files' paths.
func dealTrace(path, prefix string, n int) ([]string, error) {
	parts := make([][]byte, n)
	dealt := 0
	err := workloads.EachTraceLine(path, func(text string, _ int) error {
		parts[dealt%n] = append(append(parts[dealt%n], strings.TrimRight(text, "\r")...), '\n')
		dealt++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if dealt < n {
		return nil, fmt.Errorf("%s: %d requests, fewer than the %d instances to deal them to", path, dealt, n)
	}
	paths := make([]string, n)
	for i, part := range parts {
		paths[i] = fmt.Sprintf("%s-%d.jsonl", prefix, i+1)
		if err := os.WriteFile(paths[i], part, 0o644); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

// prefillSaving is 1 - the mean prefill time of the requests that ran
// with reuse over that of those that ran without.
func prefillSaving(without, with []reports.RequestRow) float64 {
	return 1 - prefillTimeRatio(with, without)
}

// prefillTimeRatio is the mean prefill time of the requests that ran in
// slower over that of those that ran in faster.
func prefillTimeRatio(slower, faster []reports.RequestRow) float64 {
	return meanPrefillMs(slower) / meanPrefillMs(faster)
}

// meanPrefillMs is the mean prefill time of the requests that ran (NaN
// where none did: no figure).
func meanPrefillMs(rows []reports.RequestRow) float64 {
	sum, n := 0.0, 0
	for _, r := range rows {
		if !r.Rejected {
			sum += r.PrefillMs
			n++
		}
	}
	return sum / float64(n)
}
