package main

import (
	"path/filepath"
	"slices"

	"github.com/kvcosim/kvcosim/reports"
)

// The Mooncake paper's prefill savings (FAST'25 §5.2.3, Figure 8, p.10):
// with its global cache Mooncake takes 36 % (conversation), 53 %
// (tool&agent, a trace not bundled) and 64 % (synthetic) off the average
// prefill GPU time of a request against vLLM v0.5.1 without prefix caching.
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
var mooncakeGlobalCache = []string{"system.design=cpu", "fpga.hashing=block",
	"storage.tiers=[{name: dram, device: ddr5-4800, capacity: unlimited}]"}

// mooncakePrefillTrace is a bundled trace and its published saving.
type mooncakePrefillTrace struct {
	name, path string
	saving     float64
}

var mooncakePrefillTraces = []mooncakePrefillTrace{
	{"conversation", mooncakeConversation, 0.36},
	{"synthetic", mooncakeSynthetic, 0.64},
}

// mooncakePrefillCheck replays each trace on the testbed twice, as vLLM
// (recompute) and as Mooncake (mooncakeGlobalCache), on one seed: the
// traces draw nothing at random, and every seed gives the same prefill
// times (docs/fidelity.md).
func mooncakePrefillCheck() fidelityCheck {
	runs := func(env fidelityEnv) ([]fidelityRun, error) {
		var runs []fidelityRun
		for _, t := range mooncakePrefillTraces {
			common := append(slices.Clone(mooncakeTestbed), "workload.path="+filepath.Join(env.root, t.path))
			runs = append(runs,
				fidelityRun{label: t.name + " vllm", sets: append(slices.Clone(common), "system.design=recompute")},
				fidelityRun{label: t.name + " mooncake", sets: slices.Concat(common, mooncakeGlobalCache)})
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
	return c
}

// prefillSaving is 1 - the mean prefill time of the requests that ran
// with reuse over that of those that ran without.
func prefillSaving(without, with []reports.RequestRow) float64 {
	return 1 - meanPrefillMs(with)/meanPrefillMs(without)
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
