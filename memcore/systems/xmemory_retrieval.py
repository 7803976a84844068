"""xMemory retrieval: Stage I representative selection on kNN graphs, Stage II uncertainty-gated inclusion.

Pure functions over numpy arrays and callables, so both stages are testable without a store
or a model. The system (memcore/systems/xmemory.py) feeds them and turns the results into a Trace.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from memcore.types import Candidate, Question, Trace, TraceItem


def knn_graph(M: np.ndarray, k: int = 10) -> list[dict[int, float]]:
    """For each row of M (unit vectors), its k most similar other rows with similarity > 0."""
    M = np.asarray(M, dtype=np.float64)
    n = len(M)
    if n == 0:
        return []
    S = M @ M.T
    np.fill_diagonal(S, -np.inf)
    out: list[dict[int, float]] = []
    for i in range(n):
        order = np.argsort(-S[i], kind="stable")[: min(k, n - 1)]
        out.append({int(j): float(S[i, j]) for j in order if S[i, j] > 0})
    return out


def minmax(x: Sequence[float]) -> np.ndarray:
    """Scores scaled to [0, 1] (all 1.0 when they are equal)."""
    a = np.asarray(x, dtype=np.float64)
    if a.size == 0:
        return a
    lo, hi = float(a.min()), float(a.max())
    return np.ones_like(a) if hi - lo < 1e-12 else (a - lo) / (hi - lo)


@dataclass
class Pick:
    """One greedy step of Stage I."""

    index: int
    score: float  # alpha * coverage / Z + (1 - alpha) * relevance
    coverage: float  # newly covered neighbour similarity / Z
    relevance: float  # min-max normalised query score
    covered: float  # covered share of the candidates after this pick


def greedy_select(relevance: Sequence[float], nbrs: list[dict[int, float]], alpha: float = 0.7,
                  budget: int = 5, target: float = 1.0) -> list[Pick]:
    """Paper Eq. 4 over candidates 0..n-1: pick argmax alpha*sum_{u in new}(w_iu)/Z + (1-alpha)*s~(q,i).

    `relevance` are raw query scores (min-max normalised here); `nbrs[i]` maps candidate index ->
    edge similarity (> 0) within the candidate set; a node covers itself with weight 1. Z is the
    largest initial coverage mass, so the coverage term lies in [0, 1]. Stops when the covered
    share reaches `target` or `budget` picks are made.
    """
    n = len(relevance)
    if n == 0:
        return []
    rel = minmax(relevance)
    reach = [{i: 1.0, **{u: w for u, w in nbrs[i].items() if u != i and 0 <= u < n}} for i in range(n)]
    z = max(sum(r.values()) for r in reach) or 1.0
    covered: set[int] = set()
    picks: list[Pick] = []
    while len(picks) < budget and len(covered) < n:
        best: tuple[float, int, float] | None = None
        taken = {p.index for p in picks}
        for i in range(n):
            if i in taken:
                continue
            cov = sum(w for u, w in reach[i].items() if u not in covered) / z
            score = alpha * cov + (1 - alpha) * float(rel[i])
            if best is None or score > best[0] + 1e-12:
                best = (score, i, cov)
        if best is None:
            break
        score, i, cov = best
        covered.update(reach[i])
        picks.append(Pick(i, score, cov, float(rel[i]), len(covered) / n))
        if len(covered) / n >= target:
            break
    return picks


# ---------------------------------------------------------------- Stage II
@dataclass
class StageTwoConfig:
    """Stage II thresholds (xMemory paper defaults as recorded in papers/README.md)."""

    probe: int = 10  # episodes probed (top by priority)
    max_episodes: int = 10  # stop once this many are included
    include_gain: float = -0.4  # include the episode when gain > this
    message_gain: float = 0.25  # also include its raw messages when gain > this
    low_gain: float = 0.0  # a probe is low-gain when gain <= this (it did not reduce uncertainty)
    early_window: int = 3  # one low-gain probe among the first `early_window` probes stops
    max_low: int = 2  # ... and so does the second low-gain probe overall


@dataclass
class Probe:
    """One Stage II probe: an episode's effect on the reader's uncertainty and what was decided."""

    id: str
    priority: float
    H_before: float
    H_after: float
    gain: float
    decision: str  # include | include+messages | skip
    stop: str = ""  # why probing stopped after this probe ("" when it went on)
    error: str = ""

    def to_dict(self) -> dict:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}


@dataclass
class StageTwoResult:
    """Probes in order, the baseline uncertainty, and the episode ids not probed."""

    H0: float
    probes: list[Probe] = field(default_factory=list)
    unprobed: list[str] = field(default_factory=list)
    stop: str = ""


Scorer = Callable[[list[str]], tuple[float, str]]  # episode ids in context -> (uncertainty H, error)


def stage_two(ranked: list[tuple[str, float]], scorer: Scorer, cfg: Any = None) -> StageTwoResult:
    """Uncertainty-gated inclusion over episodes ranked by priority.

    H0 = scorer([]) is the uncertainty with semantics only; each probed episode e gets
    gain = H0 - scorer([e]). Include when gain > include_gain; with messages when gain >
    message_gain. Stop after `max_episodes` inclusions, a low-gain probe among the first
    `early_window`, or `max_low` low-gain probes. `cfg`: a StageTwoConfig or anything with its fields.
    """
    cfg = cfg or StageTwoConfig()
    h0, _ = scorer([])
    res = StageTwoResult(H0=h0)
    lows = included = 0
    for n, (eid, prio) in enumerate(ranked[: cfg.probe], start=1):
        h1, err = scorer([eid])
        gain = h0 - h1
        decision = "skip"
        if gain > cfg.include_gain:
            decision = "include+messages" if gain > cfg.message_gain else "include"
            included += 1
        p = Probe(eid, prio, h0, h1, gain, decision, error=err)
        res.probes.append(p)
        if gain <= cfg.low_gain:
            lows += 1
        if included >= cfg.max_episodes:
            p.stop = f"{included} episodes included (budget)"
        elif lows and n <= cfg.early_window:
            p.stop = f"low-gain probe (gain {gain:.3f} <= {cfg.low_gain}) among the first {cfg.early_window}"
        elif lows >= cfg.max_low:
            p.stop = f"{lows} low-gain probes"
        if p.stop:
            res.stop = p.stop
            break
    probed = {p.id for p in res.probes}
    res.unprobed = [eid for eid, _ in ranked if eid not in probed]
    if not res.stop:
        res.stop = "all candidates probed" if len(ranked) <= cfg.probe else f"probe budget {cfg.probe} reached"
    return res


def mean_nll(logprobs: Sequence[float] | None, max_tokens: int = 20) -> float | None:
    """Mean negative log-likelihood of the first `max_tokens` generated tokens (None without logprobs)."""
    if not logprobs:
        return None
    lp = [float(x) for x in list(logprobs)[:max_tokens] if x is not None and math.isfinite(float(x))]
    return -sum(lp) / len(lp) if lp else None


def episode_priority(vec_scores: dict[str, float], parent_scores: dict[str, float],
                     parent_weight: float = 0.5) -> list[tuple[str, float]]:
    """priority = min-max(vector score) + parent_weight * best parent-semantic score, highest first."""
    ids = list(vec_scores)
    if not ids:
        return []
    norm = minmax([vec_scores[i] for i in ids])
    pri = {i: float(v) + parent_weight * parent_scores.get(i, 0.0) for i, v in zip(ids, norm, strict=True)}
    return sorted(pri.items(), key=lambda kv: (-kv[1], kv[0]))


# ------------------------------------------------------- the system's retrieve
def _restrict(graph: list[dict[int, float]], idx: list[int]) -> list[dict[int, float]]:
    """The kNN graph restricted to the candidate rows `idx`, re-indexed 0..len(idx)-1."""
    loc = {g: i for i, g in enumerate(idx)}
    return [{loc[u]: w for u, w in graph[g].items() if u in loc} for g in idx]


def _graph(sys_: Any, kind: str, k: int) -> tuple[dict[str, int], np.ndarray, list[dict[int, float]]]:
    """Row positions, vectors and kNN graph of one kind (graph cached until the kind changes)."""
    ids, mat = sys_.memory.matrix(kind)
    cache = sys_.__dict__.setdefault("_xr_knn", {})
    hit = cache.get((kind, k))
    if hit is None or hit[0] is not mat:
        hit = cache[(kind, k)] = (mat, knn_graph(mat, k))
    return {x: i for i, x in enumerate(ids)}, mat, hit[1]


def _select(sys_: Any, tr: Trace, stage: str, cand: list[str], raw: list[float], kind: str,
            budget: int) -> tuple[list[str], list[dict]]:
    """Greedy Stage I selection over `cand` (one kind); records candidates; returns picked ids, rows."""
    cfg, mem = sys_.config, sys_.memory
    pos, _, graph = _graph(sys_, kind, cfg.knn)
    picks = greedy_select(raw, _restrict(graph, [pos[c] for c in cand]), cfg.alpha, budget, cfg.coverage_target)
    stop = (f"{stage} budget {budget} reached" if len(picks) >= budget else
            f"candidates fully covered after {len(picks)} picks" if picks else "no candidates")
    by_id, rel = {cand[p.index]: (n, p) for n, p in enumerate(picks, start=1)}, minmax(raw)
    rows = []
    for rank, i in enumerate(sorted(range(len(cand)), key=lambda i: -raw[i]), start=1):
        c, it = cand[i], mem.get(cand[i])
        n, p = by_id.get(c, (None, None))
        rows.append({"id": c, "score": round(raw[i], 4), "relevance": round(float(rel[i]), 4),
                     "gain": round(p.score, 4) if p else None, "coverage": round(p.coverage, 4) if p else None,
                     "picked": p is not None, "pick_order": n})
        tr.candidates.append(Candidate(stage, c, raw[i], rank, p is not None, list(it.turn_ids),
                                       "" if p else f"not picked in Stage I ({stop})"))
    tr.structure.setdefault("stop", {})[stage] = stop
    return [cand[p.index] for p in picks], rows


def retrieve(sys_: Any, q: Question) -> Trace:
    """xMemory's top-down retrieval for an XMemorySystem: Stage I (themes, semantics), Stage II (episodes)."""
    cfg, mem = sys_.config, sys_.memory
    tr = sys_.new_trace(q)
    tr.stages = ["semantic_pool", "themes", "semantics", "episodes", "messages"]
    themes, sems = mem.of_kind("theme"), mem.of_kind("semantic")
    tr.structure = {"reassignment_ratio": round(sys_.reassignment_ratio(), 4), "theme_count": len(themes),
                    "semantic_count": len(sems), "episode_count": len(mem.of_kind("episode"))}
    if not themes or not sems:
        tr.notes.append("xMemory holds no semantics/themes yet: empty context")
        return tr
    qv, dense = sys_.embed_one(q.text), cfg.retriever == "dense"
    pool = {it.id: float(s) for it, s in sys_.search_items("semantic", q.text, cfg.pool, qv) if it.id in mem}
    for r, (sid, s) in enumerate(pool.items(), start=1):
        tr.candidates.append(Candidate("semantic_pool", sid, s, r, True, list(mem.get(sid).turn_ids),
                                       data={"theme": mem.get(sid).metadata.get("theme", "")}))
    # Stage I: themes holding pooled semantics, then semantics drawn from the chosen themes' members.
    # Query scores: cosine (dense); the retriever's pool score otherwise (a theme: its best member).
    cand_t = [t for t in dict.fromkeys(mem.get(i).metadata.get("theme", "") for i in pool) if t in mem]
    t_raw = [float(mem.vector(t) @ qv) if dense else max(pool.get(s, 0.0) for s in sys_.members(t))
             for t in cand_t]
    chosen_t, t_rows = _select(sys_, tr, "themes", cand_t, t_raw, "theme", cfg.theme_budget)
    cand_s = [s for t in chosen_t for s in sys_.members(t)]
    s_raw = [float(mem.vector(s) @ qv) if dense else pool.get(s, 0.0) for s in cand_s]
    chosen_s, s_rows = _select(sys_, tr, "semantics", cand_s, s_raw, "semantic", cfg.semantic_budget)
    for row in t_rows:
        row.update(label=mem.get(row["id"]).metadata.get("label", ""), size=len(sys_.members(row["id"])))
    for row in s_rows:
        it = mem.get(row["id"])
        row.update(theme=it.metadata.get("theme", ""), episodes=[e for e in it.sources if e in mem])
    tr.structure.update(themes=t_rows, semantics=s_rows)
    rel_s = {r["id"]: r["relevance"] for r in s_rows}
    _stage_two(sys_, tr, q, qv, chosen_s, rel_s)
    tr.structure["path"] = [{"theme": t, "label": mem.get(t).metadata.get("label", ""),
                             "semantics": [s for s in chosen_s if mem.get(s).metadata.get("theme") == t],
                             "episodes": [e["id"] for e in tr.structure["episodes"] if e["decision"] != "skip"
                                          and e["decision"] != "not probed" and any(
                                              mem.get(s).metadata.get("theme") == t for s in e["parents"])]}
                            for t in chosen_t]
    return tr


