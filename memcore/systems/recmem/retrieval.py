"""RecMem retrieval: fixed budgets from the subconscious, episodic and semantic stores."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from memcore.systems.base import candidates_from, item_trace_item
from memcore.systems.recmem.config import RecMemConfig
from memcore.types import MemoryItem, Question, Trace, TraceItem

# the system's configured retriever: (kind, query, k, query vector) -> [(item, score)]
SearchFn = Callable[[str, str, int, np.ndarray], list[tuple[MemoryItem, float]]]

# origin (store name shown in the trace) -> memory kind
STORES = {"subconscious": "unit", "episodic": "episode", "semantic": "semantic"}
SECTIONS = {
    "semantic": "Semantic facts (atomic facts distilled from recurring topics)",
    "episodic": "Episodes (dated narratives of recurring topics)",
    "subconscious": "Raw exchanges (verbatim, not consolidated)",
}


def retrieve_three_stores(question: Question, tr: Trace, qvec: np.ndarray, cfg: RecMemConfig, search: SearchFn,
                          exchanges: dict[str, int], kind_counts: Callable[[], dict[str, int]]) -> Trace:
    """Top k_sub units, k_epi episodes and k_sem facts with the configured retriever, into the trace `tr`;
    `exchanges` are the system's construction counters and `kind_counts` the stored items per kind."""
    budgets = {"subconscious": cfg.k_sub, "episodic": cfg.k_epi, "semantic": cfg.k_sem}
    chosen: dict[str, list[TraceItem]] = {}
    for origin, kind in STORES.items():
        k = budgets[origin]
        hits = search(kind, question.text, max(k, cfg.pool), qvec) if k > 0 else []
        ranked = [item_trace_item(it, s, i + 1, origin) for i, (it, s) in enumerate(hits)]
        for ti, (it, _) in zip(ranked, hits, strict=True):
            ti.metadata.update(store=origin, title=it.metadata.get("title", ""),
                               fact_type=it.metadata.get("fact_type", ""))
        chosen[origin] = ranked[:k]
        tr.candidates += candidates_from(origin, ranked, {t.id for t in chosen[origin]},
                                         reason=f"ranked below the {origin} budget k={k}")
    tr.stages = list(STORES)
    tr.items = chosen["semantic"] + chosen["episodic"] + chosen["subconscious"]
    counts = kind_counts()
    tr.structure = {
        "stores": {origin: counts.get(kind, 0) for origin, kind in STORES.items()},
        "budgets": {"k_sub": cfg.k_sub, "k_epi": cfg.k_epi, "k_sem": cfg.k_sem},
        "retrieved": {origin: len(items) for origin, items in chosen.items()},
        "exchanges": dict(exchanges),
    }
    off = [f"{origin} (budget 0)" for origin, k in budgets.items() if k == 0]  # the w/o ablations (Fig. 2)
    if off:
        tr.notes.append(f"ablation: not retrieved from {', '.join(off)}")
    if not any(chosen.values()):
        tr.notes.append("all three stores are empty for this conversation: ingest it first" if not off else
                        "nothing retrieved: the stores with a budget returned nothing")
    tr.context = render_sections(chosen)
    return tr


def render_sections(chosen: dict[str, list[TraceItem]]) -> str:
    """The answer context: one headed block per store, each line dated."""
    blocks = []
    for origin in ("semantic", "episodic", "subconscious"):
        items = chosen.get(origin, [])
        if not items:
            continue
        lines = []
        for it in items:
            date = it.metadata.get("date", "")
            text = it.text.replace("\n", " | ")
            lines.append(f"[{date}] {text}" if date else text)
        blocks.append(f"## {SECTIONS[origin]}\n" + "\n".join(lines))
    return "\n\n".join(blocks)
