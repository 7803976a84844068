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


def stage_two(ranked: list[tuple[str, float]], scorer: Scorer, cfg: StageTwoConfig | None = None) -> StageTwoResult:
    """Uncertainty-gated inclusion over episodes ranked by priority.

    H0 = scorer([]) is the uncertainty with semantics only; each probed episode e gets
    gain = H0 - scorer([e]). Include when gain > include_gain; with messages when gain >
    message_gain. Stop after `max_episodes` inclusions, a low-gain probe among the first
    `early_window`, or `max_low` low-gain probes.
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


def _graph(sys_: Any, kind: str, k: int) -> tuple[list[str], np.ndarray, list[dict[int, float]]]:
    ids, mat = sys_.memory.matrix(kind)
    cache = sys_.__dict__.setdefault("_xr_knn", {})
    key = (kind, k, id(mat), len(ids))
    if key not in cache:
        cache[key] = knn_graph(mat, k)
    return ids, mat, cache[key]


def _stop_reason(picks: list[Pick], budget: int, target: float, what: str) -> str:
    if len(picks) >= budget:
        return f"{what} budget {budget} reached"
    if picks and picks[-1].covered >= target:
        return f"candidates fully covered after {len(picks)} picks"
    return "no candidates left"


@dataclass
class Run:
    """What the stages decided for one question (input to the trace builder)."""

    cand_t: list[str]
    t_raw: list[float]
    picks_t: list[Pick]
    t_stop: str
    cand_s: list[str]
    s_raw: list[float]
    picks_s: list[Pick]
    s_stop: str
    ranked: list[tuple[str, float]]
    parent: dict[str, float]
    st: StageTwoResult


def retrieve(sys_: Any, q: Question) -> Trace:
    """xMemory's top-down retrieval for an XMemorySystem: Stage I (themes, semantics), Stage II (episodes)."""
    from memcore.llm.offline.xmemory import PROXY_DOC, support_uncertainty

    cfg, mem = sys_.config, sys_.memory
    tr = sys_.new_trace(q)
    tr.stages = ["semantic_pool", "themes", "semantics", "episodes", "messages"]
    sem_ids, S, sem_graph = _graph(sys_, "semantic", cfg.knn)
    th_ids, T, th_graph = _graph(sys_, "theme", cfg.knn)
    tr.structure = {"reassignment_ratio": round(sys_.reassignment_ratio(), 4), "theme_count": len(th_ids),
                    "semantic_count": len(sem_ids), "episode_count": len(mem.of_kind("episode"))}
    if not sem_ids or not th_ids:
        tr.notes.append("xMemory holds no semantics/themes yet: empty context")
        return tr
    qv = sys_.embed_one(q.text)
    dense = cfg.retriever == "dense"
    pool = [(it, s) for it, s in sys_.search_items("semantic", q.text, cfg.pool, qv) if it.id in mem]
    pool_score = {it.id: float(s) for it, s in pool}
    for r, (it, s) in enumerate(pool, start=1):
        tr.candidates.append(Candidate("semantic_pool", it.id, float(s), r, True, list(it.turn_ids),
                                       data={"theme": mem.get(it.id).metadata.get("theme", "")}))
    # Stage I (a): themes holding pooled semantics
    tpos, spos = {t: i for i, t in enumerate(th_ids)}, {s: i for i, s in enumerate(sem_ids)}
    cand_t = [t for t in dict.fromkeys(mem.get(i).metadata.get("theme", "") for i in pool_score) if t in tpos]
    t_raw = [float(T[tpos[t]] @ qv) if dense else max(pool_score.get(s, 0.0) for s in sys_.members(t))
             for t in cand_t]
    picks_t = greedy_select(t_raw, _restrict(th_graph, [tpos[t] for t in cand_t]), cfg.alpha,
                            cfg.theme_budget, cfg.coverage_target)
    t_stop = _stop_reason(picks_t, cfg.theme_budget, cfg.coverage_target, "theme")
    chosen_t = [cand_t[p.index] for p in picks_t]
    # Stage I (b): semantics drawn from the chosen themes' members
    cand_s = [s for t in chosen_t for s in sys_.members(t) if s in spos]
    s_raw = [float(S[spos[s]] @ qv) if dense else pool_score.get(s, 0.0) for s in cand_s]
    picks_s = greedy_select(s_raw, _restrict(sem_graph, [spos[s] for s in cand_s]), cfg.alpha,
                            cfg.semantic_budget, cfg.coverage_target)
    s_stop = _stop_reason(picks_s, cfg.semantic_budget, cfg.coverage_target, "semantic")
    chosen_s = [cand_s[p.index] for p in picks_s]
    rel_s = dict(zip(cand_s, minmax(s_raw), strict=True))
    # Stage II: episodes linked to chosen semantics plus top episodes by the retriever
    parent: dict[str, float] = {}
    for s in chosen_s:
        for e in mem.get(s).sources:
            if e in mem and mem.get(e).kind == "episode":
                parent[e] = max(parent.get(e, 0.0), float(rel_s[s]))
    top_e = [it.id for it, _ in sys_.search_items("episode", q.text, cfg.episode_top, qv) if it.id in mem]
    cand_e = list(dict.fromkeys([*parent, *top_e]))
    ranked = episode_priority({e: float(mem.vector(e) @ qv) for e in cand_e}, parent, cfg.parent_weight)
    sem_block = "\n".join(f"[{mem.get(s).metadata.get('date', '')}] {mem.get(s).text}" for s in chosen_s)
    mode: dict[str, int] = {}

    def ep_line(e: str) -> str:
        it = mem.get(e)
        return f"[{it.metadata.get('date', '')}] {it.metadata.get('title', '')}: {it.text}"

    def scorer(eps: list[str]) -> tuple[float, str]:
        episodic = "\n".join(ep_line(e) for e in eps)
        res = sys_.llm.run("xmemory_probe", {"question": q.text, "question_date": q.question_date,
                                              "semantic": sem_block or "(none)", "episodic": episodic or "(none)"},
                           stage="retrieval", logprobs=True)
        h = mean_nll(res.logprobs, cfg.answer_tokens)
        if h is None:
            mode["proxy"] = mode.get("proxy", 0) + 1
            h = support_uncertainty(q.text, f"{sem_block}\n{episodic}")
        else:
            mode["logprobs"] = mode.get("logprobs", 0) + 1
        return h, res.error

    st_cfg = StageTwoConfig(cfg.probe, cfg.max_episodes, cfg.include_gain, cfg.message_gain, cfg.low_gain)
    st = stage_two(ranked, scorer, st_cfg)
    _fill(sys_, tr, Run(cand_t, t_raw, picks_t, t_stop, cand_s, s_raw, picks_s, s_stop, ranked, parent, st))
    if "proxy" in mode:
        tr.notes.append(f"Stage II uncertainty: the reader gave no token logprobs "
                        f"({sys_.llm.label}); used the {PROXY_DOC}")
    tr.structure["uncertainty"] = "logprobs" if "proxy" not in mode else (
        "proxy: " + PROXY_DOC if "logprobs" not in mode else f"mixed: {mode}; proxy: {PROXY_DOC}")
    tr.errors.extend(sorted({p.error for p in st.probes if p.error}))
    return tr


