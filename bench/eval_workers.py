"""Wall time of `memcore eval` with workers=1 vs workers=2 over a few LoCoMo conversations.

    .venv/bin/python bench/eval_workers.py [--file F] [--conversations conv-26,conv-30]
        [--systems naive_rag,naive_rag_session] [--limit 40] [--embedder minilm]

Each setting runs from a fresh store under /tmp (ingest included), offline engine. Prints the
wall times, the speed-up, and whether both runs produced the same numbers. Parallelism is across
conversations (one process each), so the speed-up is bounded by the number of conversations and
of free CPU cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memcore.eval.report import strip_timing  # noqa: E402
from memcore.eval.runner import run_eval  # noqa: E402
from memcore.settings import Settings  # noqa: E402

DEFAULT_FILE = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "locomo" / "locomo8.json"


def one(workers: int, args: argparse.Namespace) -> tuple[float, dict]:
    """Run the evaluation once from a fresh store; (seconds, results)."""
    root = tempfile.mkdtemp(prefix=f"memcore-bench-w{workers}-")
    try:
        s = Settings(store_uri=os.path.join(root, "store"), llm_provider="offline", embedder=args.embedder)
        t0 = time.perf_counter()
        res = run_eval(s, "locomo", args.file, args.systems.split(","), conversations=args.conversations.split(","),
                       limit=args.limit, workers=workers)
        return time.perf_counter() - t0, res
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    """Print wall time for workers=1 and workers=2 and the speed-up."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", default=str(DEFAULT_FILE))
    ap.add_argument("--conversations", default="conv-26,conv-30")
    ap.add_argument("--systems", default="naive_rag,naive_rag_session")
    ap.add_argument("--limit", type=int, default=40, help="questions per conversation (0 = all)")
    ap.add_argument("--embedder", default="minilm")
    args = ap.parse_args()
    args.limit = args.limit or None
    if not Path(args.file).is_file():
        sys.exit(f"dataset not found: {args.file} (pass --file)")
    print(f"cpus: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}; conversations {args.conversations}; "
          f"systems {args.systems}; limit {args.limit}; embedder {args.embedder}")
    times, results = {}, {}
    for w in (1, 2):
        times[w], results[w] = one(w, args)
        print(f"workers={w}: {times[w]:.1f}s  ({results[w]['questions_done']} questions)", flush=True)
    same = {k: v for k, v in strip_timing(results[1]).items() if k != "store"} == \
        {k: v for k, v in strip_timing(results[2]).items() if k != "store"}
    print(f"speed-up workers=2 vs 1: {times[1] / times[2]:.2f}x; identical results: {same}")


if __name__ == "__main__":
    main()
