"""What the Benchmark page's tables, charts and pickers are handed, read from the metric registry: which metrics
to offer (`metric_choices`, `interval_metrics`, `summary_scores`), how each is drawn (`metric_look`,
`headline_looks`: memcore.viz.bench.MetricLook), and a run's per-question rows as a table (`rows_frame`).

memcore.viz draws plain data and never imports eval: this module is where eval hands it what it needs."""

from __future__ import annotations

from typing import Any

import pandas as pd

from memcore.eval.metric_registry import CHART, ROWS, SUMMARY, Metric, get_metric, metric_names, metrics
from memcore.eval.report import variant_of
from memcore.viz.bench import MetricLook

__all__ = ["headline_looks", "interval_metrics", "metric_choices", "metric_look", "row_columns", "rows_frame",
           "summary_scores"]


def _look(m: Metric) -> MetricLook:
    return MetricLook(name=m.name, label=m.label, digits=m.digits, higher_better=m.higher_better, bounded=m.bounded,
                      needs_judge=m.needs_judge)


def metric_look(name: str) -> MetricLook:
    """How a metric is drawn: a registered one's label, decimals, direction and bounds; `n` (a count) with no
    decimals; an unknown name the default look."""
    if name == "n":
        return MetricLook(name="n", label="n", digits=0)
    m = get_metric(name)
    return MetricLook(name=name, label=name) if m is None else _look(m)


def headline_looks() -> list[MetricLook]:
    """The headline metrics (with intervals in the CSV, report and interval table), in registry order."""
    return [_look(m) for m in metrics() if m.headline]


def metric_choices() -> list[str]:
    """The Benchmark page's metric picker: the registered metrics shown in charts, the headline ones (with
    intervals: F1, judge, citation and content recall, answer in context) first, then the rest in registry
    order, then n."""
    shown = metrics(CHART)
    return [m.name for m in shown if m.headline] + [m.name for m in shown if not m.headline] + ["n"]


def interval_metrics() -> tuple[str, ...]:
    """The metrics the interval chart can draw: registered, bounded, with a bootstrap interval."""
    return tuple(m.name for m in metrics() if m.interval and m.bounds is not None)


def summary_scores() -> tuple[str, ...]:
    """The overall scores of the summary table (memcore.viz.bench.summary_table): the registry's summary metrics."""
    return metric_names(SUMMARY)


def row_columns() -> list[str]:
    """Columns of the drill-down's per-question rows: ids, texts, the registry's row metrics, failure, fallback."""
    return ["system", "conv_id", "question_id", "category", "question", "gold", "answer", *metric_names(ROWS),
            "failure", "fallback"]


def rows_frame(rows: list[dict[str, Any]], system: str | None = None, category: str | None = None) -> pd.DataFrame:
    """Per-question rows of a run, filtered to one system (a result set: its canonical variant name, as
    results["systems"] keys it) and category (a drill-down from a table cell)."""
    scores = metric_names(ROWS)
    out = []
    for r in rows:
        if system and variant_of(r) != system:
            continue
        if category and str(r.get("category")) != str(category) and r.get("category_name") != category:
            continue
        out.append({"system": variant_of(r), "conv_id": r.get("conv_id"), "question_id": r.get("question_id"),
                    "category": r.get("category_name", r.get("category")), "question": r.get("question", ""),
                    "gold": r.get("gold", r.get("gold_answer", "")), "answer": r.get("answer", r.get("prediction", "")),
                    **{m: r.get(m) for m in scores},
                    "failure": r.get("failure"), "fallback": ", ".join(r.get("fallbacks") or [])})
    return pd.DataFrame(out, columns=row_columns())