def _fill(sys_: Any, tr: Trace, r: Run) -> None:
    """Items, candidates per stage, structure (hierarchy path) and context from a Run."""
    mem = sys_.memory
    t_pick = {r.cand_t[p.index]: p for p in r.picks_t}
    s_pick = {r.cand_s[p.index]: p for p in r.picks_s}
    t_norm, s_norm = dict(zip(r.cand_t, minmax(r.t_raw), strict=True)), dict(zip(r.cand_s, minmax(r.s_raw),
                                                                                  strict=True))
    themes, sems = [], []
    for rank, (t, raw) in enumerate(sorted(zip(r.cand_t, r.t_raw, strict=True), key=lambda x: -x[1]), start=1):
        it, p = mem.get(t), t_pick.get(t)
        themes.append({"id": t, "label": it.metadata.get("label", ""), "score": round(raw, 4),
                       "relevance": round(float(t_norm[t]), 4), "gain": round(p.score, 4) if p else None,
                       "coverage": round(p.coverage, 4) if p else None, "picked": p is not None,
                       "pick_order": r.picks_t.index(p) + 1 if p else None, "size": len(sys_.members(t))})
        tr.candidates.append(Candidate("themes", t, raw, rank, p is not None, list(it.turn_ids),
                                       "" if p else f"not picked in Stage I ({r.t_stop})",
                                       {"label": it.metadata.get("label", "")}))
    for rank, (s, raw) in enumerate(sorted(zip(r.cand_s, r.s_raw, strict=True), key=lambda x: -x[1]), start=1):
        it, p = mem.get(s), s_pick.get(s)
        sems.append({"id": s, "theme": it.metadata.get("theme", ""), "score": round(raw, 4),
                     "relevance": round(float(s_norm[s]), 4), "gain": round(p.score, 4) if p else None,
                     "picked": p is not None, "pick_order": r.picks_s.index(p) + 1 if p else None,
                     "episodes": [e for e in it.sources if e in mem]})
        tr.candidates.append(Candidate("semantics", s, raw, rank, p is not None, list(it.turn_ids),
                                       "" if p else f"not picked in Stage I ({r.s_stop})"))
    probes = {p.id: p for p in r.st.probes}
    episodes, messages = [], []
    for rank, (e, prio) in enumerate(r.ranked, start=1):
        it, p = mem.get(e), probes.get(e)
        rec = p.to_dict() if p else {"id": e, "priority": round(prio, 4), "decision": "not probed"}
        rec.update(parent=round(r.parent.get(e, 0.0), 4), title=it.metadata.get("title", ""))
        episodes.append(rec)
        kept = bool(p and p.decision != "skip")
        why = "" if kept else (f"skipped: gain {p.gain:.3f} <= {sys_.config.include_gain}" if p else
                               f"not probed ({r.st.stop})")
        tr.candidates.append(Candidate("episodes", e, prio, rank, kept, list(it.turn_ids), why,
                                       {"gain": round(p.gain, 4) if p else None}))
        if kept:
            expand = p.decision == "include+messages"
            for tid in it.turn_ids:
                tr.candidates.append(Candidate("messages", tid, p.gain, rank, expand, [tid], "" if expand else
                                               f"{e} gain {p.gain:.3f} <= {sys_.config.message_gain}: messages "
                                               "not added", {"episode": e}))
                if expand:
                    messages.append(tid)
    _items(sys_, tr, r, s_pick, probes)
    path = [{"theme": t, "label": mem.get(t).metadata.get("label", ""),
             "semantics": [s for s in s_pick if mem.get(s).metadata.get("theme") == t]} for t in t_pick]
    for node in path:
        node["episodes"] = [e for s in node["semantics"] for e in mem.get(s).sources
                            if e in probes and probes[e].decision != "skip"]
    tr.structure.update(themes=themes, semantics=sems, episodes=episodes, messages=messages, path=path,
                        H0=round(r.st.H0, 4), stop={"themes": r.t_stop, "semantics": r.s_stop, "episodes": r.st.stop})


