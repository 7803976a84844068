"""Agreement and rate statistics for human evaluation (pure functions)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import combinations


def wilson_interval(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for a proportion k/n ((0, 0) when n == 0)."""
    if n == 0:
        return (0.0, 0.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa of two raters over the same items: (p_o - p_e) / (1 - p_e).

    Returns 1.0 when both raters use one identical category throughout (perfect agreement
    with p_e = 1), and None for no items.
    """
    if len(a) != len(b):
        raise ValueError(f"raters labelled different numbers of items ({len(a)} vs {len(b)})")
    n = len(a)
    if n == 0:
        return None
    po = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    pe = sum(ca[c] * cb[c] for c in set(ca) | set(cb)) / (n * n)
    if pe == 1.0:
        return 1.0 if po == 1.0 else 0.0
    return (po - pe) / (1 - pe)


def fleiss_kappa(table: Sequence[Mapping[str, int]]) -> float | None:
    """Fleiss' kappa from per-item category counts (every item rated by the same number n >= 2).

    kappa = (P_bar - P_e) / (1 - P_e), P_i = (sum_j n_ij^2 - n) / (n (n - 1)),
    P_e = sum_j p_j^2 with p_j the share of all ratings in category j (Fleiss 1971).
    """
    rows = [dict(r) for r in table if sum(r.values()) > 0]
    if not rows:
        return None
    n = sum(rows[0].values())
    if n < 2 or any(sum(r.values()) != n for r in rows):
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of ratings for every item")
    cats = sorted({c for r in rows for c in r})
    total = n * len(rows)
    p_j = {c: sum(r.get(c, 0) for r in rows) / total for c in cats}
    p_i = [(sum(v * v for v in r.values()) - n) / (n * (n - 1)) for r in rows]
    p_bar = sum(p_i) / len(rows)
    p_e = sum(p * p for p in p_j.values())
    if p_e == 1.0:
        return 1.0 if p_bar == 1.0 else 0.0
    return (p_bar - p_e) / (1 - p_e)


MIN_KAPPA_ITEMS = 10  # fewer shared items: a kappa is shown with the caveat that it cannot be read yet


def agreement(labels: Mapping[str, Mapping[str, str]]) -> dict:
    """Agreement over {item_id: {annotator: label}} (labels other than skip); `caveat` (and each pair's
    `too_few_items`) when a kappa rests on fewer than MIN_KAPPA_ITEMS shared items.

    Fleiss' kappa uses the items labelled by every annotator; pairwise Cohen's kappa uses the
    items both annotators of a pair labelled.
    """
    annotators = sorted({a for per in labels.values() for a in per})
    full = [per for per in labels.values() if len(per) == len(annotators)]
    fleiss = fleiss_kappa([Counter(per.values()) for per in full]) if len(annotators) >= 2 and full else None
    pairs = []
    for x, y in combinations(annotators, 2):
        both = [(per[x], per[y]) for per in labels.values() if x in per and y in per]
        k = cohen_kappa([p[0] for p in both], [p[1] for p in both]) if both else None
        agree = sum(p[0] == p[1] for p in both) / len(both) if both else None
        pairs.append({"a": x, "b": y, "n": len(both), "cohen_kappa": k, "agreement": agree})
    caveat = ""
    if fleiss is not None and len(full) < MIN_KAPPA_ITEMS:
        caveat = (f"Too few items: Fleiss' kappa from {len(full)} item(s) labelled by every annotator swings with a "
                  f"single label (it reads -1 to 1 by chance); label at least {MIN_KAPPA_ITEMS} shared items "
                  "before reading it.")
    for p in pairs:
        p["too_few_items"] = p["cohen_kappa"] is not None and p["n"] < MIN_KAPPA_ITEMS
    return {"annotators": annotators, "n_items_all_raters": len(full), "fleiss_kappa": fleiss, "pairs": pairs,
            "caveat": caveat}
