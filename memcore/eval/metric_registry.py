"""The metric registry: every per-question score of an evaluation declared once, read by everything that
lists metrics (result rows, aggregation per system and category, bootstrap intervals, the CSV, the text
report, run comparisons and the Benchmark page's tables and charts).

A metric (`Metric`) names its row field, how to compute it per question (`compute(MetricInput)`; None
for the built-in fields the row builder computes together, e.g. the evidence diagnostics), how to read
its per-question value back from a row (`read`), how a group of rows aggregates it (mean, count, or a
function returning block fields), its bounds, its labels, whether higher is better, which questions it
applies to (all, or answerable ones: not LoCoMo category 5 nor LongMemEval abstention questions), and
where it is shown (`show`). The built-in metrics live in memcore.eval.metric_builtins, which registers them
when imported (memcore.eval imports it, so they come first, in the order the CSV lists them); plugins come
after them. The table lives in the one registry (memcore.registry, kind "metric": a taken name is refused,
naming both owners).

Adding a metric: `register_metric(Metric("answer_words", "answer words", compute=lambda m:
len(m.prediction.split()), bounds=None, higher_better=False))`, in the process that runs the evaluation
and draws the results; or from an installed package, the entry-point group `memcore.metrics` naming a
Metric or a module that registers some (a failing plugin is skipped with a warning).
Rows stored before a metric existed have no value for it (None: left out of its mean).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memcore import registry
from memcore.registry import METRICS_GROUP, is_module
from memcore.types import Answer, Question

ALL, ANSWERABLE = "all", "answerable"  # which questions a metric applies to
MEAN, COUNT = "mean", "count"  # aggregations: mean of the non-None values (booleans 0/1); count of true values
CSV, REPORT, CHART, SUMMARY, ROWS, COMPARE = "csv", "report", "chart", "summary", "rows", "compare"
PLACES = frozenset({CSV, REPORT, CHART, SUMMARY, ROWS, COMPARE})
Value = float | int | bool | None

__all__ = ["ALL", "ANSWERABLE", "CHART", "COMPARE", "COUNT", "CSV", "MEAN", "PLACES", "REPORT", "ROWS", "SUMMARY",
           "Metric", "MetricInput", "get_metric", "metric_names", "metrics", "register_metric", "unregister_metric"]


@dataclass(frozen=True)
class MetricInput:
    """What a metric's `compute` gets for one answered question: the question, the answer (its trace holds
    the context), the prediction and gold texts, whether it is an abstention question, and the run's
    embedder and gold turn texts when it has them."""

    question: Question
    answer: Answer
    prediction: str
    gold: Any
    abstain: bool
    embedder: Any = None
    turn_texts: Mapping[str, str] = field(default_factory=dict)


def _field(name: str) -> Callable[[dict], Value]:
    def read(row: dict) -> Value:
        v = row.get(name)
        return v if v is None or isinstance(v, bool) else float(v)
    return read


@dataclass(frozen=True)
class Metric:
    """One per-question score.

    - `name`: its field in result rows and results blocks; `label`: how pages name it ("citation
      recall"); `column`: its header in the text report (default: the name); `description`: what it is,
      written to results["metrics"] ("" leaves it out).
    - `compute(MetricInput) -> value`: its per-question value (None: not applicable); None for fields
      the row builder writes itself. Floats are rounded to 6 digits in the row.
    - `read(row) -> value`: its per-question value from a stored row (default: the row's field).
    - `aggregate`: MEAN, COUNT, or a function (rows) -> {block field: value} (the judge's mean over runs).
    - `bounds` (None: unbounded), `higher_better`, `applies` (ALL or ANSWERABLE), `interval` (a 95%
      bootstrap interval per block), `headline` (that interval shown in the CSV, the text report, the
      Benchmark's interval table and run comparisons), `needs_judge` (only when the judge ran),
      `extra` (further block fields its aggregate writes that the CSV and report carry, e.g. judge_std),
      `digits` (decimals when drawn; 0 for token counts), `show` (PLACES it appears in).
    """

    name: str
    label: str = ""
    compute: Callable[[MetricInput], Value] | None = None
    read: Callable[[dict], Value] | None = None
    aggregate: str | Callable[[list[dict]], dict[str, Any]] = MEAN
    bounds: tuple[float, float] | None = (0.0, 1.0)
    higher_better: bool = True
    applies: str = ALL
    interval: bool = True
    headline: bool = False
    needs_judge: bool = False
    extra: tuple[str, ...] = ()
    column: str = ""
    description: str = ""
    digits: int = 3
    show: frozenset[str] = PLACES - {COMPARE}

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("a Metric needs a name (its field in result rows)")
        if self.applies not in (ALL, ANSWERABLE):
            raise ValueError(f"metric {self.name!r}: applies must be {ALL!r} or {ANSWERABLE!r}, not {self.applies!r}")
        if not callable(self.aggregate) and self.aggregate not in (MEAN, COUNT):
            raise ValueError(f"metric {self.name!r}: aggregate must be {MEAN!r}, {COUNT!r} or a function")
        unknown = set(self.show) - PLACES
        if unknown:
            raise ValueError(f"metric {self.name!r}: unknown place(s) {sorted(unknown)}; places: {sorted(PLACES)}")
        object.__setattr__(self, "show", frozenset(self.show))
        object.__setattr__(self, "label", self.label or self.name.replace("_", " "))
        object.__setattr__(self, "column", self.column or self.name)
        if self.read is None:
            object.__setattr__(self, "read", _field(self.name))

    def value(self, row: dict) -> Value:
        """This metric's per-question value in a row (booleans as booleans), None when absent."""
        return self.read(row)  # type: ignore[misc]

    def score(self, row: dict) -> float | None:
        """The per-question value as a number (booleans 0/1), what means and intervals use; None if absent."""
        v = self.value(row)
        return None if v is None else float(v)

    @property
    def bounded(self) -> bool:
        """Whether its scores lie in [0, 1]."""
        return self.bounds == (0.0, 1.0)


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
