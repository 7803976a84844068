"""MemWeaver dual-channel retrieval (paper 004, section 4.4; README budgets).

1. Seed triples: top-6 relation items by the configured retriever over "src rel tgt".
2. Expansion: every semantic relation entering or leaving a seed entity (1 hop, both ways);
   candidates are scored by cosine to the query and the top 36 kept (seeds always kept, so a
   lexical seed is not lost to the dense filter).
   Selection (Eq. 10, `triple_selector`, on by default as in the paper): the LLM selector
   (`mw_select`) picks the useful triples among those 36, and the `select_backfill` (6) best of
   the rest (seeds first, then by cosine) are added back "to avoid overly narrow contexts". The
   trace holds the selector's choice: structure["triples_selected"] (relation ids) and
   structure["triple_selector"] = {enabled, selected, backfill, candidates, setting}.
   triple_selector=False is the public code's choice: all 36 kept triples go to the context.
3. Passages (6): 2 forced from the global top-18 passage search (configured retriever), then
   passages linked by `contains` edges to the kept triples' entities (by cosine), then
   backfill from the global list, then from the remaining graph-linked ones.
4. Experiences (6): experiences with `about` edges to those entities, by cosine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from memcore.llm.client import LLMClient
from memcore.systems.memory import WorkingMemory
from memcore.systems.memweaver.config import MemWeaverConfig, ablation_notes
from memcore.systems.memweaver.graph import GraphMemory
from memcore.types import Candidate, MemoryItem, Question, Trace, TraceItem

# the system's configured retriever: (kind, query, k, query vector) -> [(item, score)]
SearchFn = Callable[[str, str, int, np.ndarray], list[tuple[MemoryItem, float]]]

MAX_CANDIDATES = 200  # candidates recorded per stage (the rest are counted in the structure)


def _cos(memory: WorkingMemory, item_id: str, qvec: np.ndarray) -> float:
    return float(memory.vector(item_id) @ qvec) if item_id in memory else 0.0


def triple_text(it: MemoryItem) -> str:
    """A relation as shown in the context: "src | rel | tgt | time: ... | condition: ..."."""
    md = it.metadata
    parts = [md.get("src", ""), md.get("rel", ""), md.get("tgt", "")]
    if md.get("time"):
        parts.append(f"time: {md['time']}")
    if md.get("condition"):
        parts.append(f"condition: {md['condition']}")
    return " | ".join(parts)


def retrieve(q: Question, tr: Trace, qvec: np.ndarray, *, memory: WorkingMemory, graph: GraphMemory,
             cfg: MemWeaverConfig, search: SearchFn, llm: LLMClient | None = None) -> Trace:
    """Fill a trace with kept triples, passages and experiences, their candidates and the subgraph; `llm`
    runs the Eq. 10 triple selector (required when `cfg.triple_selector` is on)."""
    selector_on = cfg.triple_selector and cfg.graph_memory
    tr.stages = [*(["seed_triples", "expanded_triples"] if cfg.graph_memory else []),
                 *(["selected_triples"] if selector_on else []), "passages",
                 *(["experiences"] if cfg.experience_memory else [])]
    tr.notes += ablation_notes(cfg)
    # 1. seeds
    # the store's live relations; w/o GM: no triples
    hits = search("relation", q.text, cfg.seed_triples * 2, qvec) if cfg.graph_memory else []
    seeds = [it.id for it, _ in hits[: cfg.seed_triples]]
    tr.candidates += [Candidate("seed_triples", it.id, s, r, it.id in seeds, list(it.turn_ids),
                                "" if it.id in seeds else f"below the top {cfg.seed_triples} seeds",
                                {"text": it.text}) for r, (it, s) in enumerate(hits, 1)]
    # 2. expansion
    cands: dict[str, None] = dict.fromkeys(seeds)
    frontier = {e for r in seeds for e in (memory.get(r).metadata["src_id"], memory.get(r).metadata["tgt_id"])}
    seen_ents = set(frontier)
    for _ in range(cfg.hops):
        nxt: set[str] = set()
        for e in sorted(frontier):
            for rid in graph.relation_edges(e):
                if rid in memory and rid not in cands:
                    cands[rid] = None
                    md = memory.get(rid).metadata
                    nxt |= {md["src_id"], md["tgt_id"]} - seen_ents
        seen_ents |= nxt
        frontier = nxt
    scored = sorted(((rid, _cos(memory, rid, qvec)) for rid in cands), key=lambda x: (-x[1], x[0]))
    kept = list(seeds)
    for rid, _ in scored:
        if len(kept) >= cfg.keep_triples:
            break
        if rid not in kept:
            kept.append(rid)
    kept_set = set(kept)
    score = dict(scored)
    tr.candidates += [Candidate("expanded_triples", rid, s, r, rid in kept_set, list(memory.get(rid).turn_ids),
                                "" if rid in kept_set else f"below the top {cfg.keep_triples} by cosine",
                                {"seed": rid in seeds, "text": memory.get(rid).text})
                      for r, (rid, s) in enumerate(scored[:MAX_CANDIDATES], 1)]
    kept.sort(key=lambda r: (r not in seeds, -score[r], r))
    selector = None
    if selector_on:
        if llm is None:
            raise ValueError("memweaver triple_selector=True needs the LLM client (or set triple_selector=False)")
        kept, selector = select_triples(q, tr, memory, cfg, llm, kept, score)
    ents = list(dict.fromkeys(e for r in kept for e in (memory.get(r).metadata["src_id"],
                                                          memory.get(r).metadata["tgt_id"])))
    # 3. passages
    passages, why, pscores = _passages(memory, graph, cfg, search, q, qvec, ents, tr)
    # 4. experiences
    pool = graph.attached(ents, "experience") if cfg.graph_memory else [x.id for x in memory.of_kind("experience")]
    exps = sorted(((x, _cos(memory, x, qvec)) for x in pool if x in memory),
                  key=lambda x: (-x[1], x[0])) if cfg.experience_memory else []  # w/o ExpM: none
    chosen_x = [x for x, _ in exps[: cfg.experiences]]
    tr.candidates += [Candidate("experiences", x, s, r, x in chosen_x, list(memory.get(x).turn_ids),
                                "" if x in chosen_x else f"below the top {cfg.experiences} by cosine")
                      for r, (x, s) in enumerate(exps[:MAX_CANDIDATES], 1)]
    # items, context, structure
    rank = 0
    for rid in kept:
        it, rank = memory.get(rid), rank + 1
        tr.items.append(TraceItem(rid, "relation", triple_text(it), score[rid], list(it.turn_ids),
                                  "seed triple" if rid in seeds else f"{cfg.hops}-hop expansion", rank,
                                  {"date": it.metadata.get("date", ""), "time": it.metadata.get("time", "")}))
    for pid in passages:
        it, rank = memory.get(pid), rank + 1
        tr.items.append(TraceItem(pid, "passage", it.text, pscores[pid], list(it.turn_ids), why[pid], rank,
                                  {"speaker": it.metadata.get("speaker", ""), "date": ""}))
    xs = dict(exps)
    for x in chosen_x:
        it, rank = memory.get(x), rank + 1
        tr.items.append(TraceItem(x, "experience", it.text, xs[x], list(it.turn_ids), "about edge", rank,
                                  {"type": it.metadata.get("type", ""), "date": ""}))
    tr.context = _context(memory, kept, passages, chosen_x)
    tr.structure = _structure(memory, graph, cfg, kept, seeds, score, passages, why, pscores, chosen_x, xs, len(cands))
    tr.structure["fidelity"] = fidelity(cfg)
    if selector is not None:
        tr.structure["triple_selector"] = selector
        tr.structure["triples_selected"] = list(selector["selected"])
    else:
        tr.structure["triple_selector"] = {"enabled": False, "selected": [], "backfill": [],
                                           "setting": "option: no LLM selector (the public code's choice)"
                                           if cfg.graph_memory else "w/o GM: no triples to select"}
    if cfg.graph_memory:
        tr.notes.append("triples beyond the seeds are filtered by cosine whatever the retriever; seeds always kept"
                        + ("; then the Eq. 10 LLM selector and the backfill" if selector is not None else ""))
    if not kept and cfg.graph_memory:
        tr.notes.append("no relation matched: context = passages only")
    return tr


def fidelity(cfg: MemWeaverConfig) -> dict[str, str]:
    """Which choices built and searched this memory: the paper's or a named option (docs/fidelity.md)."""
    return {"buffer": f"paper (re-induction when the add buffer reaches {cfg.buffer})" if cfg.buffer == 4 else
            f"option: add buffer {cfg.buffer} (the public code: 5)",
            "experience_min_sources": "paper (supported by multiple turns)" if cfg.experience_min_sources >= 2 else
            "option: single-source experiences accepted",
            "triple_selector": "paper (Eq. 10 LLM selector + backfill)" if cfg.triple_selector else
            "option: no LLM selector (the public code's choice)"}


