"""xMemory retrieval: Stage I representative selection on kNN graphs, Stage II uncertainty-gated inclusion.

Pure functions over numpy arrays and callables, so both stages are testable without a store
or a model. memcore/systems/xmemory/trace.py feeds them from the system's memory and turns the
results into a Trace.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np


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


def top_select(relevance: Sequence[float], budget: int) -> list[Pick]:
    """Plain similarity instead of Stage I (the Memory-only / +UncSel ablations): the `budget` highest raw
    scores, highest first (ties in input order); no coverage term, so `coverage` and `covered` are 0."""
    rel = minmax(relevance)
    order = sorted(range(len(relevance)), key=lambda i: -float(relevance[i]))[:budget]
    return [Pick(i, float(relevance[i]), 0.0, float(rel[i]), 0.0) for i in order]


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
