"""What a metric is (memcore.eval.metric_registry registers them): `Metric` (a per-question score declared once:
its field, computation, aggregation, bounds, labels, where it is shown) and `MetricInput` (what its `compute` gets
for one answered question), with the constants naming aggregations, question sets and places.

Apart from the registry so that the built-in metrics (memcore.eval.metric_builtins) declare themselves without
importing the registry that imports them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memcore.types import Answer, Question

ALL, ANSWERABLE = "all", "answerable"  # which questions a metric applies to
MEAN, COUNT = "mean", "count"  # aggregations: mean of the non-None values (booleans 0/1); count of true values
CSV, REPORT, CHART, SUMMARY, ROWS, COMPARE = "csv", "report", "chart", "summary", "rows", "compare"
PLACES = frozenset({CSV, REPORT, CHART, SUMMARY, ROWS, COMPARE})
Value = float | int | bool | None

__all__ = ["ALL", "ANSWERABLE", "CHART", "COMPARE", "COUNT", "CSV", "MEAN", "PLACES", "REPORT", "ROWS", "SUMMARY",
           "Metric", "MetricInput", "Value"]


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