def select_triples(q: Question, tr: Trace, memory: WorkingMemory, cfg: MemWeaverConfig, llm: LLMClient,
                   kept: list[str], score: dict[str, float]) -> tuple[list[str], dict[str, Any]]:
    """Eq. 10: the selector's choice among the kept triples plus the `select_backfill` best others (seeds
    first, then by cosine), in `kept` order; records the "selected_triples" candidates."""
    if not kept:
        return kept, {"enabled": True, "selected": [], "backfill": [], "candidates": 0, "setting": "paper (Eq. 10)"}
    res = llm.run("mw_select", {"question": q.text, "triples": [f"{r} | {triple_text(memory.get(r))}" for r in kept]},
                  stage="retrieval")
    if res.error:
        tr.errors.append(res.error)
    known = set(kept)
    chosen = [r for r in dict.fromkeys(res.output.selected) if r in known]
    backfill = [r for r in kept if r not in set(chosen)][: cfg.select_backfill]
    final = set(chosen) | set(backfill)
    for rank, r in enumerate(kept, 1):
        why = "" if r in final else f"not chosen by the selector and below the {cfg.select_backfill} backfill triples"
        tr.candidates.append(Candidate("selected_triples", r, score[r], rank, r in final, list(memory.get(r).turn_ids),
                                       why, {"selected": r in chosen, "backfill": r in backfill}))
    return [r for r in kept if r in final], {
        "enabled": True, "selected": chosen, "backfill": backfill, "candidates": len(kept),
        "reason": res.output.reason, "setting": "paper (Eq. 10)", "engine": llm.label}


