"""Embedding map: which projection (quality and time), and the map's time after its first computation.

1. Quality and time of PCA and t-SNE (memcore.eval.embedding_map.project) on built memories: trustworthiness
   (sklearn.manifold.trustworthiness, cosine, k=10) and seconds, per memory. The pinned choice
   (memcore.eval.embedding_map.METHOD) is printed with them.
2. Budget: a memory of N items (default 5,000, written to a temporary store: real item vectors from --store
   resampled with noise, or random clustered vectors without one) -> the first map (projected and cached), then
   the map again from a fresh store handle (a new process's read: versions, items with vectors, the cached
   projection), the question marked and the figure built. Goal: <= 3 s after the first computation.

    .venv/bin/python bench/embedding_map.py --store /tmp/store --memories demo:xmemory conv-26:memweaver [--n 5000]

--store must hold the conversations and memories named (built with the offline engine and the embedder of
MEMCORE_EMBEDDER, e.g. `memcore ingest`). State the machine load (`uptime`) with the numbers.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memcore.embed import normalise  # noqa: E402
from memcore.eval.embedding_map import METHOD, embedding_map, mark_question, memory_items, project, quality  # noqa: E402
from memcore.store import LanceStore  # noqa: E402
from memcore.store.view import MemoryView  # noqa: E402
from memcore.types import MemoryItem  # noqa: E402
from memcore.viz.embedding_map import embedding_map_figure  # noqa: E402


def compare(wb, conv_id: str, system: str, methods: tuple[str, ...] = ("pca", "tsne")) -> np.ndarray:
    """Print the quality and time of each projection method on one memory (a Workbench's); its unit vectors."""
    conv = wb.conversation(conv_id)
    mem = wb.memory(system, conv)
    df, vecs = memory_items(mem, conv)
    kinds = {k: int(n) for k, n in df["kind"].value_counts().items()}
    project(vecs[:10], "pca")  # warm sklearn up: the first fit of a process pays its imports
    for method in methods:
        t0 = time.perf_counter()
        xy, _ = project(vecs, method)
        took = time.perf_counter() - t0
        print(f"{conv_id:>8} {system:<10} n={len(df):>5} {method:<5} trustworthiness(k=10)={quality(vecs, xy):.3f} "
              f"time={took:7.2f} s   kinds={kinds}", flush=True)
    return vecs


def synthetic(n: int, pool: np.ndarray | None, dim: int) -> list[MemoryItem]:
    """n items in three kinds: resampled pool vectors with noise, or clustered random vectors."""
    rng = np.random.default_rng(0)
    if pool is not None and len(pool):
        base = pool[rng.integers(0, len(pool), n)]
    else:
        centres = rng.normal(size=(40, dim))
        base = centres[rng.integers(0, 40, n)]
    vecs = normalise((base + 0.05 * rng.normal(size=base.shape)).astype(np.float32))
    kinds = ("entity", "relation", "passage")
    return [MemoryItem(id=f"{kinds[i % 3]}-{i}", kind=kinds[i % 3], text=f"synthetic item {i}", system="bench",
                       conv_id="bench", embedding=v.tolist(), turn_ids=[f"D{1 + i // 200}:{i}"], created_step=1 + i // 1000,
                       updated_step=1 + i // 1000) for i, v in enumerate(vecs)]


def budget(n: int, pool: np.ndarray | None, dim: int) -> None:
    """Print the map's first computation and its time afterwards on an n-item memory."""
    with tempfile.TemporaryDirectory() as tmp:
        store = LanceStore(str(Path(tmp) / "db"), dim=dim)
        items = synthetic(n, pool, dim)
        for i in range(0, n, 1000):
            store.commit("bench", "bench", "bench", i // 1000 + 1, items[i:i + 1000], [], [], {})
        mem = MemoryView(store, "bench", "bench", "bench")
        t0 = time.perf_counter()
        first = embedding_map(mem)
        t_first = time.perf_counter() - t0
        runs = []
        for _ in range(3):
            other = MemoryView(LanceStore(str(Path(tmp) / "db"), dim=dim), "bench", "bench", "bench")
            t0 = time.perf_counter()
            emap = embedding_map(other)
            t_map = time.perf_counter() - t0
            marks = mark_question(emap, first.vectors[7], list(emap.points["id"][:10]))
            fig = embedding_map_figure(marks["points"], "kind", {"x": marks["x"], "y": marks["y"], "text": "q"})
            fig.to_json()
            runs.append((t_map, time.perf_counter() - t0, emap.computed))
        print(f"budget n={n} {METHOD}: first computation {t_first:.2f} s; after it (fresh store handle, cached "
              f"projection read, question marked, figure built): "
              + ", ".join(f"{total:.2f} s (map {m:.2f} s, computed={c})" for m, total, c in runs)
              + f"; goal <= 3 s: {'met' if max(r[1] for r in runs) <= 3 else 'MISSED'}", flush=True)


def main() -> None:
    """Run the comparison on the memories named, then the budget."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", default="")
    ap.add_argument("--memories", nargs="*", default=[], help="conv_id:system pairs in --store")
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--budget-only", action="store_true", help="skip the PCA/t-SNE comparison (t-SNE takes minutes "
                    "under load); the memories named still give the budget's vectors")
    args = ap.parse_args()
    print(f"load: {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f} on {os.cpu_count()} "
          f"cores; pinned method: {METHOD}", flush=True)
    pool, dim = None, 384
    if args.store:
        from memcore.settings import Settings
        from memcore.workbench import Workbench

        wb = Workbench(Settings(store_uri=args.store, llm_provider="offline"))
        dim = wb.embedder.dim
        methods = () if args.budget_only else ("pca", "tsne")
        pools = [compare(wb, *m.split(":", 1), methods=methods) for m in args.memories]
        pool = np.concatenate([p for p in pools if len(p)]) if any(len(p) for p in pools) else None
    budget(args.n, pool, dim)


if __name__ == "__main__":
    main()
