"""RecMem's mechanism statistics: consolidations fired and interaction units, summed over conversations,
and construction LLM calls per unit."""

from __future__ import annotations

from typing import Any

from memcore.systems.parts import Mechanism, Stats, per_conversation
from memcore.systems.recmem.structure import RecMemStructure


def question(structure: dict[str, Any]) -> Stats:
    """The built memory's units and consolidations (the same on every question of a conversation)."""
    ex = RecMemStructure.from_dict(structure).exchanges
    return {"units": ex.units, "consolidations": ex.consolidations}


def summarize(stats: list[Stats], construction: dict[str, Any]) -> Stats:
    """Sums over conversations; `construction["calls"]` = the ledger's ingest calls."""
    units = sum(per_conversation(stats, "units").values())
    calls = construction.get("calls")
    return {"consolidations": int(sum(per_conversation(stats, "consolidations").values())),
            "units": int(units), "construction_calls": calls,
            "calls_per_unit": round(calls / units, 4) if units and calls is not None else None}


MECHANISM = Mechanism(question, summarize, {
    "consolidations": "consolidations fired, summed over conversations",
    "units": "interaction units, summed over conversations",
    "construction_calls": "construction LLM calls (the ledger)",
    "calls_per_unit": "construction LLM calls per unit"})