def _passages(memory: WorkingMemory, graph: GraphMemory, cfg: MemWeaverConfig, search: SearchFn, q: Question,
              qvec: np.ndarray, ents: list[str], tr: Trace) -> tuple[list[str], dict[str, str], dict[str, float]]:
    glob = [(it.id, s) for it, s in search("passage", q.text, cfg.global_pool, qvec)]
    linked = sorted(((p, _cos(memory, p, qvec)) for p in graph.attached(ents, "passage") if p in memory),
                    key=lambda x: (-x[1], x[0]))
    chosen: list[str] = []
    why: dict[str, str] = {}
    turns: set[str] = set()

    def take(pool: list[tuple[str, float]], label: str, limit: int) -> None:
        for pid, _ in pool:
            if len(chosen) >= limit:
                return
            t = memory.get(pid).metadata.get("turn", pid)
            if pid in why or t in turns:
                continue
            chosen.append(pid)
            why[pid] = label
            turns.add(t)

    take(glob, "forced-global", cfg.forced_global)
    take(linked, "graph-linked", cfg.passages)
    take(glob, "backfill", cfg.passages)
    take(linked, "backfill", cfg.passages)
    scores = {**dict(linked), **dict(glob)}
    pool = list(dict.fromkeys([p for p, _ in glob] + [p for p, _ in linked]))[:MAX_CANDIDATES]
    for r, pid in enumerate(pool, 1):
        src = "global" if pid in dict(glob) else "graph"
        tr.candidates.append(Candidate("passages", pid, scores[pid], r, pid in why, list(memory.get(pid).turn_ids),
                                       "" if pid in why else f"not among the {cfg.passages} passages",
                                       {"why": why.get(pid, ""), "pool": src}))
    return chosen, why, scores


