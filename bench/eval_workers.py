"""Wall time of `memcore eval` with workers=1 vs workers=2 (and --engine ray) over a few LoCoMo conversations.

    .venv/bin/python bench/eval_workers.py [--file F] [--dataset locomo] [--conversations conv-26,conv-30]
        [--systems naive_rag,naive_rag_session] [--limit 40] [--embedder minilm]
        [--settings local1,local2,ray,ray-conv,ray-sys]   # ray: auto; ray-conv: a task per conversation;
                                                          # ray-sys: per (conversation, system)

    .venv/bin/python bench/eval_workers.py --stress 4   # concurrent-writer check only

    # issue 38: LoCoMo-Plus items 0-7 (one stitched conversation each) or BEAM chats, local vs Ray
    .venv/bin/python bench/eval_workers.py --dataset auto --file ../shared/datasets/locomo-plus/locomo_plus.json \
        --conversations 0-7 --settings local1,ray
    .venv/bin/python bench/eval_workers.py --dataset auto --file ../shared/datasets/beam/500K --conversations all \
        --limit 5 --settings local1,ray

`--conversations`: ids, `all`, or item numbers `A-B` of a LoCoMo-Plus file (its conversations are
`<locomo id>+plus<i>`).

Each setting runs from a fresh store under /tmp (ingest included), offline engine. Prints the
wall times, the speed-up, and whether both runs produced the same numbers. Parallelism is across
conversations (one process each), so the speed-up is bounded by the number of conversations and
of free CPU cores.

`--stress N`: N spawned processes write to the same tables of one store at once, each for its own
conversation, with the store calls the eval workers make (commit with new versions, deletions,
events and links; checkpoint and results merge_insert; rollback; FTS index + hybrid search), then
checks every conversation's rows equal a one-process run. LanceDB commits optimistically and
rebases concurrent appends/updates/deletes on disjoint rows, so this passes (4 x 150 commits).
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

from memcore.eval.report import diff_results
from memcore.eval.runner import run_eval
from memcore.settings import Settings

DEFAULT_FILE = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "locomo" / "locomo8.json"


def one(setting: str, args: argparse.Namespace) -> tuple[float, dict]:
    """Run the evaluation once from a fresh store with a setting (local1, local2, ray, ray-conv, ray-sys); (seconds,
    results). The Ray settings start a local Ray each time (its start-up is part of the wall time)."""
    from memcore.eval import ray_engine

    root = tempfile.mkdtemp(prefix=f"memcore-bench-{setting}-")
    try:
        s = Settings(store_uri=os.path.join(root, "store"), llm_provider="offline", embedder=args.embedder)
        engine = "ray" if setting.startswith("ray") else "local"
        ray_engine.TASK_UNIT = {"ray-conv": "conversation", "ray-sys": "system"}.get(setting, "auto")
        t0 = time.perf_counter()
        res = run_eval(s, args.dataset, args.file, args.systems.split(","), conversations=args.conv_ids,
                       limit=args.limit, workers=int(setting[5:]) if engine == "local" else 1, engine=engine)
        return time.perf_counter() - t0, res
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _stress_worker(uri: str, conv: str, n: int) -> None:
    import numpy as np

    from memcore.store import LanceStore
    from memcore.types import Event, MemoryItem

    st, rng = LanceStore(uri, dim=8), np.random.default_rng(0)
    for i in range(n):
        it = MemoryItem(id=f"e{i % 5}", kind="episode", text=f"episode text {i}", system="s", conv_id=conv,
                        embedding=list(rng.random(8)), sources=["D1:1"], turn_ids=["D1:1"], updated_step=i + 1)
        ev = Event(step=i + 1, kind="created", item_ids=[it.id], reason="x", system="s", conv_id=conv)
        dels = [("episode", f"e{(i + 2) % 5}")] if i % 3 == 0 else []
        st.commit("sp", "s", conv, i + 1, [it], dels, [ev], {"i": i})
        st.save_results("run", [{"system": "s", "question_id": f"{conv}:q{i}", "conv_id": conv}])
        if i % 10 == 5:
            st.rollback("sp", conv, i + 1)
            st.search_items("sp", conv, "episode", "episode text", rng.random(8), 3, retriever="hybrid")


def _signature(uri: str, conv: str) -> tuple:
    from memcore.store import LanceStore

    st = LanceStore(uri, dim=8)
    df = st.rows("mem_episode", conv_id=conv)
    return (sorted(zip(df["id"], df["valid_from"], df["valid_to"], strict=True)),
            [(e.step, e.item_ids) for e in st.events("sp", conv)], st.checkpoint("sp", conv)["step"],
            sum(r["conv_id"] == conv for r in st.results("run")))


def stress(k: int, n: int = 150) -> None:
    """k processes commit to the same tables at once; compare each conversation with a serial run."""
    import multiprocessing as mp

    root = tempfile.mkdtemp(prefix="memcore-stress-")
    ctx = mp.get_context("spawn")
    t0 = time.perf_counter()
    procs = [ctx.Process(target=_stress_worker, args=(f"{root}/par", f"c{j}", n)) for j in range(k)]
    [p.start() for p in procs]
    [p.join() for p in procs]
    print(f"{k} writers x {n} commits: {time.perf_counter() - t0:.1f}s, exit codes {[p.exitcode for p in procs]}")
    _stress_worker(f"{root}/serial", "c0", n)
    ref = _signature(f"{root}/serial", "c0")
    same = [_signature(f"{root}/par", f"c{j}") == ref for j in range(k)]
    print(f"each conversation identical to a one-process run: {same}")
    shutil.rmtree(root, ignore_errors=True)


def conversation_ids(args: argparse.Namespace) -> list[str] | None:
    """The --conversations ids: None for `all`; LoCoMo-Plus items `A-B` become their stitched conversations' ids."""
    if args.conversations == "all":
        return None
    if "-" in args.conversations and args.conversations.replace("-", "").isdigit():
        import warnings

        from memcore.datasets import DatasetWarning
        from memcore.eval.runner import load_conversations

        lo, hi = map(int, args.conversations.split("-"))
        with warnings.catch_warnings():  # items whose LoCoMo conversation is not shared: warned by the runs
            warnings.simplefilter("ignore", DatasetWarning)
            convs = load_conversations(args.dataset, args.file)[0]
        return [c.id for c in convs if lo <= c.metadata.get("locomo_plus_item", -1) <= hi]
    return args.conversations.split(",")


