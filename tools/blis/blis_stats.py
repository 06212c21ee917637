#!/usr/bin/env python3
"""Percentiles of a `blis replay --results-path` file, as kvcosim's run line prints them.

Usage: blis_stats.py RESULTS.json

TTFT p50/p90 over requests (BLIS's stdout gives the mean, p90, p95, p99, not the
p50), and TPOT p50/mean: each request's mean inter-token latency (`itl_mean_us`),
the per-request figure kvcosim's `TPOT` is, over the requests with two or more
output tokens. Nearest-rank percentiles. Standard library only.
"""
import json
import math
import sys


def pct(xs, p):
    xs = sorted(xs)
    return xs[max(0, math.ceil(p / 100 * len(xs)) - 1)]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows = json.load(open(sys.argv[1]))
    ttft = [r["ttft_us"] / 1000 for r in rows]
    tpot = [r["itl_mean_us"] / 1000 for r in rows if r["output_tokens"] > 1]
    print(f"requests {len(rows)}")
    print(f"TTFT ms  mean {sum(ttft) / len(ttft):.1f}  p50 {pct(ttft, 50):.1f}  p90 {pct(ttft, 90):.1f}  p99 {pct(ttft, 99):.1f}")
    print(f"TPOT ms  mean {sum(tpot) / len(tpot):.2f}  p50 {pct(tpot, 50):.2f}  p99 {pct(tpot, 99):.2f}")


if __name__ == "__main__":
    main()
