"""CoM's query-time mechanics as pure functions: chain growth by the gate, fused and re-ranked scores.

A chain grows from an anchor by the gate S(m) = cos(m, q) * cos(m, C), C the mean embedding
of the chain so far, until the best gate falls below beta * the previous gate, the pool is
exhausted, or max_len is reached (paper 000). `fused_scores`, `rerank` and `day_date` serve
the extended (non-paper) mode of memcore.systems.com (the CoM system).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memcore.text.dates import fmt_day, parse_date


@dataclass
class Chain:
    """One grown chain: member pool indices in selection order, their gates, and every step."""

    anchor: int
    members: list[int]
    gates: list[float]
    steps: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str = ""
    stop_step: int = 0
    rejected: int | None = None  # pool index whose gate fell below beta * previous


def unit(mat: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    mat = np.asarray(mat, dtype=np.float64)
    norms = np.linalg.norm(mat, axis=-1, keepdims=True)
    return np.divide(mat, norms, out=np.zeros_like(mat), where=norms > 0)


def grow_chain(emb: np.ndarray, rel: np.ndarray, anchor: int, beta: float, max_len: int,
               ids: list[str] | None = None, truncate: bool = True) -> Chain:
    """Grow one chain from `anchor` over the pool (rows of unit vectors `emb`, relevances `rel`).

    The anchor's own gate is its relevance (a one-node chain is its own centroid, cos = 1).
    Each step scores every pool node not yet in the chain and appends the best, unless its
    gate is below beta times the gate of the node appended before it (`truncate`; without it, the
    w/o APT ablation, a chain grows to max_len or the pool's end).
    """
    name = (lambda i: ids[i]) if ids is not None else (lambda i: i)
    ch = Chain(anchor=anchor, members=[anchor], gates=[float(rel[anchor])])
    n = len(rel)
    while True:
        step_no = len(ch.steps) + 1
        if len(ch.members) >= max_len:
            ch.steps.append({"step": step_no, "candidates": [], "chosen": None, "gate": None, "stopped": True,
                             "stop_reason": f"max length {max_len} reached"})
            break
        cand = np.array([i for i in range(n) if i not in ch.members], dtype=int)
        if cand.size == 0:
            ch.steps.append({"step": step_no, "candidates": [], "chosen": None, "gate": None, "stopped": True,
                             "stop_reason": "pool empty"})
            break
        centroid = emb[ch.members].mean(axis=0)
        cnorm = float(np.linalg.norm(centroid))
        cons = emb[cand] @ centroid / cnorm if cnorm > 0 else np.zeros(cand.size)
        gate = rel[cand] * cons
        best = int(np.argmax(gate))  # first maximum: ties go to the better-ranked pool node
        prev = ch.gates[-1]
        rows = [{"id": name(int(i)), "relevance": round(float(rel[i]), 4), "consistency": round(float(c), 4),
                 "gate": round(float(g), 4)} for i, c, g in zip(cand, cons, gate, strict=True)]
        step = {"step": step_no, "candidates": rows, "best": name(int(cand[best])),
                "gate": round(float(gate[best]), 4), "threshold": round(beta * prev, 4)}
        if not truncate:
            step["threshold"] = None  # w/o APT: no relative-drop stop
        elif gate[best] < beta * prev:
            step.update(chosen=None, stopped=True,
                        stop_reason=f"best gate {gate[best]:.3f} < beta {beta} x previous gate {prev:.3f}")
            ch.rejected = int(cand[best])
            ch.steps.append(step)
            break
        step.update(chosen=name(int(cand[best])), stopped=False, stop_reason="")
        ch.steps.append(step)
        ch.members.append(int(cand[best]))
        ch.gates.append(float(gate[best]))
    ch.stop_reason, ch.stop_step = ch.steps[-1]["stop_reason"], ch.steps[-1]["step"]
    return ch


def fused_scores(dense: np.ndarray, lexical: np.ndarray | None, retriever: str) -> np.ndarray:
    """Whole-index scores for one retriever: cosine, BM25, or RRF (k=60) of the two rankings."""
    if retriever == "dense" or lexical is None:
        return dense
    if retriever == "lexical":
        return lexical
    rd = np.argsort(np.argsort(-dense, kind="stable"), kind="stable")
    # turns without a term match rank after every match, among themselves by cosine
    rb = np.argsort(np.argsort(-(lexical + 1e-6 * dense), kind="stable"), kind="stable")
    return 1.0 / (61 + rd) + 1.0 / (61 + rb)


def rerank(scores: np.ndarray, named: np.ndarray, sessions: np.ndarray, boost: float, nw: float) -> np.ndarray:
    """Standardised scores + `boost` for turns by a named speaker, then + `nw` x each same-session neighbour."""
    z = (scores - scores.mean()) / (scores.std() + 1e-9) + boost * named
    same = sessions[1:] == sessions[:-1]
    out = z.copy()
    out[1:] += nw * np.where(same, z[:-1], 0.0)
    out[:-1] += nw * np.where(same, z[1:], 0.0)
    return out


def day_date(date: str) -> str:
    """ "1:56 pm on 8 May, 2023" -> "8 May 2023" (unchanged when it does not parse)."""
    d = parse_date(date)
    return fmt_day(d) if d else date
