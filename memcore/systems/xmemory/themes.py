"""xMemory's theme objective, restructuring candidates (pure numpy), and the split / merge steps.

`X` is an (n, d) matrix of unit vectors (semantic embeddings); a partition is a list of index
arrays into `X`, one per theme. f(P) = SparsityScore(P) + SemScore(P) (paper Eq. 1-3):

- SparsityScore = N^2 / (K * sum_k n_k^2)
- SemScore = mean_k(cohesion_k * g(s_k)), cohesion_k = mean_i cos(x_i, mu_k),
  s_k = max_{j != k} cos(mu_k, mu_j), g(s) = exp(-(s - m)^2 / (2 sigma^2)),
  m = median(s), sigma = MAD(s) + eps.

With a single theme there is no neighbour, so g = 1 (SemScore = its cohesion).
`split_theme` / `merge_passes` apply the objective to an XMemorySystem's themes and emit the
split / merged / moved events.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from memcore.systems.memory import WorkingMemory
from memcore.systems.xmemory.config import XMemoryConfig
from memcore.types import Event, MemoryItem

Parts = list[np.ndarray]


def unit(v: np.ndarray) -> np.ndarray:
    """v scaled to unit length (zero stays zero)."""
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def centroid(X: np.ndarray) -> np.ndarray:
    """The unit-length mean of the rows of X."""
    return unit(np.asarray(X, dtype=np.float64).mean(axis=0))


def sparsity_score(sizes: Sequence[int]) -> float:
    """N^2 / (K * sum n_k^2): 1.0 for equal theme sizes, lower when a few themes hold most nodes."""
    sizes = [int(s) for s in sizes if s > 0]
    if not sizes:
        return 0.0
    n = sum(sizes)
    return n * n / (len(sizes) * sum(s * s for s in sizes))


def sem_terms(X: np.ndarray, parts: Parts, eps: float = 1e-3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-theme (cohesion, s, g) arrays of SemScore."""
    X = np.asarray(X, dtype=np.float64)
    sums = np.stack([X[p].sum(axis=0) for p in parts])
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    mus = sums / np.where(norms > 0, norms, 1.0)
    coh = np.array([float((X[p] @ mu).mean()) for p, mu in zip(parts, mus, strict=True)])
    k = len(parts)
    if k < 2:
        return coh, np.zeros(k), np.ones(k)
    sims = mus @ mus.T
    np.fill_diagonal(sims, -np.inf)
    s = sims.max(axis=1)
    m = float(np.median(s))
    sigma = float(np.median(np.abs(s - m))) + eps
    g = np.exp(-((s - m) ** 2) / (2 * sigma * sigma))
    return coh, s, g


def sem_score(X: np.ndarray, parts: Parts, eps: float = 1e-3) -> float:
    """mean_k(cohesion_k * g(s_k))."""
    if not parts:
        return 0.0
    coh, _, g = sem_terms(X, parts, eps)
    return float(np.mean(coh * g))


def objective(X: np.ndarray, parts: Parts, eps: float = 1e-3) -> float:
    """f = SparsityScore + SemScore of a partition."""
    parts = [np.asarray(p, dtype=int) for p in parts if len(p)]
    return sparsity_score([len(p) for p in parts]) + sem_score(X, parts, eps)


def mean_pairwise_cos(X: np.ndarray) -> float:
    """Mean cosine over distinct pairs of rows (1.0 for fewer than two rows)."""
    n = len(X)
    if n < 2:
        return 1.0
    S = np.asarray(X, dtype=np.float64) @ np.asarray(X, dtype=np.float64).T
    return float((S.sum() - np.trace(S)) / (n * (n - 1)))


def split_trigger(X: np.ndarray, max_size: int = 12, min_size: int = 8, min_coherence: float = 0.72) -> str:
    """Why a theme should be split ("" when it should not): too large, or large and incoherent."""
    n = len(X)
    if n > max_size:
        return f"size {n} > {max_size}"
    if n >= min_size:
        c = mean_pairwise_cos(X)
        if c < min_coherence:
            return f"size {n} >= {min_size} and mean pairwise cos {c:.3f} < {min_coherence}"
    return ""


def components(X: np.ndarray, edge_cos: float) -> Parts:
    """Connected components of the graph joining rows with cos >= edge_cos (ordered by first row)."""
    n = len(X)
    adj = (np.asarray(X) @ np.asarray(X).T) >= edge_cos
    seen = np.zeros(n, dtype=bool)
    out: Parts = []
    for start in range(n):
        if seen[start]:
            continue
        stack, comp = [start], []
        seen[start] = True
        while stack:
            i = stack.pop()
            comp.append(i)
            for j in np.flatnonzero(adj[i] & ~seen):
                seen[j] = True
                stack.append(int(j))
        out.append(np.array(sorted(comp), dtype=int))
    return out


