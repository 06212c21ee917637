#!/usr/bin/env python3
"""gpuprofile: measure this machine's GPU the way kvcosim's measured profiles hold it.

With random bf16 weights in a model's shape (no checkpoint is downloaded) it times batch-1
prefills, prefill chunks on a cached context, decode steps replayed from a CUDA graph,
pinned host<->device copies, the per-layer KV export of a prefilled session, top-k/top-p
sampling and a chunk resumed on a KV cache imported layer by layer beside its compute, then writes one JSON file that `go run ./cmd/simrun calibrate --measured FILE`
reads (docs/accel.md, "Measured profiles"). README.md beside this file says how to run it.
"""
import argparse
import datetime
import gc
import inspect
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field, replace

GROUPS = ("prefill", "chunk", "decode", "pcie", "export", "sampling", "layerwise")
# The top-level keys kvcosim's reader (accel/measured.go) accepts; "dry_run" (which it
# refuses: dummy times), "layers" (a slice) and "shapes" (models that are no preset) are
# written only when they apply.
READER_KEYS = {"gpu", "torch", "sms", "how", "pcie", "hbm_d2d_copy_1GiB_s",
               "prefill", "chunk", "decode", "sampling", "layerwise"}
EXTRA_KEYS = {"dry_run", "layers", "shapes"}
MiB, GiB = 1 << 20, 1 << 30


@dataclass
class Shape:
    """A dense decoder's shape, as its config.json gives it."""
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    intermediate: int
    vocab: int
    arch: str = "llama"          # the Hugging Face model_type that builds it
    head_dim: int = 0            # 0: hidden // heads
    full_layers: int = 0         # the whole model's layers when only a slice is measured
    hf: dict = field(default_factory=dict, repr=False)  # a config.json's own fields
    own: bool = False            # no kvcosim preset has this shape

    def __post_init__(self):
        self.head_dim = self.head_dim or self.hidden // self.heads
        self.full_layers = self.full_layers or self.layers

    def kv_bytes(self, tokens, batch=1):
        """The bf16 K and V of every measured layer for batch sequences of tokens."""
        return self.layers * 2 * batch * tokens * self.kv_heads * self.head_dim * 2


# The dense presets of accel/model.go (layers, hidden, heads, kv heads, intermediate, vocab).
# deepseek-v3 (MLA, mixture of experts) is not one this tool can build.
PRESETS = {
    "llama-2-7b": Shape(32, 4096, 32, 32, 11008, 32000),
    "llama-2-70b": Shape(80, 8192, 64, 8, 28672, 32000),
    "llama-3-8b": Shape(32, 4096, 32, 8, 14336, 128256),
    "llama-3-70b": Shape(80, 8192, 64, 8, 28672, 128256),
    "qwen2.5-7b": Shape(28, 3584, 28, 4, 18944, 152064, arch="qwen2"),
    "qwen2.5-72b": Shape(80, 8192, 64, 8, 29568, 152064, arch="qwen2"),
}
# A dry run on a CPU measures this shape under each requested model's name.
TINY_SHAPE = Shape(2, 128, 4, 2, 256, 2048)


@dataclass
class Plan:
    """The rows to measure: the shapes of the project's H100 profile, or a tiny set."""
    prefill_tokens: list
    chunk_cached: list
    chunk_new: list
    decode: list                 # (batch, context)
    pcie_bytes: list
    sampling_batches: list
    layerwise: list              # (cached, new)
    hbm_copy: bool = True


FULL_PLAN = Plan(
    prefill_tokens=[128, 512, 1024, 2048, 4096, 8192, 16384],
    chunk_cached=[2048, 8192, 16384], chunk_new=[128, 512, 2048],
    decode=[(1, 512), (1, 2048), (1, 8192), (8, 2048), (16, 2048), (32, 1024), (32, 2048),
            (64, 512), (64, 1024), (64, 2048), (128, 512)],
    pcie_bytes=[4096, 64 * 1024, MiB, 16 * MiB, 256 * MiB, GiB],
    sampling_batches=[1, 16, 64, 128],
    layerwise=[(c, n) for c in (2048, 8192, 16384) for n in (128, 512, 2048)])
# Small enough for a CPU, yet every group keeps a row the reader prices (prefills from
# 1,024 tokens, chunks from 2,048 new tokens, copies from 16 MiB, sampling from batch 16).
TINY_PLAN = Plan(prefill_tokens=[128, 1024], chunk_cached=[2048], chunk_new=[128, 2048],
                 decode=[(1, 512), (16, 1024)], pcie_bytes=[MiB, 16 * MiB],
                 sampling_batches=[1, 16], layerwise=[(1024, 128)], hbm_copy=False)
DUMMY_S = 1e-3  # every time of a dry run without torch
# A layerwise row's times: the import alone, the chunk alone, the import then the chunk, and the
# two overlapped layer by layer (store.load: layerwise).
LAYERWISE_TIMES = ("import_h2d_s", "compute_s", "whole_s", "layerwise_s")


# ---------------------------------------------------------------- command line

