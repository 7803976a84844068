"""Per-ability tables of BEAM chats and LoCoMo-Plus items, offline, per system: evidence recall, content recall and
the rubric score (the OFFLINE RUBRIC RULE: not the authors' LLM judge), each with n and a 95% bootstrap interval.

    python bench/beam_table.py                                   # BEAM 100K (all shared chats) + LoCoMo-Plus items 0-7
    python bench/beam_table.py --chats 2,3 --plus-items 0,1 --systems naive_rag,com
    python bench/beam_table.py --skip-plus --workers 2

What runs is `run_eval` (offline engine, MiniLM, one store per invocation under --store), what `memcore eval`
runs; a rerun with the same --store resumes. LoCoMo-Plus items are stitched into the shared LoCoMo file
(memcore.datasets.locomo_plus: one conversation per item, the authors' rule); item i goes into LoCoMo conversation
i mod 10, so items 0-7 are one per shared conversation. LoCoMo-Plus has no reference answer and no offline judge:
its table shows retrieval only. The machine's load (uptime) is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "datasets"
METRICS = (("evidence_recall", "evidence recall"), ("content_recall", "content recall"),
           ("rubric_rule", "rubric (offline rubric rule)"), ("event_order", "event order"))


def _cell(block: dict, metric: str) -> str:
    v = block.get(metric)
    ci = (block.get("ci") or {}).get(metric) or {}
    if v is None:
        return "-"
    if ci.get("lo") is None:
        return f"{v:.3f} (n={ci.get('n', block.get('n'))})"
    return f"{v:.3f} [{ci['lo']:.2f},{ci['hi']:.2f}] n={ci['n']}"


def table(res: dict, title: str, metrics: tuple = METRICS) -> str:
    """system x ability rows with each metric's value, interval and n; the overall row counts the answers given
    from a fallback path (e.g. MemCoT's whole conversation when its loop found nothing): their recall is the
    fallback's, not the system's retrieval."""
    head = ["system", "ability", "n", *[label for _, label in metrics], "answers from a fallback"]
    lines = [head]
    for name, s in res["systems"].items():
        for key, block in [*sorted(s["categories"].items()), ("overall", s["overall"])]:
            label = block.get("name", key) if key != "overall" else "overall"
            fb = f"{(s.get('fallbacks') or {}).get('any', 0)}/{block.get('n', '')}" if key == "overall" else ""
            lines.append([name, str(label), str(block.get("n", "")), *[_cell(block, m) for m, _ in metrics], fb])
    widths = [max(len(r[i]) for r in lines) for i in range(len(head))]
    body = "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in lines)
    return f"== {title} ==\n{body}"


def main() -> None:
    """Parse the arguments, run the evaluations, print the tables."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--beam", default=str(DATA / "beam" / "100K"), help="a BEAM scale folder")
    ap.add_argument("--chats", default="", help="chat folder names, e.g. 2,3 (default: every chat in --beam)")
    ap.add_argument("--plus", default=str(DATA / "locomo-plus" / "locomo_plus.json"))
    ap.add_argument("--plus-items", default="0,1,2,3,4,5,6,7", help="LoCoMo-Plus item numbers")
    ap.add_argument("--skip-plus", action="store_true")
    ap.add_argument("--skip-beam", action="store_true")
    ap.add_argument("--systems", default="all")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--store", default="", help="LanceDB store (default: a fresh temporary one)")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from memcore.datasets.beam import chat_files, conversation_id
    from memcore.eval.runner import run_eval
    from memcore.settings import Settings

    store = args.store or tempfile.mkdtemp(prefix="beam_table_")
    settings = Settings().with_(store_uri=store, llm_provider="offline")
    systems = "all" if args.systems == "all" else args.systems.split(",")
    print("load before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    t0 = time.perf_counter()
    if not args.skip_beam:
        chats = [f for f in chat_files(args.beam) if not args.chats or f.parent.name in args.chats.split(",")]
        ids = [conversation_id(f) for f in chats]
        t = time.perf_counter()
        res = run_eval(settings, "beam", args.beam, systems, conversations=ids, workers=args.workers,
                       out=Path(store) / "beam.json")
        print(table(res, f"BEAM {Path(args.beam).name}: chats {', '.join(ids)} ({res['questions_done']}/"
                         f"{res['questions_total']} questions, {time.perf_counter() - t:.0f} s)"))
    if not args.skip_plus:
        from memcore.datasets import load_dataset

        items = [int(i) for i in args.plus_items.split(",") if i.strip()]
        convs = load_dataset(args.plus, "locomo-plus")
        ids = [c.id for c in convs if c.metadata["locomo_plus_item"] in items]
        t = time.perf_counter()
        res = run_eval(settings, "locomo-plus", args.plus, systems, conversations=ids, categories=["cognitive"],
                       workers=args.workers, out=Path(store) / "plus.json")
        print(table(res, f"LoCoMo-Plus items {', '.join(map(str, items))} stitched into "
                         f"{convs[0].metadata['locomo_file']} ({res['questions_done']}/{res['questions_total']} "
                         f"questions, {time.perf_counter() - t:.0f} s; no offline judge: retrieval only)",
                    METRICS[:2]))
    print(f"total {time.perf_counter() - t0:.0f} s; store {store}")
    print("load after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
