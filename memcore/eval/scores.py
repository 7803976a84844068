"""Per-question scores read from result rows, their intervals, and where citation and content disagree.

`SCORES` names every per-question score that results average (a metric registry can take this list
over); `row_score` reads one from a row, `block_intervals` gives each its 95% bootstrap interval and n
(memcore.eval.stats) for a group of rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memcore.eval.diagnostics import split_evidence
from memcore.eval.stats import N_RESAMPLES, SEED, intervals

SCORES = ("f1", "bleu1", "rouge_2", "meteor", "similarity", "em", "judge", "evidence_recall", "all_evidence_hit",
          "content_recall", "all_content_hit", "answer_in_context", "answer_token_recall", "context_tokens")
BOUNDED = frozenset(SCORES) - {"context_tokens"}  # scores in [0, 1]
CI_LABEL = (f"95% percentile bootstrap interval of the mean over questions ({N_RESAMPLES} resamples, seed {SEED}); "
            "n = questions that have the score")

__all__ = ["BOUNDED", "CI_LABEL", "SCORES", "block_intervals", "category_sources", "citation_content", "row_score"]


def row_score(row: dict, metric: str) -> float | None:
    """One row's value of a score (booleans as 0/1; the judge as the mean over its K runs); None if absent."""
    if metric == "judge":
        runs = [v for v in (row.get("judge_runs") or [row.get("judge")]) if v is not None]
        return sum(map(float, runs)) / len(runs) if runs else None
    v = row.get(metric)
    return None if v is None else float(v)


def block_intervals(rows: list[dict], judge: bool, metrics: Iterable[str] = SCORES) -> dict[str, dict[str, Any]]:
    """{metric: {"lo", "hi", "n"}} for a group of rows: 95% bootstrap intervals over its questions, n the
    questions that have the score (the judge only when it ran)."""
    wanted = [m for m in metrics if judge or m != "judge"]
    return intervals({m: [row_score(r, m) for r in rows] for m in wanted})


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