def projection_chunks(X: np.ndarray, k: int) -> Parts:
    """Rows ordered along their first principal direction and cut into k contiguous chunks."""
    Xc = np.asarray(X, dtype=np.float64) - np.asarray(X, dtype=np.float64).mean(axis=0)
    _, _, vt = np.linalg.svd(Xc, full_matrices=False)
    proj = Xc @ vt[0]
    if proj[int(np.argmax(np.abs(proj)))] < 0:  # fix the SVD sign so the result is deterministic
        proj = -proj
    order = np.argsort(proj, kind="stable")
    return [np.sort(c) for c in np.array_split(order, k) if len(c)]


def candidate_splits(X: np.ndarray, edge_cos: float = 0.66, max_size: int = 12) -> list[tuple[str, Parts]]:
    """Split candidates of one theme: graph components (cos >= edge_cos), 1-D projection chunks <= max_size."""
    n = len(X)
    out: list[tuple[str, Parts]] = []
    if n < 2:
        return out
    comps = components(X, edge_cos)
    if len(comps) > 1:
        out.append((f"components cos>={edge_cos}", comps))
    kmin = max(2, math.ceil(n / max_size))
    for k in (kmin, kmin + 1):
        if k <= n:
            out.append((f"projection k={k}", projection_chunks(X, k)))
    return out


@dataclass
class Local:
    """A neighbourhood of themes for evaluating f: stacked member vectors and per-theme index arrays."""

    theme_ids: list[str]
    X: np.ndarray
    parts: Parts

    @classmethod
    def build(cls, theme_ids: list[str], members: list[np.ndarray]) -> Local:
        """From each theme's member matrix (same order as theme_ids)."""
        parts, start = [], 0
        for m in members:
            parts.append(np.arange(start, start + len(m)))
            start += len(m)
        return cls(list(theme_ids), np.concatenate(members, axis=0).astype(np.float64), parts)

    def f(self, eps: float = 1e-3) -> float:
        """f of this neighbourhood as it is."""
        return objective(self.X, self.parts, eps)

    def f_split(self, target: int, sub: Parts, eps: float = 1e-3) -> float:
        """f after replacing theme `target` by sub-parts (indices local to that theme)."""
        base = self.parts[target]
        parts = [p for i, p in enumerate(self.parts) if i != target] + [base[s] for s in sub]
        return objective(self.X, parts, eps)

    def f_merge(self, a: int, b: int, eps: float = 1e-3) -> float:
        """f after merging themes a and b."""
        merged = np.concatenate([self.parts[a], self.parts[b]])
        parts = [p for i, p in enumerate(self.parts) if i not in (a, b)] + [merged]
        return objective(self.X, parts, eps)


def best_split(local: Local, target: int, candidates: list[tuple[str, Parts]],
               eps: float = 1e-3, force: bool = False) -> tuple[float, list[dict], int | None]:
    """(f_before, one record per candidate, index of the chosen candidate or None).

    The chosen candidate is the one with the highest f_after; unless `force`, only if it raises f.
    `force` is for a theme above the size cap, which must split (paper: 12 is the maximum size).
    """
    f0 = local.f(eps)
    recs, best, best_f = [], None, -math.inf if force else f0
    for i, (method, sub) in enumerate(candidates):
        f1 = local.f_split(target, sub, eps)
        recs.append({"method": method, "sizes": [int(len(s)) for s in sub], "f": round(f1, 6)})
        if f1 > best_f + 1e-12:
            best, best_f = i, f1
    return f0, recs, best


def merge_pairs(centroids: np.ndarray, sizes: Sequence[int], merge_cos: float = 0.78,
                max_size: int = 12, only: set[int] | None = None) -> list[tuple[int, int, float]]:
    """Theme pairs (i < j) with centroid cos >= merge_cos and combined size <= max_size.

    `only`: restrict to pairs with at least one theme in this set (themes changed lately).
    """
    M = np.asarray(centroids, dtype=np.float64)
    if len(M) < 2:
        return []
    S = M @ M.T
    n = np.asarray(sizes)
    ok = np.triu(S >= merge_cos, k=1) & (n[:, None] + n[None, :] <= max_size)
    if only is not None:
        mark = np.zeros(len(M), dtype=bool)
        mark[list(only)] = True
        ok &= mark[:, None] | mark[None, :]
    return [(int(i), int(j), float(S[i, j])) for i, j in np.argwhere(ok)]


