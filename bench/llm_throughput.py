"""Ingest + eval of one LoCoMo conversation, all systems, against a simulated hosted model.

    .venv/bin/python bench/llm_throughput.py [--conv conv-26] [--delay-ms 500] [--jitter-ms 100]
        [--concurrency 1,16] [--systems all] [--limit N] [--embedder minilm] [--json out.json]

The `simulated` provider serves the offline engine's outputs after delay ± jitter per call, so the
run is the offline run with a network in front: the results must be identical at every
concurrency (checked: the results' diff is printed). Per concurrency N, from a fresh store (the
embedding cache is shared and warmed first, so embedding is not counted):
- wall time of `run_eval` (ingest + answer + judge), calls made, the peak in flight;
- the critical path: the longest chain of dependent calls (every call records its depth = 1 + the
  depth of the call it had to wait for: the previous call of its ingest or question, or the call
  that issued it ahead), and wall / (critical path x mean delay), the overhead over the ideal.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memcore.eval.report import diff_results
from memcore.eval.runner import run_eval
from memcore.settings import Settings
from memcore.workbench import Workbench

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "locomo"


def one(n: int, args: argparse.Namespace, cache: str) -> dict:
    """One run at concurrency n from a fresh store; its numbers and results."""
    root = tempfile.mkdtemp(prefix=f"memcore-tp{n}-")
    try:
        s = Settings(store_uri=os.path.join(root, "store"), cache_dir=cache, llm_provider="simulated",
                     embedder=args.embedder, llm_concurrency=n, sim_delay_ms=args.delay_ms,
                     sim_jitter_ms=args.jitter_ms, sim_429_rate=args.rate_429)
        wb = Workbench(s)
        systems = "all" if args.systems == "all" else args.systems.split(",")
        t0 = time.perf_counter()
        res = run_eval(s, "locomo", str(SHARED / f"{args.conv}.json"), systems, limit=args.limit, workbench=wb,
                       categories=args.categories.split(",") if args.categories else None)
        wall = time.perf_counter() - t0
        recs = [r for r in wb.ledger.records if not r.cache_hit]
        by_sys: dict[str, dict] = collections.defaultdict(lambda: {"construction": 0, "eval": 0, "depth": 0})
        for r in recs:
            d = by_sys[r.system or "-"]
            d["construction" if r.stage == "construction" else "eval"] += 1
            d["depth"] = max(d["depth"], r.depth)
        return {"n": n, "wall": wall, "calls": len(recs), "critical_path": max((r.depth for r in recs), default=0),
                "peak": wb.llm.scheduler.peak_in_flight, "retried": wb.llm.scheduler.retried,
                "by_system": dict(by_sys), "results": res}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    """Run the benchmark and print the table."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--conv", default="conv-26")
    p.add_argument("--delay-ms", type=float, default=500.0)
    p.add_argument("--jitter-ms", type=float, default=100.0)
    p.add_argument("--rate-429", type=float, default=0.0)
    p.add_argument("--concurrency", default="1,16")
    p.add_argument("--systems", default="all")
    p.add_argument("--categories", default="")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--embedder", default="minilm")
    p.add_argument("--json", default="")
    args = p.parse_args()
    cache = tempfile.mkdtemp(prefix="memcore-tp-cache-")
    warm = Settings(store_uri=os.path.join(cache, "warm"), cache_dir=cache, embedder=args.embedder,
                    llm_provider="offline")  # warms the embedding cache (turns, items, queries): not timed
    run_eval(warm, "locomo", str(SHARED / f"{args.conv}.json"), args.systems if args.systems == "all"
             else args.systems.split(","), limit=args.limit, judge=True,
             categories=args.categories.split(",") if args.categories else None)
    runs = []
    for n in args.concurrency.split(","):
        runs.append(one(int(n), args, cache))
        r = runs[-1]
        print(f"N={r['n']}: {r['wall']:.1f} s, {r['calls']} calls, critical path {r['critical_path']}, "
              f"load average {os.getloadavg()[0]:.2f}", file=sys.stderr, flush=True)
    delay = args.delay_ms / 1000
    print(f"{args.conv}, simulated {args.delay_ms:g} ± {args.jitter_ms:g} ms per call, 429 rate {args.rate_429:g}, "
          f"embedder {args.embedder}; load average {os.getloadavg()[0]:.2f}")
    print("| N | wall s | calls | peak in flight | critical path (calls) | ideal s (cp x delay) | wall / ideal |"
          " speed-up vs the smallest N |")
    print("|---|---|---|---|---|---|---|---|")
    base = min(runs, key=lambda r: r["n"])["wall"]
    for r in runs:
        ideal = r["critical_path"] * delay
        print(f"| {r['n']} | {r['wall']:.1f} | {r['calls']} | {r['peak']} | {r['critical_path']} | {ideal:.1f} | "
              f"{r['wall'] / ideal if ideal else 0:.2f} | {base / r['wall']:.1f}x |")
    print("\nper system (last run): construction calls, eval calls, depth of its longest chain")
    for name, d in sorted(runs[-1]["by_system"].items()):
        print(f"  {name:18s} {d['construction']:6d} {d['eval']:6d} {d['depth']:6d}")
    for r in runs[1:]:
        diff = diff_results(runs[0]["results"], r["results"])
        print(f"results N={runs[0]['n']} vs N={r['n']}: {'identical' if not diff else f'{len(diff)} differences: {diff[:5]}'}")
    if args.json:
        Path(args.json).write_text(json.dumps([{k: v for k, v in r.items() if k != "results"} for r in runs], indent=1))
    shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