def main(argv=None):
    args = parse_args(argv)
    models = resolve_models(args)
    torch = load_torch(args.dry_run)
    if torch is None:
        doc = dummy_profile(models, set(args.groups), FULL_PLAN)
        save(args.out, doc)
    else:
        doc = Session(torch, args, models).run()
    print(f"wrote {args.out}: {row_count(doc)} rows", file=sys.stderr)
    if args.dry_run:
        print("a dry run is no measurement: its file is marked \"dry_run\": true", file=sys.stderr)
    else:
        print(f"compare with: go run ./cmd/simrun calibrate --measured {args.out}", file=sys.stderr)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append", default=[], metavar="PRESET",
                   help="a model preset, repeatable: " + ", ".join(PRESETS))
    p.add_argument("--config", action="append", default=[], metavar="PATH",
                   help="a Hugging Face config.json (or its folder), repeatable")
    p.add_argument("--groups", default=",".join(GROUPS), type=groups_arg,
                   help="comma-separated groups to measure (default: all)")
    p.add_argument("--layers", type=int, default=0, metavar="N",
                   help="measure only the first N layers of each model (a slice of a big model)")
    p.add_argument("--reps", type=int, default=10, metavar="N",
                   help="timed repetitions per row, median kept (big rows use half; default 10)")
    p.add_argument("--eager", action="store_true",
                   help="also time each decode step without its CUDA graph (eager_step_s)")
    p.add_argument("--out", default="gpuprofile.json", metavar="FILE")
    p.add_argument("--dry-run", action="store_true",
                   help="no GPU: a tiny shape on the CPU with torch, else dummy times; not a measurement")
    args = p.parse_args(argv)
    if not args.model and not args.config:
        args.model = ["llama-3-8b"]
    if args.reps < 3 or args.layers < 0:
        p.error("--reps must be at least 3 and --layers not negative")
    return args


def groups_arg(text):
    groups = [g.strip() for g in text.split(",") if g.strip()]
    unknown = [g for g in groups if g not in GROUPS]
    if unknown or not groups:
        raise argparse.ArgumentTypeError(f"unknown group(s) {unknown}: known are {', '.join(GROUPS)}")
    return groups


def resolve_models(args):
    """The models to measure, by the name the profile will carry."""
    models = {}
    for name in args.model:
        if name not in PRESETS:
            sys.exit(f"--model {name}: not a preset (presets: {', '.join(PRESETS)}); use --config")
        models[name] = replace(PRESETS[name], hf={})
    for path in args.config:
        name, shape = shape_from_config(path)
        models[name] = shape
    if args.layers:
        models = {n: replace(s, layers=min(args.layers, s.layers)) for n, s in models.items()}
    return models


def shape_from_config(path):
    """A config.json's shape, named after the preset of the same shape if there is one."""
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    with open(path) as f:
        cfg = json.load(f)
    cfg = cfg.get("text_config", cfg)  # multimodal configs nest the decoder
    if any(k in cfg for k in ("kv_lora_rank", "num_local_experts", "n_routed_experts", "num_experts")):
        sys.exit(f"{path}: a mixture of experts or MLA model; only dense GQA models are measured")
    heads = cfg["num_attention_heads"]
    shape = Shape(cfg["num_hidden_layers"], cfg["hidden_size"], heads, cfg.get("num_key_value_heads", heads),
                  cfg["intermediate_size"], cfg["vocab_size"], arch=cfg.get("model_type", "llama"),
                  head_dim=cfg.get("head_dim") or 0, hf=cfg)
    for name, preset in PRESETS.items():
        if same_shape(shape, preset):
            return name, shape
    name = os.path.basename(os.path.dirname(os.path.abspath(path))) or "custom"
    shape.own = True  # no preset's shape: the profile carries it under "shapes"
    return name, shape


def same_shape(a, b):
    keys = ("layers", "hidden", "heads", "kv_heads", "intermediate", "vocab", "head_dim")
    return all(getattr(a, k) == getattr(b, k) for k in keys)


def load_torch(dry_run):
    """torch, or None for a dry run on a machine without a usable torch (>= 2.5)."""
    try:
        import torch
        usable = tuple(int(x) for x in torch.__version__.split(".")[:2]) >= (2, 5)
    except ImportError:
        torch, usable = None, False
    if dry_run:
        if not usable:
            print("dry run: no torch >= 2.5 here, every time is a dummy", file=sys.stderr)
        return torch if usable else None
    if not usable:
        sys.exit("gpuprofile needs torch >= 2.5 with CUDA (or --dry-run)")
    if not torch.cuda.is_available():
        sys.exit("no CUDA device visible to torch (use --dry-run to test the tool without one)")
    return torch


# ---------------------------------------------------------------- the profile file

def prefill_row(tokens, layers, prefill_s=None, kv_bytes=None, export_d2h_s=None, import_h2d_s=None):
    return numeric(tokens=tokens, layers=layers, prefill_s=prefill_s, kv_bytes=kv_bytes,
                   export_d2h_s=export_d2h_s, import_h2d_s=import_h2d_s)


def chunk_row(cached, new, layers, prefill_s=None, hf_eager_decode_s=None):
    return numeric(cached=cached, new=new, layers=layers, prefill_s=prefill_s,
                   hf_eager_decode_s=hf_eager_decode_s)


def decode_row(batch, context, layers, step_s, kv_bytes, eager_step_s=None):
    return numeric(batch=batch, context=context, layers=layers, step_s=step_s, kv_bytes=kv_bytes,
                   eager_step_s=eager_step_s)