def greedy_merges(gains: list[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """Non-overlapping pairs with positive gain, largest gain first (each theme merges once)."""
    used: set[int] = set()
    out = []
    for i, j, gain in sorted(gains, key=lambda t: (-t[2], t[0], t[1])):
        if gain > 0 and i not in used and j not in used:
            out.append((i, j, gain))
            used.update((i, j))
    return out


# ------------------------------------------------ restructuring an XMemorySystem
class ThemeHost(Protocol):
    """What the split and merge steps need of their system: config, memory, theme membership and the
    system's own theme writers, the changed themes, counters and the event log."""

    config: XMemoryConfig
    memory: WorkingMemory
    stats: dict[str, int]
    dirty: dict[str, None]

    def members(self, theme_id: str) -> list[str]: ...

    def local_themes(self, theme_ids: list[str], extra: dict[str, list[str]] | None = None) -> Local: ...

    def set_members(self, theme: MemoryItem, members: list[str]) -> None: ...

    def new_theme(self, members: list[str]) -> MemoryItem: ...

    def emit(self, kind: str, items: list[MemoryItem] | list[str], reason: str, **data: Any) -> Event: ...


def split_theme(sys_: ThemeHost, theme: MemoryItem, depth: int = 0) -> None:
    """Split an XMemorySystem theme when it triggers (recursive, depth <= 3).

    Above the size cap the split is mandatory and f picks the candidate (paper: at most 12 semantics
    per theme). A coherence-triggered split (8..12 members, mean pairwise cos < 0.72) is taken only
    when its best candidate raises f, unless `coherence_split_needs_gain` is off: the paper lets f
    guide split and merge and requires a positive gain for merges; for this soft trigger memcore
    reads "pick the split maximising f" as including "no split" (a deviation, measured in the report).
    """
    cfg, mem = sys_.config, sys_.members(theme.id)
    if not cfg.split:  # the w/o split ablation (Fig. 5): no split is considered
        return
    X = np.stack([sys_.memory.vector(s) for s in mem])
    why = split_trigger(X, cfg.max_theme, cfg.split_min, cfg.split_coherence)
    if not why:
        return
    cands = candidate_splits(X, cfg.split_edge_cos, cfg.max_theme)
    force = len(mem) > cfg.max_theme or not cfg.coherence_split_needs_gain
    f0, recs, best = best_split(sys_.local_themes([theme.id]), 0, cands, cfg.sem_eps, force)
    if best is None:
        sys_.stats["split_rejected"] = sys_.stats.get("split_rejected", 0) + 1
        sys_.emit("updated", [theme], f"split considered ({why}), rejected: no candidate raises f",
                  f_before=round(f0, 6), f_after=round(f0, 6), candidates=recs)
        return
    parts = sorted(cands[best][1], key=len, reverse=True)
    groups = [[mem[i] for i in p] for p in parts]
    sys_.set_members(theme, groups[0])
    new = [sys_.new_theme(g) for g in groups[1:]]
    sys_.stats["splits"] = sys_.stats.get("splits", 0) + 1
    moved = [s for g in groups[1:] for s in g]
    data = {"f_before": round(f0, 6), "f_after": recs[best]["f"], "candidates": recs, "trigger": why}
    sys_.emit("split", [theme, *new], f"{theme.id} split by {cands[best][0]} into sizes "
              f"{[len(g) for g in groups]} ({why})", chosen=cands[best][0], **data)
    sys_.emit("moved", moved, f"reassigned from {theme.id} by split", item_kind="semantic", cause="split",
              from_theme=theme.id, to={th.id: th.metadata["members"] for th in new}, **data)
    if depth < 3:
        for th in [theme, *new]:
            split_theme(sys_, th, depth + 1)


def merge_passes(sys_: ThemeHost) -> None:
    """Up to `merge_passes` passes of greedy merges that raise f, among an XMemorySystem's changed themes."""
    cfg = sys_.config
    for pass_no in range(1, cfg.merge_passes + 1):
        tids, M = sys_.memory.matrix("theme")
        only = {i for i, t in enumerate(tids) if t in sys_.dirty}
        pairs = merge_pairs(M, [len(sys_.members(t)) for t in tids], cfg.merge_cos, cfg.max_theme, only)
        gains, recs = [], []
        for i, j, cos in pairs:
            local = sys_.local_themes([tids[i], tids[j]])
            f0, f1 = local.f(cfg.sem_eps), local.f_merge(0, 1, cfg.sem_eps)
            gains.append((i, j, f1 - f0))
            recs.append({"pair": [tids[i], tids[j]], "cos": round(cos, 4), "f_before": round(f0, 6),
                         "f_after": round(f1, 6), "gain": round(f1 - f0, 6)})
        chosen = greedy_merges(gains)
        for i, j, gain in chosen:
            keep, gone = sorted([tids[i], tids[j]], key=lambda t: (-len(sys_.members(t)), t))
            moved = sys_.members(gone)
            sys_.set_members(sys_.memory.get(keep), [*sys_.members(keep), *moved])
            sys_.memory.remove(gone)
            sys_.dirty.pop(gone, None)
            sys_.stats["merges"] = sys_.stats.get("merges", 0) + 1
            rec = next(r for r in recs if set(r["pair"]) == {keep, gone})
            data = {"f_before": rec["f_before"], "f_after": rec["f_after"], "gain": round(gain, 6),
                    "candidates": recs, "pass": pass_no}
            sys_.emit("merged", [keep, gone], f"{gone} merged into {keep} (cos {rec['cos']:.2f}, "
                      f"gain {gain:+.4f}, pass {pass_no})", item_kind="theme", **data)
            sys_.emit("moved", moved, f"reassigned from {gone} to {keep} by merge", item_kind="semantic",
                      cause="merge", from_theme=gone, to=keep, **data)
        if not chosen:
            break