def _stage_two(sys_: Any, tr: Trace, q: Question, qv: np.ndarray, chosen_s: list[str],
               rel_s: dict[str, float]) -> None:
    """Stage II over episodes linked to the chosen semantics plus the top episodes by the retriever."""
    from memcore.llm.offline.xmemory import PROXY_DOC, support_uncertainty

    cfg, mem = sys_.config, sys_.memory
    parent: dict[str, float] = {}
    parents: dict[str, list[str]] = {}
    for s in chosen_s:
        for e in mem.get(s).sources:
            if e in mem and mem.get(e).kind == "episode":
                parent[e] = max(parent.get(e, 0.0), rel_s[s])
                parents.setdefault(e, []).append(s)
    top = [it.id for it, _ in sys_.search_items("episode", q.text, cfg.episode_top, qv) if it.id in mem]
    cand = list(dict.fromkeys([*parent, *top]))
    ranked = episode_priority({e: float(mem.vector(e) @ qv) for e in cand}, parent, cfg.parent_weight)
    sem_block = "\n".join(f"[{mem.get(s).metadata.get('date', '')}] {mem.get(s).text}" for s in chosen_s)
    ep_text = {e: f"{mem.get(e).metadata.get('title', '')}: {mem.get(e).text}" for e in cand}
    mode: dict[str, int] = {}

    def scorer(eps: list[str]) -> tuple[float, str]:
        episodic = "\n".join(f"[{mem.get(e).metadata.get('date', '')}] {ep_text[e]}" for e in eps)
        res = sys_.llm.run("xmemory_probe", {"question": q.text, "question_date": q.question_date,
                                              "semantic": sem_block or "(none)", "episodic": episodic or "(none)"},
                           stage="retrieval", logprobs=True)
        h = mean_nll(res.logprobs, cfg.answer_tokens)
        kind = "proxy" if h is None else "logprobs"
        mode[kind] = mode.get(kind, 0) + 1
        return (support_uncertainty(q.text, f"{sem_block}\n{episodic}") if h is None else h), res.error

    st = stage_two(ranked, scorer, cfg)
    probes = {p.id: p for p in st.probes}
    turns = {t.turn_id: t for t in sys_.conv.turns}
    lines = ["Semantic memories:"]
    for rank, s in enumerate(chosen_s, start=1):
        it = mem.get(s)
        tr.items.append(TraceItem(s, "semantic", it.text, rel_s[s], list(it.turn_ids),
                                  f"Stage I: {it.metadata.get('theme', '')}", rank, {"date": it.metadata.get("date", "")}))
        lines.append(f"[{it.metadata.get('date', '')}] {it.text}")
    lines += ["", "Episodic memories:"]
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
                tr.items.append(TraceItem(tid, "turn", f"{t.speaker}: {t.content}", p.gain, [tid],
                                          f"messages of {e}", rank, {"date": t.session_date, "speaker": t.speaker}))
                lines.append(f"    [{t.session_date}] {t.speaker}: {t.content}")
    tr.context = "\n".join(lines)
    tr.structure.update(episodes=rows, messages=messages, H0=round(st.H0, 4))
    tr.structure["stop"]["episodes"] = st.stop
    tr.structure["uncertainty"] = "logprobs" if "proxy" not in mode else (
        "proxy: " + PROXY_DOC if "logprobs" not in mode else f"mixed {mode}; proxy: {PROXY_DOC}")
    if "proxy" in mode:
        tr.notes.append(f"Stage II uncertainty: the reader gave no token logprobs ({sys_.llm.label}); "
                        f"used the {PROXY_DOC}")
    tr.errors.extend(sorted({p.error for p in st.probes if p.error}))