def pcie_row(nbytes, h2d_pinned_s, d2h_pinned_s, h2d_pageable_s=None, d2h_pageable_s=None):
    return numeric(bytes=nbytes, h2d_pinned_s=h2d_pinned_s, d2h_pinned_s=d2h_pinned_s,
                   h2d_pageable_s=h2d_pageable_s, d2h_pageable_s=d2h_pageable_s)


def sampling_row(batch, vocab, times):
    """times: {path: {"eager": s, "graph": s}} gives keys such as sort_topk_topp_s_graph."""
    return numeric(batch=batch, vocab=vocab,
                   **{f"{path}_s_{mode}": t for path, ts in times.items() for mode, t in ts.items()})


def layerwise_row(cached, new, layers, kv_bytes, times):
    """times: some of LAYERWISE_TIMES (a variant that failed is left out)."""
    return numeric(cached=cached, new=new, layers=layers, kv_bytes=kv_bytes, **times)


def numeric(**fields):
    """A row: the reader takes only numbers, so a time not measured is left out."""
    return {k: v for k, v in fields.items() if v is not None}


def new_document(gpu, torch_version=None, sms=None, dry_run=False):
    doc = {"gpu": gpu, "how": ""}
    if torch_version:
        doc["torch"] = torch_version
    if sms:
        doc["sms"] = sms
    if dry_run:
        doc["dry_run"] = True
    return doc


def finish(doc, models, how):
    """Adds the description, the shapes of models that are no preset and, for a layer
    slice, each sliced model's measured layers."""
    shapes = {n: {"layers": s.full_layers, "hidden": s.hidden, "heads": s.heads, "kv_heads": s.kv_heads,
                  "head_dim": s.head_dim, "intermediate": s.intermediate, "vocab": s.vocab}
              for n, s in models.items() if s.own}
    if shapes:
        doc["shapes"] = shapes
    sliced = {n: s.layers for n, s in models.items() if s.layers < s.full_layers}
    notes = [f"{n}: the first {s.layers} of {s.full_layers} layers (plus embedding and LM head)"
             for n, s in models.items() if s.layers < s.full_layers]
    if sliced:
        doc["layers"] = sliced
    doc["how"] = " ".join(how + notes)
    return doc


def check(doc):
    """The reader's rules, checked before writing: known keys, numeric rows, positive times."""
    for key in doc:
        assert key in READER_KEYS | EXTRA_KEYS, f"key {key!r} is not one the profile has"
    rows = [(f"{g}[{i}]", r) for g in ("pcie", "sampling") for i, r in enumerate(doc.get(g, []))]
    rows += [(f"{g}.{m}[{i}]", r) for g in ("prefill", "chunk", "decode", "layerwise")
             for m, rs in doc.get(g, {}).items() for i, r in enumerate(rs)]
    for where, row in rows:
        for k, v in row.items():
            assert isinstance(v, (int, float)) and not isinstance(v, bool), f"{where}.{k} = {v!r}: not a number"
            assert not is_time(k) or (v > 0 and math.isfinite(v)), f"{where}.{k} = {v}: not a positive time"


def is_time(key):
    return key.endswith("_s") or "_s_" in key  # prefill_s, sort_topk_topp_s_graph


def save(path, doc):
    check(doc)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def row_count(doc):
    return sum(len(v) if isinstance(v, list) else sum(len(r) for r in v.values())
               for k, v in doc.items() if k in ("pcie", "sampling", "prefill", "chunk", "decode", "layerwise"))


def dummy_profile(models, groups, plan):
    """The file a measurement writes, with every time DUMMY_S: tests the writer and the reader."""
    doc, t = new_document("dry run, no GPU (not a measurement)", dry_run=True), DUMMY_S
    for name, s in models.items():
        if groups & {"prefill", "export"}:
            doc.setdefault("prefill", {})[name] = [prefill_row(
                n, s.layers, t if "prefill" in groups else None, s.kv_bytes(n),
                *((t, t) if "export" in groups else (None, None))) for n in plan.prefill_tokens]
        if "chunk" in groups:
            doc.setdefault("chunk", {})[name] = [chunk_row(c, n, s.layers, t)
                                                 for c in plan.chunk_cached for n in plan.chunk_new]
        if "decode" in groups:
            doc.setdefault("decode", {})[name] = [decode_row(b, c, s.layers, t, s.kv_bytes(c, b))
                                                  for b, c in plan.decode]
        if "layerwise" in groups:
            doc.setdefault("layerwise", {})[name] = [
                layerwise_row(c, n, s.layers, s.kv_bytes(c), dict.fromkeys(LAYERWISE_TIMES, t))
                for c, n in plan.layerwise]
    if "pcie" in groups:
        doc["pcie"] = [pcie_row(n, t, t) for n in plan.pcie_bytes]
        doc["hbm_d2d_copy_1GiB_s"] = t
    if "sampling" in groups:
        doc["sampling"] = [sampling_row(b, v, {"sort_topk_topp": {"graph": t}})
                           for v in sorted({s.vocab for s in models.values()}) for b in plan.sampling_batches]
    return finish(doc, models, ["DRY RUN: no torch, every time is a dummy 1 ms; not a measurement."])


