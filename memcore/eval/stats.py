"""Uncertainty over questions: 95% bootstrap intervals for scores and paired differences; McNemar's test.

Every score memcore reports is a mean over questions, so its uncertainty is the spread of that
mean over resamples of the questions (the percentile bootstrap, Efron & Tibshirani 1993, ch. 13).
One resample is a multinomial draw of question counts; the same draws serve every metric of a group
of rows, so intervals of one group are computed together (a matrix product per chunk of draws) and
are reproducible: the generator is seeded with `SEED`. A paired difference (two systems, variants
or runs on the same questions) resamples the questions once and takes both means on each draw, which
is the bootstrap of the per-question differences. Results agree with `scipy.stats.bootstrap`
(method="percentile") to the Monte-Carlo error (tests/eval/test_stats.py checks it); this module
exists because scipy resamples each metric separately (0.5 s per metric at n = 2000 on this machine).

McNemar's test on paired verdicts (right/wrong) is the exact version: under "no difference" the
discordant pairs split as Binomial(b + c, 1/2) (`scipy.stats.binomtest`, two-sided).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from scipy.stats import binomtest

SEED = 20240527
N_RESAMPLES = 2000
LEVEL = 0.95
_CELLS = 4_000_000  # draws x questions per chunk

__all__ = ["LEVEL", "N_RESAMPLES", "SEED", "bootstrap_means", "interval", "intervals", "mcnemar",
           "paired_delta", "separated"]


def _as_matrix(columns: Sequence[Iterable[Any]]) -> tuple[np.ndarray, np.ndarray]:
    """Values (missing -> 0) and presence mask, questions x metrics; booleans count 0/1."""
    cols = [list(c) for c in columns]
    n = len(cols[0]) if cols else 0
    vals, mask = np.zeros((n, len(cols))), np.zeros((n, len(cols)))
    for j, col in enumerate(cols):
        for i, v in enumerate(col):
            if v is not None and not (isinstance(v, float) and np.isnan(v)):
                vals[i, j], mask[i, j] = float(v), 1.0
    return vals, mask


def bootstrap_means(columns: Sequence[Iterable[Any]], n_resamples: int = N_RESAMPLES,
                    seed: int = SEED) -> np.ndarray:
    """Resampled means, n_resamples x metrics: each draw resamples the questions (rows) with replacement
    and takes the mean of each column over the drawn questions that have a value (None is missing;
    a draw where a column has no value gives NaN)."""
    vals, mask = _as_matrix(columns)
    n = vals.shape[0]
    rng = np.random.default_rng(seed)
    out = []
    chunk = max(1, min(n_resamples, _CELLS // max(n, 1)))  # draws per chunk: bounded memory (~32 MB of counts)
    for start in range(0, n_resamples, chunk):
        b = min(chunk, n_resamples - start)
        idx = rng.integers(0, n, (b, n)) + (np.arange(b) * n)[:, None]
        counts = np.bincount(idx.ravel(), minlength=b * n).reshape(b, n).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append((counts @ vals) / (counts @ mask))
    return np.vstack(out) if out else np.empty((0, len(columns)))


def _bounds(draws: np.ndarray, level: float) -> list[float | None]:
    draws = draws[~np.isnan(draws)]
    if not draws.size:
        return [None, None]
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(draws, [tail, 100 - tail])
    return [round(float(lo), 6), round(float(hi), 6)]


def intervals(columns: dict[str, Iterable[Any]], level: float = LEVEL, n_resamples: int = N_RESAMPLES,
              seed: int = SEED) -> dict[str, dict[str, Any]]:
    """Per metric: {"lo", "hi", "n"}: the percentile bootstrap interval of the mean over the questions
    that have a value, and that number of questions. lo = hi = None when fewer than 2 questions have one."""
    names = list(columns)
    cols = [list(columns[k]) for k in names]
    counts = [sum(v is not None for v in c) for c in cols]
    keep = [j for j, k in enumerate(counts) if k >= 2]
    draws = bootstrap_means([cols[j] for j in keep], n_resamples, seed) if keep else None
    out: dict[str, dict[str, Any]] = {}
    for j, name in enumerate(names):
        lo, hi = _bounds(draws[:, keep.index(j)], level) if draws is not None and j in keep else (None, None)
        out[name] = {"lo": lo, "hi": hi, "n": counts[j]}
    return out


def interval(values: Iterable[Any], level: float = LEVEL, n_resamples: int = N_RESAMPLES,
             seed: int = SEED) -> dict[str, Any]:
    """{"mean", "lo", "hi", "n"} of one score over questions (None values left out)."""
    vals = list(values)
    present = [float(v) for v in vals if v is not None]
    out = intervals({"x": vals}, level, n_resamples, seed)["x"]
    return {"mean": round(sum(present) / len(present), 6) if present else None, **out}


def paired_delta(a: Sequence[Any], b: Sequence[Any], level: float = LEVEL, n_resamples: int = N_RESAMPLES,
                 seed: int = SEED) -> dict[str, Any]:
    """Paired difference mean(b) - mean(a) over the questions where both have a value (same order):
    {"delta", "lo", "hi", "n", "separated"}; `separated` is False when the interval contains 0 (a tie
    the intervals do not separate)."""
    pairs = [(float(x), float(y)) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    diffs = [y - x for x, y in pairs]
    res = intervals({"d": diffs}, level, n_resamples, seed)["d"]
    delta = round(sum(diffs) / len(diffs), 6) if diffs else None
    return {"delta": delta, **res, "separated": separated(res["lo"], res["hi"])}


def separated(lo: float | None, hi: float | None) -> bool:
    """True when an interval of a difference excludes 0 (both bounds on one side)."""
    return lo is not None and hi is not None and (lo > 0 or hi < 0)


def mcnemar(a: Sequence[bool | None], b: Sequence[bool | None]) -> dict[str, Any]:
    """Exact McNemar test of paired verdicts (a: before/first, b: after/second; None pairs left out).

    {"n", "right_to_wrong" (a right, b wrong), "wrong_to_right", "p_value"}: the two-sided exact
    binomial p of the smaller discordant count out of b + c at 1/2 (1.0 when nothing flipped).
    """
    pairs = [(bool(x), bool(y)) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    lost = sum(x and not y for x, y in pairs)
    gained = sum(y and not x for x, y in pairs)
    p = 1.0 if lost + gained == 0 else float(binomtest(min(lost, gained), lost + gained, 0.5).pvalue)
    return {"n": len(pairs), "right_to_wrong": lost, "wrong_to_right": gained, "p_value": round(p, 6)}
