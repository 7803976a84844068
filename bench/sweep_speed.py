"""Wall time of a sweep (memcore sweep), how often memory was built and how often it was restored.

Runs one system's sweep on a fresh store (offline engine, MiniLM unless --embedder), local engine, and prints
the wall time, the process CPU time, the wall time of each point, the memories built (construction points x
conversations) and the `restore` calls (a query-time point answers from the memory already loaded: issue 26
item 5), with the load average before and after.

    .venv/bin/python bench/sweep_speed.py [--system com] [--grid beta=0.3,0.5,0.8 --grid max_len=4,8,12]
        [--file ../shared/datasets/locomo/conv-26.json] [--categories 1,2,3,4] [--limit N]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ask_query_change import RESTORES, _counting_restore

from memcore.eval.sweep import run_sweep
from memcore.settings import Settings
from memcore.systems.base import BaseSystem

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    """Run the sweep and print its timings."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--system", default="com")
    ap.add_argument("--grid", action="append", default=[])
    ap.add_argument("--file", default=str(ROOT.parent / "shared" / "datasets" / "locomo" / "conv-26.json"))
    ap.add_argument("--categories", default="1,2,3,4")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--embedder", default="minilm")
    args = ap.parse_args()
    grid = args.grid or ["beta=0.3,0.5,0.8", "max_len=4,8,12"]
    BaseSystem.restore = _counting_restore  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(store_uri=str(Path(tmp) / "store"), llm_provider="offline", embedder=args.embedder)
        load0, c0, t0 = os.getloadavg(), time.process_time(), time.perf_counter()
        res = run_sweep(settings, args.system, grid, dataset="locomo", file=args.file,
                        categories=args.categories.split(","), limit=args.limit, judge=True)
        wall, cpu, load1 = time.perf_counter() - t0, time.process_time() - c0, os.getloadavg()
    print(f"{args.system} sweep {' x '.join(grid)} on {Path(args.file).name}: {res['points_total']} points, "
          f"{res['points'][0]['n'] if res['points'] else 0} questions each, complete {res['complete']}")
    print(f"wall {wall:.1f} s, process CPU {cpu:.1f} s; per point: "
          + ", ".join(f"{p['wall_seconds']:.1f}" for p in res["points"]))
    print(f"memory: {res['construction_points']} construction point(s), built {res['memory_built']} time(s); "
          f"restore calls {RESTORES['n']}")
    print(f"load average before {load0[0]:.1f}, after {load1[0]:.1f} ({os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