def main() -> None:
    """Print the wall time of each setting, the speed-up against local1 and whether the results are identical."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", default=str(DEFAULT_FILE))
    ap.add_argument("--dataset", default="locomo", help="locomo | auto | beam | locomo-plus | ... (memcore eval's)")
    ap.add_argument("--conversations", default="conv-26,conv-30", help="ids, all, or LoCoMo-Plus items A-B")
    ap.add_argument("--systems", default="naive_rag,naive_rag_session")
    ap.add_argument("--limit", type=int, default=40, help="questions per conversation (0 = all)")
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--settings", default="local1,local2", help="local1, local2, ray, ray-conv, ray-sys (comma-separated)")
    ap.add_argument("--stress", type=int, default=0, help="only run the concurrent-writer check with N processes")
    args = ap.parse_args()
    if args.stress:
        stress(args.stress)
        return
    args.limit = args.limit or None
    args.conv_ids = conversation_ids(args)
    if not Path(args.file).exists():
        sys.exit(f"dataset not found: {args.file} (pass --file)")
    print(f"cpus: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}; conversations {args.conversations}; "
          f"systems {args.systems}; limit {args.limit}; embedder {args.embedder}")
    times, results = {}, {}
    names = args.settings.split(",")
    for name in names:
        times[name], results[name] = one(name, args)
        print(f"{name}: {times[name]:.1f}s  ({results[name]['questions_done']} questions)", flush=True)
    first = names[0]
    for name in names[1:]:
        diff = diff_results(results[first], results[name])
        print(f"{name} vs {first}: speed-up {times[first] / times[name]:.2f}x; identical results: {not diff}"
              + (f" (differ at {', '.join(diff[:10])})" if diff else ""))
    print(f"load average now: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
