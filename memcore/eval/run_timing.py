"""Where an evaluation's time went: the shared work apart from each system's ingest and answering.

The run's progress messages carry the seconds (memcore.eval.workers): {"phase": "shared", "seconds": {"model
load": s, "turn embedding": s}} once per conversation before any system (Workbench.prepare), and {"phase":
"timing", "system", "seconds": {"ingest": s, "answer": s}} after each system's questions. `RunTiming` sums
them over conversations (and worker processes: their sum can exceed the wall time) into results["timing"]
(what this call did: a resumed run times only what it resumed),
which result comparisons ignore like every other timing field (memcore.eval.report.TIMING_KEYS).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

__all__ = ["RunTiming", "timing_lines"]


class RunTiming:
    """Seconds of shared work (by step) and of each system's ingest and answering, from progress messages."""

    def __init__(self) -> None:
        self.shared: Counter = Counter()
        self.systems: dict[str, Counter] = {}

    def add(self, msg: dict[str, Any]) -> None:
        """Count a progress message's seconds when it carries some ("shared" and "timing" phases)."""
        phase, seconds = msg.get("phase"), msg.get("seconds")
        if not isinstance(seconds, dict):
            return
        if phase == "shared":
            self.shared.update(seconds)
        elif phase == "timing" and msg.get("system"):
            self.systems.setdefault(msg["system"], Counter()).update(seconds)

    def as_dict(self) -> dict[str, Any]:
        """{"shared_seconds": {step: s}, "systems_seconds": {system: {"ingest": s, "answer": s}}}, 3 decimals."""
        return {"shared_seconds": {k: round(v, 3) for k, v in self.shared.items()},
                "systems_seconds": {s: {k: round(v, 3) for k, v in c.items()} for s, c in self.systems.items()}}


def timing_lines(timing: dict[str, Any] | None) -> list[str]:
    """The report's timing lines: the shared work on its own line, then each system's ingest and answering."""
    if not timing:
        return []
    out = []
    shared = timing.get("shared_seconds") or {}
    if shared:
        out.append("shared work (charged to no system): " + ", ".join(f"{k} {v:.1f}s" for k, v in shared.items()))
    for name, sec in (timing.get("systems_seconds") or {}).items():
        out.append(f"  {name}: ingest {sec.get('ingest', 0.0):.1f}s, answering {sec.get('answer', 0.0):.1f}s")
    placed = timing.get("workers") or {}
    if placed.get("processes", 1) > 1:
        out.append(f"processes: {placed['processes']} ({placed.get('why', '')}); in this process: "
                   f"{', '.join(placed.get('here') or []) or 'none'}; spawned: "
                   f"{', '.join(placed.get('spawned') or []) or 'none'}")
        for name, why in (placed.get("handed_back") or {}).items():
            out.append(f"  {name} ran in this process: {why}")
    return out