def _items(sys_: Any, tr: Trace, r: Run, s_pick: dict[str, Pick], probes: dict[str, Probe]) -> None:
    mem = sys_.memory
    turns = {t.turn_id: t for t in sys_.conv.turns}
    lines = ["Semantic memories:"]
    for rank, s in enumerate(s_pick, start=1):
        it = mem.get(s)
        ti = TraceItem(s, "semantic", it.text, s_pick[s].score, list(it.turn_ids),
                       f"Stage I: {it.metadata.get('theme', '')}", rank, {"date": it.metadata.get("date", "")})
        tr.items.append(ti)
        lines.append(f"[{ti.metadata['date']}] {it.text}")
    lines += ["", "Episodic memories:"]
    for rank, p in enumerate([p for p in r.st.probes if p.decision != "skip"], start=1):
        it = mem.get(p.id)
        date = it.metadata.get("date", "")
        text = f"{it.metadata.get('title', '')}: {it.text}"
        tr.items.append(TraceItem(p.id, "episode", text, p.gain, list(it.turn_ids),
                                  f"Stage II: gain {p.gain:+.3f}", rank, {"date": date}))
        lines.append(f"[{date}] {text}")
        if p.decision == "include+messages":
            for tid in it.turn_ids:
                t = turns.get(tid)
                if t is not None:
                    tr.items.append(TraceItem(tid, "turn", f"{t.speaker}: {t.content}", p.gain, [tid],
                                              f"messages of {p.id}", rank,
                                              {"date": t.session_date, "speaker": t.speaker}))
                    lines.append(f"    [{t.session_date}] {t.speaker}: {t.content}")
    tr.context = "\n".join(lines)
