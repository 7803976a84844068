"""Per-question scores read from result rows, their intervals, and where citation and content disagree.

The scores are the registered metrics (memcore.eval.metric_registry); `interval_scores` names those
that carry a 95% bootstrap interval, `row_score` reads one from a row, `block_intervals` gives each its
interval and n (memcore.eval.stats) for a group of rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memcore.eval.diagnostics import split_evidence
from memcore.eval.metric_registry import get_metric, metrics
from memcore.eval.stats import N_RESAMPLES, SEED, intervals

CI_LABEL = (f"95% percentile bootstrap interval of the mean over questions ({N_RESAMPLES} resamples, seed {SEED}); "
            "n = questions that have the score")

__all__ = ["CI_LABEL", "block_intervals", "category_sources", "citation_content", "interval_scores", "row_score"]


def interval_scores(judge: bool = True) -> tuple[str, ...]:
    """The registered metrics with a bootstrap interval, in registry order (the judge's only when it ran)."""
    return tuple(m.name for m in metrics(judge=judge) if m.interval)


def row_score(row: dict, metric: str) -> float | None:
    """One row's value of a score (booleans as 0/1; the judge as the mean over its K runs); None if absent.
    A name the registry does not hold is read as the row's field."""
    m = get_metric(metric)
    if m is not None:
        return m.score(row)
    v = row.get(metric)
    return None if v is None else float(v)


def block_intervals(rows: list[dict], judge: bool, names: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """{metric: {"lo", "hi", "n"}} for a group of rows: 95% bootstrap intervals over its questions of the
    metrics `names` (default: interval_scores()), n the questions that have the score (the judge only when it ran)."""
    wanted = [n for n in (interval_scores() if names is None else names)
              if judge or not getattr(get_metric(n), "needs_judge", False)]
    return intervals({n: [row_score(r, n) for r in rows] for n in wanted})


def citation_content(rows: list[dict], examples: int = 5) -> dict[str, Any]:
    """Gold evidence turns on which citation and content disagree, over rows with content measures:
    {"turns": judged turns, "cited_not_in_content": n, "in_content_not_cited": n, "examples": {kind:
    [{"conv_id", "question_id", "turn_id"}, ...]} (the first `examples` of each)}."""
    out: dict[str, Any] = {"turns": 0, "cited_not_in_content": 0, "in_content_not_cited": 0,
                           "examples": {"cited_not_in_content": [], "in_content_not_cited": []}}
    for r in rows:
        present = r.get("content_present") or {}
        cited = set(r.get("context_turn_ids") or [])
        for tid in split_evidence(r.get("evidence")):
            if present.get(tid) is None:
                continue
            out["turns"] += 1
            kind = "cited_not_in_content" if tid in cited and not present[tid] else \
                "in_content_not_cited" if present[tid] and tid not in cited else None
            if kind:
                out[kind] += 1
                if len(out["examples"][kind]) < examples:
                    out["examples"][kind].append({"conv_id": r.get("conv_id"), "question_id": r.get("question_id"),
                                                  "turn_id": tid})
    return out


def category_sources(rows: list[dict]) -> dict[str, int]:
    """Rows per category source of their reader: {"gold": n, "predicted": n, "none": n} (only those present;
    rows stored before the field existed are left out)."""
    out: dict[str, int] = {}
    for r in rows:
        if r.get("category_source"):
            out[r["category_source"]] = out.get(r["category_source"], 0) + 1
    return dict(sorted(out.items()))
