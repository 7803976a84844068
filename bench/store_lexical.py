"""Lexical/hybrid search in the store: latency, snapshot (re)build cost, and isolation from other conversations.

    nice -n 5 .venv/bin/python bench/store_lexical.py ../shared/datasets/locomo/conv-26.json \\
        ../shared/datasets/locomo/conv-30.json

The first file is the measured conversation; the others are loaded into the same store
afterwards to show whether its results move. Vectors come from a 384-d hashing embedder
(search latency does not depend on the vector values; MiniLM would only add embedding time).
"Pooled" is the previous behaviour, one FTS index over the whole turns table with a
conversation prefilter, run here with plain LanceDB calls for comparison.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lancedb.index import FTS

from memcore.datasets import load_dataset
from memcore.embed import HashingEmbedder
from memcore.store import LanceStore
from memcore.store.schema import match
from memcore.store.search import fts_query

EMB = HashingEmbedder(384)


def ms(f) -> float:
    """Wall milliseconds of one call."""
    t0 = time.perf_counter()
    f()
    return (time.perf_counter() - t0) * 1000


def load(store: LanceStore, conv) -> None:
    """Store a conversation's turns with hashing vectors."""
    store.save_turns(conv.turns, EMB.embed([t.embed_text for t in conv.turns]))


def pooled(store: LanceStore, conv_id: str, q: str, k: int) -> list[tuple[str, float]]:
    """The previous lexical search: one FTS index over every conversation's turns, prefiltered."""
    t = store.table("turns")
    if not any("text" in (ix.columns or []) for ix in t.list_indices()):
        t.create_index("text", config=FTS(with_position=False), replace=True)
    rows = t.search(fts_query(q), query_type="fts").where(match(conv_id=conv_id), prefilter=True) \
        .limit(k).to_list()
    return [(r["turn_id"], round(float(r["_score"]), 5)) for r in rows]


def scoped(store: LanceStore, conv_id: str, q: str, k: int, mode: str = "lexical") -> list[tuple[str, float]]:
    """The store's lexical (or hybrid) search."""
    return [(r["turn_id"], round(s, 5)) for r, s in store.search_turns(conv_id, q, EMB.embed([q])[0], k, mode)]


def main() -> None:
    """Print latency, build cost and how many questions' top-k change when other conversations arrive."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("files", nargs="+")
    p.add_argument("-k", type=int, default=20)
    p.add_argument("--repeat", type=int, default=5, help="rebuilds timed")
    a = p.parse_args()
    convs = [c for f in a.files for c in load_dataset(f)]
    main_conv, others = convs[0], convs[1:]
    qs = [q.text for q in main_conv.questions]
    root = Path(tempfile.mkdtemp(prefix="memcore-lex-"))
    try:
        st = LanceStore(str(root / "db"), dim=EMB.dim)
        load(st, main_conv)
        print(f"{main_conv.id}: {len(main_conv.turns)} turns, {len(qs)} questions, k={a.k}")
        build = ms(lambda: scoped(st, main_conv.id, qs[0], a.k))
        reuse = [ms(lambda: scoped(LanceStore(str(root / "db"), dim=EMB.dim), main_conv.id, qs[0], a.k))
                 for _ in range(a.repeat)]
        rebuild = []
        for i in range(a.repeat):  # the scope's content changes: one turn re-saved with other text
            t = main_conv.turns[i]
            st.save_turns([replace(t, text=t.text + f" edit{i}")], EMB.embed([f"edit{i}"]))
            rebuild.append(ms(lambda: scoped(st, main_conv.id, qs[0], a.k)))
        load(st, main_conv)  # back to the original text
        scoped(st, main_conv.id, qs[0], a.k)
        print(f"snapshot: first build {build:.0f} ms; reuse by a new handle (read+hash+open) p50 "
              f"{statistics.median(reuse):.0f} ms; rebuild after an edit p50 {statistics.median(rebuild):.0f} ms")
        for mode in ("lexical", "hybrid"):
            lat = [ms(lambda q=q, m=mode: scoped(st, main_conv.id, q, a.k, m)) for q in qs]
            print(f"warm {mode:<7} p50 {statistics.median(lat):.1f} ms  p90 {statistics.quantiles(lat, n=10)[8]:.1f} ms")
        lat = [ms(lambda q=q: pooled(st, main_conv.id, q, a.k)) for q in qs]
        print(f"warm pooled  p50 {statistics.median(lat):.1f} ms (previous: one index per table)")
        before_scoped = [scoped(st, main_conv.id, q, a.k) for q in qs]
        before_hybrid = [scoped(st, main_conv.id, q, a.k, "hybrid") for q in qs]
        before_pooled = [pooled(st, main_conv.id, q, a.k) for q in qs]
        for c in others:
            load(st, c)
        recheck = ms(lambda: scoped(st, main_conv.id, qs[0], a.k))
        print(f"after loading {[c.id for c in others]}: first search re-checks the scope in {recheck:.0f} ms")
        st.table("turns").create_index("text", config=FTS(with_position=False), replace=True)  # pooled, reindexed
        for label, before, fn in (("scoped lexical", before_scoped, lambda q: scoped(st, main_conv.id, q, a.k)),
                                  ("scoped hybrid", before_hybrid,
                                   lambda q: scoped(st, main_conv.id, q, a.k, "hybrid")),
                                  ("pooled lexical", before_pooled, lambda q: pooled(st, main_conv.id, q, a.k))):
            after = [fn(q) for q in qs]
            ids = sum([i for i, _ in x] != [i for i, _ in y] for x, y in zip(before, after, strict=True))
            sc = sum(x != y for x, y in zip(before, after, strict=True))
            print(f"{label:<15} questions whose top-{a.k} changed: ids/order {ids}/{len(qs)}, "
                  f"ids or scores {sc}/{len(qs)}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
