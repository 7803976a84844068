"""Ask latency when only a query-time setting changes (the retriever), and how many restores it costs.

Builds the demo's memory of each system once (offline engine, MiniLM), asks one question with the paper's
retriever, then the same question with each other retriever, and prints per system: the first Ask (restores
memory), each Ask after a retriever change, and the number of `restore` calls the changes made. Issue 25:
a query-time change must answer from the memory already loaded (0 restores).

    .venv/bin/python bench/ask_query_change.py [--systems com,xmemory,memweaver] [--repeat 1] [--conv ../shared/datasets/locomo/conv-26.json]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memcore.settings import Settings
from memcore.systems import builtin_systems
from memcore.systems.base import BaseSystem
from memcore.workbench import Workbench

RESTORES = {"n": 0}
_restore = BaseSystem.restore


def _counting_restore(self: BaseSystem, *a: object, **kw: object) -> None:
    RESTORES["n"] += 1
    _restore(self, *a, **kw)


def main() -> None:
    """Print the Ask latency table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", default="")
    ap.add_argument("--repeat", type=int, default=1, help="rounds of changes (after the first, the app's cache may hold it)")
    ap.add_argument("--conv", default="", help="a LoCoMo file (default: the demo)")
    args = ap.parse_args()
    BaseSystem.restore = _counting_restore  # type: ignore[method-assign]
    names = args.systems.split(",") if args.systems else builtin_systems()
    with tempfile.TemporaryDirectory() as d:
        wb = Workbench(Settings(store_uri=d))
        conv = wb.load(args.conv)[0] if args.conv else wb.load_demo()
        q = conv.questions[0]
        print(f"{'system':<13}{'first ms':>10}{'change ms (median)':>20}{'restores/change':>17}")
        for name in names:
            wb.ingest(name, conv)
            t0 = time.perf_counter()
            wb.ask(name, conv, q)
            first = (time.perf_counter() - t0) * 1000
            times, before = [], RESTORES["n"]
            for _round in range(args.repeat):
                for retriever in ("lexical", "hybrid", "dense"):
                    t0 = time.perf_counter()
                    wb.ask(name, conv, q, retriever=retriever)
                    times.append((time.perf_counter() - t0) * 1000)
            changes = 3 * args.repeat
            print(f"{name:<13}{first:>10.0f}{statistics.median(times):>20.1f}{(RESTORES['n'] - before) / changes:>17.2f}")


if __name__ == "__main__":
    main()