def _context(memory: WorkingMemory, kept: list[str], passages: list[str], exps: list[str]) -> str:
    blocks = []
    if kept:
        blocks.append("Knowledge graph (source | relation | target | time | condition):\n"
                      + "\n".join(f"- {triple_text(memory.get(r))}" for r in kept))
    if passages:
        blocks.append("Passages:\n" + "\n".join(f"- {memory.get(p).text}" for p in passages))
    if exps:
        blocks.append("Experiences:\n" + "\n".join(
            f"- ({memory.get(x).metadata.get('type', 'fact')}) {memory.get(x).text}" for x in exps))
    return "\n\n".join(blocks)


def _structure(memory: WorkingMemory, g: GraphMemory, cfg: MemWeaverConfig, kept: list[str], seeds: list[str],
               score: dict[str, float], passages: list[str], why: dict[str, str], pscores: dict[str, float],
               exps: list[str], xs: dict[str, float], n_cands: int) -> dict[str, Any]:
    seed_ents = {e for r in seeds for e in (memory.get(r).metadata["src_id"], memory.get(r).metadata["tgt_id"])}
    nodes: dict[str, dict[str, Any]] = {}
    edges = []
    for r in kept:
        md = memory.get(r).metadata
        for e in (md["src_id"], md["tgt_id"]):
            nodes.setdefault(e, {"id": e, "label": g.label(e), "kind": "entity", "seed": e in seed_ents})
        edges.append({"id": r, "source": md["src_id"], "target": md["tgt_id"], "relation": md.get("rel", ""),
                      "time": md.get("time", ""), "seed": r in seeds, "score": round(score[r], 4)})
    for kind, ids, sc in (("passage", passages, pscores), ("experience", exps, xs)):
        field = "entities" if kind == "passage" else "about"
        for i in ids:
            it = memory.get(i)
            nodes[i] = {"id": i, "label": it.metadata.get("turn", "") or it.text[:40], "kind": kind, "seed": False}
            for e in it.metadata.get(field, []):
                if e in nodes and nodes[e]["kind"] == "entity":
                    edges.append({"id": f"{i}->{e}", "source": i, "target": e,
                                  "relation": "contains" if kind == "passage" else "about", "time": "",
                                  "seed": False, "score": round(sc.get(i, 0.0), 4)})
    return {
        "subgraph": {"nodes": list(nodes.values()), "edges": edges},
        "passages": [{"id": p, "why": why[p], "score": round(pscores[p], 4),
                      "turn": memory.get(p).metadata.get("turn", "")} for p in passages],
        "experiences": [{"id": x, "score": round(xs[x], 4), "type": memory.get(x).metadata.get("type", ""),
                         "about": memory.get(x).metadata.get("about", [])} for x in exps],
        "budgets": {"seed_triples": cfg.seed_triples, "hops": cfg.hops, "triples": cfg.keep_triples,
                    "passages": cfg.passages, "forced_global": cfg.forced_global, "global_pool": cfg.global_pool,
                    "experiences": cfg.experiences,
                    "used": {"seed_triples": len(seeds), "triples": len(kept), "passages": len(passages),
                             "experiences": len(exps), "expansion_candidates": n_cands}},
        "retriever": cfg.retriever,
    }
