"""xMemory's retrieve: feeds Stage I / II (.retrieval) from the system's memory, builds the Trace.

The trace is the hierarchy path: semantic pool -> themes -> semantics -> episodes -> messages, with
every candidate's score and the reason it was kept or dropped, and `structure` for the UI
(themes / semantics tables, Stage II probes with H before / after, stop reasons, path).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from memcore.llm.client import LLMClient
from memcore.systems.memory import WorkingMemory
from memcore.systems.xmemory import retrieval as xr
from memcore.systems.xmemory.config import XMemoryConfig
from memcore.systems.xmemory.proxy import PROXY_DOC, TermIndex, support_uncertainty
from memcore.systems.xmemory.structure import ADMITTED, NOT_PROBED
from memcore.types import Candidate, MemoryItem, Question, Trace, TraceItem, Turn

# the system's configured retriever: (kind, query, k, query vector) -> [(item, score)]
SearchFn = Callable[[str, str, int, np.ndarray], list[tuple[MemoryItem, float]]]
KnnKey = tuple[tuple[str, ...], int]


@dataclass
class RetrievalCache:
    """What retrieval keeps between questions; owned by the system, valid until the memory changes.

    knn: (kinds, k) -> (the matrices the graph was built from, the kNN graph), rebuilt when
    WorkingMemory.matrix returns a new matrix; terms: (episode count, the proxy's TermIndex)."""

    knn: dict[KnnKey, tuple[list[np.ndarray], list[dict[int, float]]]] = field(default_factory=dict)
    terms: tuple[int, TermIndex] | None = None


@dataclass
class Retrieval:
    """The collaborators of one xMemory retrieval (not the system): its memory, settings, reader model,
    the conversation's turns, the configured retriever, the query encoder and the cache."""

    memory: WorkingMemory
    cfg: XMemoryConfig
    llm: LLMClient
    turns: list[Turn]
    search: SearchFn
    embed: Callable[[str], np.ndarray]
    cache: RetrievalCache


def members(memory: WorkingMemory, theme_id: str) -> list[str]:
    """Semantic ids of a theme."""
    return list(memory.get(theme_id).metadata.get("members", []))


def _restrict(graph: list[dict[int, float]], idx: list[int]) -> list[dict[int, float]]:
    """The kNN graph restricted to the candidate rows `idx`, re-indexed 0..len(idx)-1."""
    loc = {g: i for i, g in enumerate(idx)}
    return [{loc[u]: w for u, w in graph[g].items() if u in loc} for g in idx]


def _graph(memory: WorkingMemory, cfg: XMemoryConfig, cache: RetrievalCache, kind: str,
           k: int) -> tuple[dict[str, int], list[dict[int, float]]]:
    """Row positions and the kNN graph Stage I walks for `kind` (cached until the memory changes).

    knn_scope "level" (default): one graph per kind (the paper's "selection on kNN graphs", the README's
    semantic kNN graph); "joint": one graph over theme and semantic nodes together (the other reading
    of "a k-NN graph among theme and semantic nodes"). Top-k neighbours per node, edges with sim > 0.
    """
    kinds = ("theme", "semantic") if cfg.knn_scope == "joint" else (kind,)
    mats = [memory.matrix(x) for x in kinds]
    hit = cache.knn.get((kinds, k))
    if hit is None or any(a is not b for a, (_, b) in zip(hit[0], mats, strict=True)):
        hit = cache.knn[(kinds, k)] = ([m for _, m in mats], xr.knn_graph(np.vstack([m for _, m in mats]), k))
    return {x: i for i, x in enumerate(x for ids, _ in mats for x in ids)}, hit[1]


def _term_index(memory: WorkingMemory, all_turns: list[Turn], cache: RetrievalCache) -> TermIndex:
    """The uncertainty proxy's idf over the turns the memory holds (cached until episodes change)."""
    eps = memory.of_kind("episode")
    hit = cache.terms
    if hit is None or hit[0] != len(eps):
        seen = {t for e in eps for t in e.turn_ids}
        turns = [t for t in all_turns if t.turn_id in seen]
        hit = cache.terms = (len(eps), TermIndex.build(
            [t.embed_text for t in turns], {t.speaker for t in turns}))
    return hit[1]


def prime(memory: WorkingMemory, all_turns: list[Turn], cache: RetrievalCache) -> None:
    """Build what retrieval computes the same for every question of this memory (the uncertainty proxy's term
    index) ahead of the first question; the same index the first question would build (cached until episodes
    change), so no answer changes."""
    _term_index(memory, all_turns, cache)


def _select(rt: Retrieval, tr: Trace, stage: str, cand: list[str], raw: list[float], kind: str,
            budget: int) -> tuple[list[str], list[dict]]:
    """Greedy Stage I selection over `cand` (one kind); records candidates; returns picked ids, rows."""
    cfg, mem = rt.cfg, rt.memory
    if cfg.stage_one:
        pos, graph = _graph(mem, cfg, rt.cache, kind, cfg.knn)
        picks = xr.greedy_select(raw, _restrict(graph, [pos[c] for c in cand]), cfg.alpha, budget,
                                 cfg.coverage_target)
        stop = (f"{stage} budget {budget} reached" if len(picks) >= budget else
                f"candidates fully covered after {len(picks)} picks" if picks else "no candidates")
    else:  # the ablation without Stage I: plain similarity, no kNN graph
        picks = xr.top_select(raw, budget)
        stop = f"Stage I off: the top {len(picks)} of {len(cand)} by similarity (budget {budget})"
    greedy = cfg.stage_one
    by_id, rel = {cand[p.index]: (n, p) for n, p in enumerate(picks, start=1)}, xr.minmax(raw)
    rows = []
    for rank, i in enumerate(sorted(range(len(cand)), key=lambda i: -raw[i]), start=1):
        c, it = cand[i], mem.get(cand[i])
        n, p = by_id.get(c, (None, None))
        rows.append({"id": c, "score": round(raw[i], 4), "relevance": round(float(rel[i]), 4),
                     "gain": round(p.score, 4) if p and greedy else None,
                     "coverage": round(p.coverage, 4) if p and greedy else None,
                     "picked": p is not None, "pick_order": n})
        tr.candidates.append(Candidate(stage, c, raw[i], rank, p is not None, list(it.turn_ids),
                                       "" if p else f"not picked in Stage I ({stop})"))
    tr.structure.setdefault("stop", {})[stage] = stop
    return [cand[p.index] for p in picks], rows


def fidelity(cfg: XMemoryConfig) -> dict[str, str]:
    """Which construction choices built this memory: the paper's or a named option (docs/fidelity.md)."""
    return {"episode_prompt": "paper (xmemory_episode)" if cfg.episode_prompt == "paper" else
            "option: shared episode_summary role",
            "episode_vector": "paper (embedding of the episode text)" if cfg.episode_vector == "text" else
            "option: mean of the messages' vectors",
            "semantic_prompt": "paper (xmemory_semantic, no de-duplication)" if cfg.semantic_prompt == "paper" else
            f"option: RecMem's typed facts + de-duplication at cos >= {cfg.dup_cos}"}


def retrieve(rt: Retrieval, q: Question, tr: Trace, reassignment: float, net_reassignment: float) -> Trace:
    """xMemory's top-down retrieval: Stage I (themes, semantics), Stage II (episodes), into the trace `tr`;
    the reassignment ratios are the system's construction statistics, shown in the structure."""
    cfg, mem = rt.cfg, rt.memory
    tr.stages = ["semantic_pool", "themes", "semantics", "episodes", "messages"]
    themes, sems = mem.of_kind("theme"), mem.of_kind("semantic")
    tr.structure = {"reassignment_ratio": round(reassignment, 4),
                    "net_reassignment_ratio": round(net_reassignment, 4), "theme_count": len(themes),
                    "semantic_count": len(sems), "episode_count": len(mem.of_kind("episode")),
                    "knn_graph": f"{cfg.knn_scope}: top-{cfg.knn} neighbours per node, edges with sim > 0"
                    if cfg.stage_one else "not used (Stage I off)", "fidelity": fidelity(cfg)}
    if not cfg.stage_one:
        tr.notes.append("ablation: Stage I (representative selection) off: themes and semantics by similarity")
    if not themes or not sems:
        tr.notes.append("xMemory holds no semantics/themes yet: empty context")
        return tr
    qv, dense = rt.embed(q.text), cfg.retriever == "dense"
    pool = {it.id: float(s) for it, s in rt.search("semantic", q.text, cfg.pool, qv)}  # the store's live items
    for r, (sid, s) in enumerate(pool.items(), start=1):
        tr.candidates.append(Candidate("semantic_pool", sid, s, r, True, list(mem.get(sid).turn_ids),
                                       data={"theme": mem.get(sid).metadata.get("theme", "")}))
    # Stage I: themes holding pooled semantics, then semantics drawn from the chosen themes' members.
    # Query scores: cosine (dense); the retriever's pool score otherwise (a theme: its best member).
    cand_t = [t for t in dict.fromkeys(mem.get(i).metadata.get("theme", "") for i in pool) if t in mem]
    t_raw = [float(mem.vector(t) @ qv) if dense else max(pool.get(s, 0.0) for s in members(mem, t))
             for t in cand_t]
    chosen_t, t_rows = _select(rt, tr, "themes", cand_t, t_raw, "theme", cfg.theme_budget)
    cand_s = [s for t in chosen_t for s in members(mem, t)]
    s_raw = [float(mem.vector(s) @ qv) if dense else pool.get(s, 0.0) for s in cand_s]
    chosen_s, s_rows = _select(rt, tr, "semantics", cand_s, s_raw, "semantic", cfg.semantic_budget)
    for row in t_rows:
        row.update(label=mem.get(row["id"]).metadata.get("label", ""), size=len(members(mem, row["id"])))
    for row in s_rows:
        it = mem.get(row["id"])
        row.update(theme=it.metadata.get("theme", ""), episodes=[e for e in it.sources if e in mem],
                   text=it.text[:160])  # the fact's text (cut) names it on Ask's path
    tr.structure.update(themes=t_rows, semantics=s_rows)
    rel_s = {r["id"]: r["relevance"] for r in s_rows}
    _stage_two(rt, tr, q, qv, chosen_s, rel_s)
    tr.structure["path"] = [{"theme": t, "label": mem.get(t).metadata.get("label", ""),
                             "semantics": [s for s in chosen_s if mem.get(s).metadata.get("theme") == t],
                             "episodes": [e["id"] for e in tr.structure["episodes"] if e["decision"] != "skip"
                                          and e["decision"] != "not probed" and any(
                                              mem.get(s).metadata.get("theme") == t for s in e["parents"])]}
                            for t in chosen_t]
    return tr


def _stage_two(rt: Retrieval, tr: Trace, q: Question, qv: np.ndarray, chosen_s: list[str],
               rel_s: dict[str, float]) -> None:
    """Stage II over episodes linked to the chosen semantics plus the top episodes by the retriever."""
    cfg, mem = rt.cfg, rt.memory
    parent: dict[str, float] = {}
    parents: dict[str, list[str]] = {}
    for s in chosen_s:
        for e in mem.get(s).sources:
            if e in mem and mem.get(e).kind == "episode":
                parent[e] = max(parent.get(e, 0.0), rel_s[s])
                parents.setdefault(e, []).append(s)
    top = [it.id for it, _ in rt.search("episode", q.text, cfg.episode_top, qv)]
    cand = list(dict.fromkeys([*parent, *top]))
    ranked = xr.episode_priority({e: float(mem.vector(e) @ qv) for e in cand}, parent, cfg.parent_weight)
    sem_block = "\n".join(f"[{mem.get(s).metadata.get('date', '')}] {mem.get(s).text}" for s in chosen_s)
    ep_text = {e: f"{mem.get(e).metadata.get('title', '')}: {mem.get(e).text}" for e in cand}
    mode: dict[str, int] = {}

    def scorer(eps: list[str]) -> tuple[float, str]:
        episodic = "\n".join(f"[{mem.get(e).metadata.get('date', '')}] {ep_text[e]}" for e in eps)
        res = rt.llm.run("xmemory_probe", {"question": q.text, "question_date": q.question_date,
                                              "semantic": sem_block or "(none)", "episodic": episodic or "(none)"},
                           stage="retrieval", logprobs=True)
        h = xr.mean_nll(res.logprobs, cfg.answer_tokens)
        kind = "proxy" if h is None else "logprobs"
        mode[kind] = mode.get(kind, 0) + 1
        if h is None:
            h = support_uncertainty(q.text, f"{sem_block}\n{episodic}", _term_index(mem, rt.turns, rt.cache))
        return h, res.error

    if not cfg.stage_two:
        _admit_by_priority(rt, tr, ranked, parent, parents, chosen_s, rel_s)
        return
    st = xr.stage_two(ranked, scorer, cfg)
    probes = {p.id: p for p in st.probes}
    turns = {t.turn_id: t for t in rt.turns}
    lines = _semantic_lines(mem, tr, chosen_s, rel_s, "Stage I" if cfg.stage_one else "by similarity")
    rows, messages = [], []
    for rank, (e, prio) in enumerate(ranked, start=1):
        it, p = mem.get(e), probes.get(e)
        row = p.to_dict() if p else {"id": e, "priority": round(prio, 4), "decision": "not probed"}
        rows.append({**row, "parent": round(parent.get(e, 0.0), 4), "parents": parents.get(e, []),
                     "title": it.metadata.get("title", "")})
        kept, expand = bool(p and p.decision != "skip"), bool(p and p.decision == "include+messages")
        why = "" if kept else (f"skipped: gain {p.gain:.3f} <= {cfg.include_gain}" if p else f"not probed ({st.stop})")
        tr.candidates.append(Candidate("episodes", e, prio, rank, kept, list(it.turn_ids), why,
                                       {"gain": round(p.gain, 4) if p else None}))
        if not kept:
            continue
        date = it.metadata.get("date", "")
        tr.items.append(TraceItem(e, "episode", ep_text[e], p.gain, list(it.turn_ids), f"Stage II: gain {p.gain:+.3f}",
                                  rank, {"date": date}))
        lines.append(f"[{date}] {ep_text[e]}")
        for tid in it.turn_ids:
            tr.candidates.append(Candidate("messages", tid, p.gain, rank, expand, [tid], "" if expand else
                                           f"{e} gain {p.gain:.3f} <= {cfg.message_gain}: messages not added",
                                           {"episode": e}))
            t = turns.get(tid)
            if expand and t is not None:
                messages.append(tid)
                tr.items.append(TraceItem(tid, "turn", t.embed_text, p.gain, [tid],
                                          f"messages of {e}", rank, {"date": t.session_date, "speaker": t.speaker}))
                lines.append(f"    [{t.session_date}] {t.speaker}: {t.content}")
    tr.context = "\n".join(lines)
    tr.structure.update(episodes=rows, messages=messages, H0=round(st.H0, 4),
                        thresholds={"include_gain": cfg.include_gain, "message_gain": cfg.message_gain})  # this run's
    tr.structure["stop"]["episodes"] = st.stop
    tr.structure["uncertainty"] = "logprobs" if "proxy" not in mode else (
        "proxy: " + PROXY_DOC if "logprobs" not in mode else f"mixed {mode}; proxy: {PROXY_DOC}")
    if "proxy" in mode:
        tr.notes.append(f"Stage II uncertainty: the reader gave no token logprobs ({rt.llm.label}); "
                        f"used the {PROXY_DOC}")
    tr.errors.extend(sorted({p.error for p in st.probes if p.error}))


def _semantic_lines(mem: WorkingMemory, tr: Trace, chosen_s: list[str], rel_s: dict[str, float],
                    how: str = "Stage I") -> list[str]:
    """The chosen semantics as trace items (`how` they were chosen); the context's lines up to the episodic
    header."""
    lines = ["Semantic memories:"]
    for rank, s in enumerate(chosen_s, start=1):
        it = mem.get(s)
        tr.items.append(TraceItem(s, "semantic", it.text, rel_s[s], list(it.turn_ids),
                                  f"{how}: {it.metadata.get('theme', '')}", rank, {"date": it.metadata.get("date", "")}))
        lines.append(f"[{it.metadata.get('date', '')}] {it.text}")
    return [*lines, "", "Episodic memories:"]


def _admit_by_priority(rt: Retrieval, tr: Trace, ranked: list[tuple[str, float]], parent: dict[str, float],
                       parents: dict[str, list[str]], chosen_s: list[str], rel_s: dict[str, float]) -> None:
    """The ablation without Stage II (Fig. 3 Memory-only / +RepSel): no probe and no reader call; the top
    `max_episodes` episodes by the same priority are admitted, without their raw messages."""
    cfg, mem = rt.cfg, rt.memory
    lines = _semantic_lines(mem, tr, chosen_s, rel_s, "Stage I" if cfg.stage_one else "by similarity")
    rows = []
    stop = f"Stage II off: the top {min(cfg.max_episodes, len(ranked))} of {len(ranked)} episodes by priority"
    for rank, (e, prio) in enumerate(ranked, start=1):
        it, kept = mem.get(e), rank <= cfg.max_episodes
        rows.append({"id": e, "priority": round(prio, 4), "decision": ADMITTED if kept else NOT_PROBED,
                     "parent": round(parent.get(e, 0.0), 4), "parents": parents.get(e, []),
                     "title": it.metadata.get("title", "")})
        tr.candidates.append(Candidate("episodes", e, prio, rank, kept, list(it.turn_ids),
                                       "" if kept else f"ranked below the top {cfg.max_episodes} (Stage II off)"))
        if kept:
            text, date = f"{it.metadata.get('title', '')}: {it.text}", it.metadata.get("date", "")
            tr.items.append(TraceItem(e, "episode", text, prio, list(it.turn_ids), f"by priority {prio:.3f}",
                                      rank, {"date": date}))
            lines.append(f"[{date}] {text}")
    tr.context = "\n".join(lines)
    tr.structure.update(episodes=rows, messages=[])
    tr.structure["stop"]["episodes"] = stop
    tr.notes.append("ablation: Stage II (uncertainty-gated inclusion) off: no probes; " + stop)
