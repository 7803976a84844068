"""The metric registry: every per-question score of an evaluation declared once, read by everything that
lists metrics (result rows, aggregation per system and category, bootstrap intervals, the CSV, the text
report, run comparisons and the Benchmark page's tables and charts).

A metric (`Metric`) names its row field, how to compute it per question (`compute(MetricInput)`; None
for the built-in fields the row builder computes together, e.g. the evidence diagnostics), how to read
its per-question value back from a row (`read`), how a group of rows aggregates it (mean, count, or a
function returning block fields), its bounds, its labels, whether higher is better, which questions it
applies to (all, or answerable ones: not LoCoMo category 5 nor LongMemEval abstention questions), and
where it is shown (`show`); what a metric is lives in memcore.eval.metric_types (re-exported here). The
built-in metrics live in memcore.eval.metric_builtins, registered when this module is imported (first, in the
order the CSV lists them); plugins come after them. The table lives in the one registry (memcore.registry, kind
"metric": a taken name is refused, naming both owners).

Adding a metric: `register_metric(Metric("answer_words", "answer words", compute=lambda m:
len(m.prediction.split()), bounds=None, higher_better=False))`, in the process that runs the evaluation
and draws the results; or from an installed package, the entry-point group `memcore.metrics` naming a
Metric or a module that registers some (a failing plugin is skipped with a warning).
Rows stored before a metric existed have no value for it (None: left out of its mean).
"""

from __future__ import annotations

from memcore import registry
from memcore.eval.metric_builtins import BUILTIN
from memcore.eval.metric_types import (
    ALL,
    ANSWERABLE,
    CHART,
    COMPARE,
    COUNT,
    CSV,
    MEAN,
    PLACES,
    REPORT,
    ROWS,
    SUMMARY,
    Metric,
    MetricInput,
)
from memcore.registry import METRICS_GROUP, is_module

__all__ = ["ALL", "ANSWERABLE", "CHART", "COMPARE", "COUNT", "CSV", "MEAN", "PLACES", "REPORT", "ROWS", "SUMMARY",
           "Metric", "MetricInput", "get_metric", "metric_names", "metrics", "register_metric", "unregister_metric"]

KIND = "metric"


def _accept(obj: object) -> None:
    """Register what a `memcore.metrics` entry point names: a Metric, or a module that registered some."""
    if isinstance(obj, Metric):
        register_metric(obj)
    elif not is_module(obj):
        raise TypeError(f"a memcore.metrics entry point must name a Metric or a module; got {obj!r}")


registry.define(KIND, "metric", group=METRICS_GROUP, accept=_accept)


def register_metric(metric: Metric) -> Metric:
    """Add a metric after those registered so far (another metric under a taken name raises registry.NameTaken,
    a ValueError naming both owners)."""
    return registry.register(KIND, metric.name, metric, skip=(__name__,))


def unregister_metric(name: str) -> Metric | None:
    """Remove a metric (tests and plugins that register one for a while); returns it."""
    return registry.unregister(KIND, name)


def metrics(place: str | None = None, *, judge: bool = True) -> list[Metric]:
    """The registered metrics in order (built-ins first), those shown in `place` only when given; without
    `judge`, the metrics that need the judge are left out."""
    out = [e.obj for e in registry.entries(KIND)]
    return [m for m in out if (place is None or place in m.show) and (judge or not m.needs_judge)]


def metric_names(place: str | None = None, *, judge: bool = True) -> tuple[str, ...]:
    """The names of `metrics(place, judge=judge)`."""
    return tuple(m.name for m in metrics(place, judge=judge))


def get_metric(name: str) -> Metric | None:
    """The metric registered under `name`, or None."""
    return registry.get(KIND, name)


for _metric in BUILTIN:  # memcore's own metrics, first, owned by the module that declares them
    registry.register(KIND, _metric.name, _metric, owner="memcore.eval.metric_builtins",
                      module="memcore.eval.metric_builtins")
