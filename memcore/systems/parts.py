"""The parts a system package declares about itself, read by the rest of memcore through the system class.

- `Mechanism` (BaseSystem.mechanism): what a system's own mechanism did over an evaluation run.
  `per_question(structure)` reads one answer's `Trace.structure` (the stored JSON dict; each package
  reads it through its typed `structure.py`) into a few numbers, stored in the result row as
  `mechanism`; `summarize(stats, construction)` turns a run's per-question numbers (each with its
  `conv_id`) and the system's ingest usage from the ledger (`calls`) into the run-level block
  `results["systems"][name]["mechanism"]`; `labels` says in words what each run-level key is (display).
  memcore.eval.mechanism drives it for every system that has one.
- `Fidelity` (BaseSystem.fidelity): the system's rows of docs/fidelity.md (paper step, value, where in
  the code, status), under the doc's section `section`; tests/systems/test_fidelity.py checks that the
  doc holds them and that the config defaults and roles they name are the code's.

Plus the two helpers every package's statistics use (`mean`, `per_conversation`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Structure = dict[str, Any]
Stats = dict[str, Any]


@dataclass(frozen=True)
class Mechanism:
    """How to read one system's mechanism: per-question numbers, their run-level summary, and labels."""

    per_question: Callable[[Structure], Stats]
    summarize: Callable[[list[Stats], dict[str, Any]], Stats]
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FidelityRow:
    """One row of a system's fidelity table: a paper step, its value, where memcore does it, the status."""

    step: str
    value: str
    where: str
    status: str

    def cells(self) -> tuple[str, str, str, str]:
        """The four cells, in the doc's column order."""
        return self.step, self.value, self.where, self.status


@dataclass(frozen=True)
class Fidelity:
    """A system's fidelity rows and the docs/fidelity.md section (`## section`) that shows them, with the prose
    above its table (`intro`: the paper, its appendices, where the config lives); scripts/gen_docs.py writes
    the section from these."""

    section: str
    rows: tuple[FidelityRow, ...]
    intro: str = ""


def mean(values: list[float | int | None]) -> float | None:
    """The mean of the values that are not None, rounded to 4 places; None when there are none."""
    vals = [float(v) for v in values if v is not None]
    return round(sum(vals) / len(vals), 4) if vals else None


def per_conversation(stats: list[Stats], key: str) -> dict[str, float]:
    """A memory-level number per conversation (the same on every question; the largest is kept)."""
    out: dict[str, float] = {}
    for s in stats:
        if s.get(key) is not None:
            out[s["conv_id"]] = max(out.get(s["conv_id"], 0.0), float(s[key]))
    return out