# ---------------------------------------------------------------- measuring

class Session:
    """One measurement: the device, the clock, the file written after every group."""

    def __init__(self, torch, args, models):
        self.torch, self.args, self.groups = torch, args, set(args.groups)
        torch.set_grad_enabled(False)
        self.cuda = not args.dry_run
        self.dev = "cuda" if self.cuda else "cpu"
        self.plan = FULL_PLAN if self.cuda else TINY_PLAN
        self.models = models if self.cuda else {n: replace(TINY_SHAPE) for n in models}
        self.notes = []
        self.layerwise_checked = 0  # chunks whose layer-wise logits matched the whole import's
        self.doc = self.open_document()
        self.need_transformers()

    def need_transformers(self):
        """Prefills, exports and chunks run Hugging Face's model: without transformers a
        measurement stops here, a dry run leaves them out."""
        hf_groups = self.groups & {"prefill", "export", "chunk", "layerwise"}
        if not hf_groups or version_of("transformers") != "absent":
            return
        if self.cuda:
            sys.exit(f"groups {', '.join(sorted(hf_groups))} need transformers (pip install transformers)")
        self.groups -= hf_groups
        self.skip(", ".join(sorted(hf_groups)), "transformers is not installed")

    def open_document(self):
        t = self.torch
        if not self.cuda:
            return new_document("dry run on the CPU (not a measurement)", t.__version__, dry_run=True)
        props = t.cuda.get_device_properties(0)
        return new_document(t.cuda.get_device_name(), t.__version__, props.multi_processor_count)

    def run(self):
        started = time.time()
        steps = [({"pcie"}, self.measure_pcie), ({"sampling"}, self.measure_sampling)]
        for name, shape in self.models.items():
            steps += [({"prefill", "export", "chunk"}, lambda n=name, s=shape: self.measure_hf(n, s)),
                      ({"decode"}, lambda n=name, s=shape: self.measure_decode(n, s)),
                      ({"layerwise"}, lambda n=name, s=shape: self.measure_layerwise(n, s))]
        for groups, step in steps:
            if groups & self.groups:
                self.log(f"{'/'.join(sorted(groups & self.groups))} ...")
                step()
                self.free()
                save(self.args.out, finish(self.doc, self.models, self.description(started)))
        return self.doc

    # -- timing

    def median(self, fn, reps=None, warm=2):
        """The median seconds of fn over reps runs after warm runs (CUDA events on a GPU)."""
        reps = reps or self.args.reps
        for _ in range(warm):
            fn()
        self.sync()
        times = [self.once(fn) for _ in range(reps)]
        return sorted(times)[len(times) // 2]

    def once(self, fn):
        if not self.cuda:
            start = time.perf_counter()
            fn()
            return time.perf_counter() - start
        a, b = (self.torch.cuda.Event(enable_timing=True) for _ in range(2))
        a.record()
        fn()
        b.record()
        b.synchronize()
        return a.elapsed_time(b) / 1e3

    def few(self):
        """Repetitions for a row that takes long (a big prefill, a 1 GiB copy)."""
        return max(3, self.args.reps // 2)

    def graphed(self, fn):
        """fn captured in one CUDA graph (after two runs on a side stream), as its replay."""
        t = self.torch
        if not self.cuda:
            return fn
        side = t.cuda.Stream()
        side.wait_stream(t.cuda.current_stream())
        with t.cuda.stream(side):
            fn()
            fn()
        t.cuda.current_stream().wait_stream(side)
        graph = t.cuda.CUDAGraph()
        with t.cuda.graph(graph):
            fn()
        return graph.replay

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def free(self):
        gc.collect()
        if self.cuda:
            self.torch.cuda.empty_cache()

    def fits(self, nbytes):
        """Whether nbytes more (a KV cache) leave room on the device."""
        if not self.cuda:
            return nbytes < GiB
        free, _ = self.torch.cuda.mem_get_info()
        return nbytes < 0.8 * free

    def skip(self, what, why):
        self.notes.append(f"{what} skipped: {why}.")
        self.log(f"  {what} skipped: {why}")

    def log(self, text):
        print(f"[gpuprofile] {text}", file=sys.stderr, flush=True)

    def host(self, like):
        """A host buffer like a device tensor: pinned when there is a GPU."""
        return self.torch.empty(like.shape, dtype=like.dtype, pin_memory=self.cuda)

    # -- host <-> device copies

    def measure_pcie(self):
        t, rows = self.torch, []
        for n in self.plan.pcie_bytes:
            dev = t.empty(n, dtype=t.uint8, device=self.dev)
            pinned = self.host(dev)
            reps = self.args.reps if n < 256 * MiB else self.few()
            row = pcie_row(n, self.median(lambda: dev.copy_(pinned, non_blocking=True), reps),
                           self.median(lambda: pinned.copy_(dev, non_blocking=True), reps))
            if n >= 16 * MiB:
                pageable = t.empty(n, dtype=t.uint8)
                row.update(h2d_pageable_s=self.median(lambda: dev.copy_(pageable), 3, 1),
                           d2h_pageable_s=self.median(lambda: pageable.copy_(dev), 3, 1))
            rows.append(row)
            del dev, pinned
        self.doc["pcie"] = rows
        if self.plan.hbm_copy:
            a = t.empty(GiB, dtype=t.uint8, device=self.dev)
            b = t.empty_like(a)
            self.doc["hbm_d2d_copy_1GiB_s"] = self.median(lambda: b.copy_(a))

    # -- sampling

    def measure_sampling(self):
        rows = []
        for vocab in sorted({s.vocab for s in self.models.values()}):
            for batch in self.plan.sampling_batches:
                logits = self.torch.randn(batch, vocab, device=self.dev, dtype=self.torch.float32) * 3
                times = {name: self.eager_and_graph(fn, f"sampling {name} batch {batch}")
                         for name, fn in sampling_paths(self.torch, logits).items()}
                rows.append(sampling_row(batch, vocab, times))
        self.doc["sampling"] = rows

    def eager_and_graph(self, fn, what):
        """fn's time run eagerly and replayed from a CUDA graph; a path that fails (one that
        cannot be captured, a FlashInfer of another API) keeps what it measured."""
        times = {}
        try:
            times["eager"] = self.median(fn, warm=3)
            times["graph"] = self.median(self.graphed(fn), warm=3) if self.cuda else times["eager"]
        except Exception as e:
            self.skip(f"{what} {'in a CUDA graph' if times else ''}", repr(e)[:160])
        return times

    # -- prefill, KV export and chunks (Hugging Face's model)

    def measure_hf(self, name, shape):
        model = self.build_hf(shape)
        if self.groups & {"prefill", "export"}:
            self.measure_prefill(model, name, shape)
        if "chunk" in self.groups:
            self.measure_chunk(model, name, shape)

    def measure_prefill(self, model, name, shape):
        rows = []
        for n in self.plan.prefill_tokens:
            try:
                rows.append(self.prefill_one(model, shape, n))
            except self.torch.cuda.OutOfMemoryError:
                self.skip(f"prefill.{name} {n} tokens", "out of memory")
            self.free()
        self.doc.setdefault("prefill", {})[name] = rows

    def prefill_one(self, model, shape, tokens):
        ids = self.torch.randint(0, shape.vocab, (1, tokens), device=self.dev)
        prefill_s = None
        if "prefill" in self.groups:
            prefill_s = self.median(lambda: forward(model, ids), self.few() if tokens >= 4096 else None)
        kv = cache_tensors(forward(model, ids).past_key_values)
        row = prefill_row(tokens, shape.layers, prefill_s, sum(x.numel() * x.element_size() for x in kv))
        if "export" in self.groups:
            row.update(self.export_times(kv))
        return row

    def export_times(self, kv):
        """Every layer's K and V copied, one tensor at a time, to pinned buffers and back."""
        hosts = [self.host(x) for x in kv]

        def export():
            for h, x in zip(hosts, kv):
                h.copy_(x, non_blocking=True)

        def restore():
            for h, x in zip(hosts, kv):
                x.copy_(h, non_blocking=True)
        return {"export_d2h_s": self.median(export, self.few(), 1),
                "import_h2d_s": self.median(restore, self.few(), 1)}

    def measure_chunk(self, model, name, shape):
        rows = []
        for cached in self.plan.chunk_cached:
            try:
                rows += self.chunks_on(model, shape, cached)
            except self.torch.cuda.OutOfMemoryError:
                self.skip(f"chunk.{name} on {cached} cached", "out of memory")
            self.free()
        self.doc.setdefault("chunk", {})[name] = rows

    def chunks_on(self, model, shape, cached):
        """Chunks of each new length on one cached context, cropped back before every call,
        and one eager decode step on it (Python and launches included)."""
        t, rows = self.torch, []
        cache = forward(model, t.randint(0, shape.vocab, (1, cached), device=self.dev)).past_key_values
        for new in self.plan.chunk_new + [1]:
            ids = t.randint(0, shape.vocab, (1, new), device=self.dev)

            def resume():
                crop_to(cache, cached)
                return forward(model, ids, cache)
            s = self.median(resume, self.few() if new > 1 else None)
            rows.append(chunk_row(cached, new, shape.layers, hf_eager_decode_s=s) if new == 1
                        else chunk_row(cached, new, shape.layers, prefill_s=s))
        return rows

    def build_hf(self, shape):
        """Hugging Face's model of the shape with random bf16 weights, made on the device."""
        from transformers import AutoConfig, AutoModelForCausalLM
        t = self.torch
        cfg = hf_config_dict(shape)
        cfg = AutoConfig.for_model(cfg.pop("model_type"), **cfg)
        cfg._attn_implementation = "sdpa"
        t.set_default_dtype(t.bfloat16)
        try:
            with t.device(self.dev):
                t.manual_seed(0)
                model = AutoModelForCausalLM.from_config(cfg)
        finally:
            t.set_default_dtype(t.float32)
        return model.eval()

    # -- a chunk resumed on a KV cache imported layer by layer (store.load: layerwise)

    def measure_layerwise(self, name, shape):
        model, rows = self.build_hf(shape), []
        for cached in sorted({c for c, _ in self.plan.layerwise}):
            news = [n for c, n in self.plan.layerwise if c == cached]
            try:
                rows += self.layerwise_on(model, shape, cached, news)
            except self.torch.cuda.OutOfMemoryError:
                self.skip(f"layerwise.{name} on {cached} cached", "out of memory")
            self.free()
        self.doc.setdefault("layerwise", {})[name] = rows
        del model

    def layerwise_on(self, model, shape, cached, news):
        """Chunks of each new length on a cache of `cached` tokens imported from pinned host
        buffers: the import alone, the chunk alone, the import then the chunk, and layer by
        layer, each layer's K and V copied on a side stream while the layers before it compute
        (each layer waits for its own copy's event)."""
        t = self.torch
        cache = forward(model, t.randint(0, shape.vocab, (1, cached), device=self.dev)).past_key_values
        load = LayerwiseImport(t, cache, self.host, self.cuda)
        gate = load.gate(decoder_layers(model))
        rows = []
        try:
            for new in news:
                ids = t.randint(0, shape.vocab, (1, new), device=self.dev)

                def resume(wait_each=False, copy=True):
                    load.start(copy, wait_each)
                    return forward(model, ids, cache)
                times = self.layerwise_times(load, resume, f"{new} on {cached} cached")
                rows.append(layerwise_row(cached, new, shape.layers, load.kv_bytes, times))
        finally:
            for hook in gate:
                hook.remove()
        return rows

    def layerwise_times(self, load, resume, what):
        """The four variants' times; the layer-wise one only if its layers waited for their
        copies and its logits, on device buffers poisoned with NaN before the import, are the
        whole import's (an unordered copy would read the poison)."""
        variants = {"import_h2d_s": lambda: load.start(True, False), "compute_s": lambda: resume(copy=False),
                    "whole_s": resume, "layerwise_s": lambda: resume(wait_each=True)}
        times = {}
        for key, fn in variants.items():
            try:
                times[key] = self.median(fn, self.few(), 3)
            except Exception as e:  # keep the other variants' times
                self.skip(f"layerwise {key} of {what}", repr(e)[:160])
            load.wait_each = False
        if "layerwise_s" not in times:
            return times
        why = "the layers' pre-hooks never ran" if self.cuda and load.waits == 0 else self.misordered(load, resume)
        if why:
            del times["layerwise_s"]  # not a layer-wise load
            self.skip(f"layerwise_s of {what}", why)
        return times

    def misordered(self, load, resume):
        """Why the layer-wise run's logits differ from the whole import's, or None."""
        whole = resume().logits.float()
        load.poison()
        ordered = resume(wait_each=True).logits.float()
        load.wait_each = False
        self.sync()
        err = ((ordered - whole).norm() / whole.norm()).item()
        if not math.isfinite(err) or err > 1e-2:
            return f"its logits differ from the whole import's by {err:.3g} (relative): a layer read its KV before it landed"
        self.layerwise_checked += 1
        return None

    # -- decode steps (a hand-written step over a static cache)

    def measure_decode(self, name, shape):
        weights, rows = decode_weights(self.torch, shape, self.dev), []
        for batch, context in self.plan.decode:
            what = f"decode.{name} batch {batch} context {context}"
            if not self.fits(shape.kv_bytes(context, batch)):
                self.skip(what, f"its {shape.kv_bytes(context, batch) / GiB:.1f} GiB KV cache does not fit")
                continue
            try:
                rows.append(self.decode_one(shape, weights, batch, context))
            except self.torch.cuda.OutOfMemoryError:
                self.skip(what, "out of memory")
            self.free()
        self.doc.setdefault("decode", {})[name] = rows

    def decode_one(self, shape, weights, batch, context):
        step = decode_step(self.torch, shape, weights, batch, context, self.dev)
        row = decode_row(batch, context, shape.layers, self.median(self.graphed(step), 2 * self.args.reps, 3),
                         shape.kv_bytes(context, batch))
        if self.args.eager:
            row["eager_step_s"] = self.median(step, self.args.reps, 3)
        return row

    # -- the file's description

    def description(self, started):
        t = self.torch
        link = pcie_link() if self.cuda else "no GPU"
        how = [f"gpuprofile (kvcosim tools/gpuprofile) on {self.doc['gpu']} ({link}), torch {t.__version__},"
               f" transformers {version_of('transformers')}, flashinfer {version_of('flashinfer')},"
               f" {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d}, {time.time() - started:.0f} s."
               f" Random bf16 weights; each time the median of {self.args.reps} runs after warm-up"
               f" ({self.few()} for prefills from 4,096 tokens, copies from 256 MiB, exports and layerwise rows),"
               " CUDA events.", HOW_GROUPS]
        if self.layerwise_checked:
            how.append(f"layerwise: on {self.layerwise_checked} chunks the layer-wise run's logits, on device"
                       " buffers filled with NaN before its import, matched the whole import's.")
        if not self.cuda:
            how.insert(0, f"DRY RUN on the CPU with a tiny shape ({TINY_SHAPE.layers} layers, hidden"
                          f" {TINY_SHAPE.hidden}) under each model's name, timed by the host clock,"
                          " no CUDA graphs (the graph times are the eager ones), host buffers not"
                          " pinned: not a measurement.")
        return how + self.notes


HOW_GROUPS = (
    "prefill: Hugging Face AutoModelForCausalLM, sdpa attention, batch 1, logits of the last token"
    " only. export/import: every layer's K and V tensor of the prefilled cache copied to/from"
    " pinned host buffers one after another (kv_bytes in all). chunk: `new` tokens on a cache of"
    " `cached` (cropped back before each call); hf_eager_decode_s: one eager HF decode step."
    " decode: a hand-written step (RMSNorm, fused QKV, SDPA over a static cache of `context`,"
    " gated MLP, LM head; no sampling) replayed from one CUDA graph; eager_step_s without it."
    " pcie: one buffer, pinned and pageable. sampling: float32 logits; sort_topk_topp: sort,"
    " top-k 50, top-p 0.9, multinomial; topk_topp: torch.topk first; flashinfer_topk_topp:"
    " FlashInfer's fused sampling; eager and in a CUDA graph. layerwise: `new` tokens on a cache"
    " of `cached` whose K and V (kv_bytes) are imported from pinned host buffers, layer by layer"
    " on a side stream: import_h2d_s the import alone, compute_s the chunk alone, whole_s the"
    " import then the chunk, layerwise_s both at once, each decoder layer waiting (an event) for"
    " its own layer's copy (store.load: layerwise). layers (rows): layers measured.")


def pcie_link():
    """The GPU's host link as nvidia-smi gives it (the most the GPU and slot allow)."""
    import subprocess
    try:
        out = subprocess.run(["nvidia-smi", "-i", "0", "--format=csv,noheader",
                              "--query-gpu=pcie.link.gen.max,pcie.link.width.max"],
                             capture_output=True, text=True, timeout=20).stdout.strip()
        gen, width = (x.strip() for x in out.split(","))
        return f"PCIe Gen{gen} x{width}"
    except Exception:
        return "PCIe link unknown"


def version_of(module):
    try:
        return __import__(module).__version__
    except Exception:
        return "absent"


def hf_config_dict(shape):
    """config.json's fields for the shape: the file's own, else a preset's."""
    cfg = dict(shape.hf) or {"model_type": shape.arch, "hidden_size": shape.hidden,
                             "intermediate_size": shape.intermediate, "num_attention_heads": shape.heads,
                             "num_key_value_heads": shape.kv_heads, "vocab_size": shape.vocab,
                             "tie_word_embeddings": False}
    for k in ("architectures", "_name_or_path", "quantization_config", "torch_dtype", "dtype",
              "transformers_version", "auto_map"):
        cfg.pop(k, None)
    cfg["num_hidden_layers"] = shape.layers
    if "layer_types" in cfg:
        cfg["layer_types"] = cfg["layer_types"][:shape.layers]
    cfg["max_position_embeddings"] = max(cfg.get("max_position_embeddings", 0), 65536)
    cfg.setdefault("model_type", "llama")
    return cfg


def forward(model, ids, cache=None):
    """One forward pass that keeps the cache and computes only the last token's logits."""
    return model(input_ids=ids, past_key_values=cache, use_cache=True, **last_logits_only(model))


def last_logits_only(model):
    params = inspect.signature(model.forward).parameters
    for name in ("logits_to_keep", "num_logits_to_keep"):  # renamed in transformers 4.50
        if name in params:
            return {name: 1}
    return {}


def cache_tensors(cache):
    """Each layer's K and V tensors of a Hugging Face cache, whichever its version."""
    if hasattr(cache, "layers"):
        return [x for layer in cache.layers for x in (layer.keys, layer.values)]
    if hasattr(cache, "key_cache"):
        return [x for kv in zip(cache.key_cache, cache.value_cache) for x in kv]
    return [x for kv in cache for x in kv]


def crop_to(cache, length):
    """Cuts a Hugging Face cache back to its first `length` tokens, on every version: a
    negative crop removes that many tokens (transformers 4.x and 5.x); a positive one meant
    the length to keep until 5.17 and is removed in 5.18, and crop(0) emptied the cache
    before 5.14, so the call is made only when there is something to remove."""
    extra = cache.get_seq_length() - length
    if extra > 0:
        cache.crop(-extra)


class LayerwiseImport:
    """A KV cache's import from pinned host buffers into device buffers that the cache's layers
    are set to before each call, one layer's K and V after another on a copy stream, with an
    event per layer that the layer's forward waits for when wait_each is set."""

    def __init__(self, torch, cache, host, cuda):
        self.torch, self.cache, self.cuda = torch, cache, cuda
        self.dev = [x.clone() for x in cache_tensors(cache)]  # K0, V0, K1, V1, ...
        self.hosts = []
        for x in self.dev:
            self.hosts.append(host(x))
            self.hosts[-1].copy_(x)
        self.layers = len(self.dev) // 2
        self.kv_bytes = sum(x.numel() * x.element_size() for x in self.dev)
        self.stream = torch.cuda.Stream() if cuda else None
        self.landed = [torch.cuda.Event() for _ in range(self.layers)] if cuda else []
        self.wait_each = False
        self.waits = 0  # the layers' waits so far: none means the hooks never ran

    def start(self, copy, wait_each):
        """Sets the cache back to the imported buffers and, if copy, imports them: the caller's
        stream waits for the whole import unless wait_each leaves each layer to wait for its own."""
        for i in range(self.layers):
            set_cache_layer(self.cache, i, self.dev[2 * i], self.dev[2 * i + 1])
        self.wait_each = copy and wait_each
        if not copy:
            return
        if not self.cuda:  # no streams: the copies run before the compute
            for d, h in zip(self.dev, self.hosts):
                d.copy_(h)
            return
        t, here = self.torch, self.torch.cuda.current_stream()
        self.stream.wait_stream(here)  # after the work before it (the last call's reads)
        with t.cuda.stream(self.stream):
            for i in range(self.layers):
                self.dev[2 * i].copy_(self.hosts[2 * i], non_blocking=True)
                self.dev[2 * i + 1].copy_(self.hosts[2 * i + 1], non_blocking=True)
                self.landed[i].record(self.stream)
        if not wait_each:
            here.wait_event(self.landed[-1])

    def poison(self):
        """Fills the device buffers with NaN, on the caller's stream."""
        for d in self.dev:
            d.fill_(float("nan"))

    def gate(self, layers):
        """Hooks that make decoder layer i wait for layer i's copy while wait_each is set."""
        def hook(i):
            def wait(module, args):
                if self.wait_each and self.cuda:
                    self.torch.cuda.current_stream().wait_event(self.landed[i])
                    self.waits += 1
            return wait
        return [layer.register_forward_pre_hook(hook(i)) for i, layer in enumerate(layers)]


def decoder_layers(model):
    """A Hugging Face decoder's layers (llama, qwen2: model.model.layers)."""
    return model.model.layers


def set_cache_layer(cache, i, keys, values):
    """Sets layer i of a Hugging Face cache to the given K and V, whichever its version."""
    if hasattr(cache, "layers"):
        cache.layers[i].keys, cache.layers[i].values = keys, values
    else:
        cache.key_cache[i], cache.value_cache[i] = keys, values


def decode_weights(torch, shape, dev):
    """Random per-layer weights of the hand-written step: fused QKV, O, fused gate+up, down."""
    torch.manual_seed(0)
    h, hd = shape.hidden, shape.head_dim

    def w(rows, cols):
        return torch.randn(rows, cols, device=dev, dtype=torch.bfloat16) * 0.02
    layers = [{"qkv": w(h, (shape.heads + 2 * shape.kv_heads) * hd), "o": w(shape.heads * hd, h),
               "gate_up": w(h, 2 * shape.intermediate), "down": w(shape.intermediate, h)}
              for _ in range(shape.layers)]
    return layers, w(h, shape.vocab)


def decode_step(torch, shape, weights, batch, context, dev):
    """One decode step of batch sequences: each writes its new K and V at the cache's last
    position and attends over all `context` positions (a static cache, as engines keep it)."""
    F = torch.nn.functional
    layers, lm_head = weights
    h, nh, kvh, hd = shape.hidden, shape.heads, shape.kv_heads, shape.head_dim
    k_cache = [torch.randn(batch, kvh, context, hd, device=dev, dtype=torch.bfloat16) for _ in layers]
    v_cache = [torch.randn(batch, kvh, context, hd, device=dev, dtype=torch.bfloat16) for _ in layers]
    x0 = torch.randn(batch, h, device=dev, dtype=torch.bfloat16)

    def step():
        x = x0
        for w, kc, vc in zip(layers, k_cache, v_cache):
            q, k, v = (F.rms_norm(x, (h,)) @ w["qkv"]).split([nh * hd, kvh * hd, kvh * hd], dim=-1)
            kc[:, :, -1:].copy_(k.view(batch, kvh, 1, hd))
            vc[:, :, -1:].copy_(v.view(batch, kvh, 1, hd))
            a = F.scaled_dot_product_attention(q.view(batch, nh, 1, hd), kc, vc, enable_gqa=kvh != nh)
            x = x + a.reshape(batch, nh * hd) @ w["o"]
            gate, up = (F.rms_norm(x, (h,)) @ w["gate_up"]).chunk(2, dim=-1)
            x = x + (F.silu(gate) * up) @ w["down"]
        return F.rms_norm(x, (h,)) @ lm_head
    return step


def sampling_paths(torch, logits, top_k=50, top_p=0.9):
    """Ways to draw one token per row of logits, by the name their times carry."""
    def sort_topk_topp():  # sort everything, then mask (Hugging Face's and vLLM's fallback)
        values, order = torch.sort(logits, descending=True)
        probs = values.softmax(-1)
        values = values.masked_fill(probs.cumsum(-1) - probs > top_p, float("-inf"))
        values[:, top_k:] = float("-inf")
        return order.gather(-1, torch.multinomial(values.softmax(-1), 1))

    def topk_topp():  # top-k first, top-p on its survivors
        values, order = torch.topk(logits, top_k, dim=-1)
        probs = values.softmax(-1)
        values = values.masked_fill(probs.cumsum(-1) - probs > top_p, float("-inf"))
        return order.gather(-1, torch.multinomial(values.softmax(-1), 1))

    paths = {"sort_topk_topp": sort_topk_topp, "topk_topp": topk_topp,
             "argmax": lambda: logits.argmax(-1)}
    if logits.is_cuda:
        try:
            from flashinfer.sampling import top_k_top_p_sampling_from_logits as fused
            paths["flashinfer_topk_topp"] = lambda: fused(logits, top_k, top_p)
        except ImportError:
            pass
    return paths


if __name__ == "__main__":
    main()
