"""Mechanism statistics: what each memory system's own mechanism did over an evaluation run.

Scores say how well a system answered; these say whether its mechanism ran as the paper describes
(e.g. chains that all stop at length 1 are plain top-k retrieval). Each system declares its statistics
on its class (`BaseSystem.mechanism`, a memcore.systems.parts.Mechanism; built-ins in
memcore/systems/<name>/stats.py, reading the trace through the package's typed structure.py); this
module only drives them, for every registered system (plugins included). Two steps:
- per question, `question_stats(system, structure)` reads the answer trace's `structure` into a few
  numbers, stored in the result row as `mechanism` (rows stored before this existed have none and
  are left out);
- per run, `summarize(system, rows, construction)` turns them into `results["systems"][name]
  ["mechanism"]`; `construction` is the system's ingest usage from the ledger (calls).

Systems without a mechanism (baselines, most plugins) and names no longer registered get an empty
block. Means are over questions (or chains, or conversations, as each system's stats.py names); None
when there is nothing to average. `labels(system)` says in words what each run-level key is.
"""

from __future__ import annotations

from typing import Any

from memcore.systems import load_all
from memcore.systems.parts import Mechanism, Stats


def mechanism_of(system: str) -> Mechanism | None:
    """The mechanism statistics the system registered under `system` declares; None for none (or no such
    system)."""
    cls = load_all().get(system)
    return getattr(cls, "mechanism", None) if cls is not None else None


def labels(system: str) -> dict[str, str]:
    """What each run-level mechanism key of `system` means, for display ({} without a mechanism)."""
    mech = mechanism_of(system)
    return dict(mech.labels) if mech is not None else {}


def question_stats(system: str, structure: dict[str, Any] | None) -> Stats | None:
    """The per-question mechanism numbers of a trace structure, or None for a system without any."""
    mech = mechanism_of(system)
    if mech is None or not isinstance(structure, dict):
        return None
    try:
        return mech.per_question(structure)
    except (KeyError, TypeError, ValueError, AttributeError) as e:  # a trace of another shape: say so, score on
        return {"error": f"unreadable trace structure ({type(e).__name__}: {e})"}


def summarize(system: str, rows: list[dict[str, Any]], construction: dict[str, Any] | None = None) -> Stats:
    """The run-level mechanism block of a system from its result rows (their `mechanism` and `conv_id`)."""
    mech = mechanism_of(system)
    if mech is None:
        return {}
    stats = [{**r["mechanism"], "conv_id": r.get("conv_id", "")} for r in rows
             if isinstance(r.get("mechanism"), dict) and "error" not in r["mechanism"]]
    out = mech.summarize(stats, construction or {})
    out["questions"] = len(stats)
    skipped = len(rows) - len(stats)
    if skipped:
        out["questions_without_stats"] = skipped
    return out
