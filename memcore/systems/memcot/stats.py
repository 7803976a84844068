"""MemCoT's mechanism statistics: reasoning steps (the paper reports 1.87 on LoCoMo) and the share of
questions answered from the full conversation."""

from __future__ import annotations

from typing import Any

from memcore.systems.memcot.structure import MemCoTStructure
from memcore.systems.parts import Mechanism, Stats, mean


def question(structure: dict[str, Any]) -> Stats:
    """One answer's steps and whether it fell back to the full conversation."""
    st = MemCoTStructure.from_dict(structure)
    return {"steps": st.steps, "fallback": st.fell_back}


def summarize(stats: list[Stats], _: dict[str, Any]) -> Stats:
    """Mean steps and the fallback rate over questions."""
    return {"steps_mean": mean([s["steps"] for s in stats]),
            "fallback_rate": mean([s["fallback"] for s in stats])}


MECHANISM = Mechanism(question, summarize, {
    "steps_mean": "reasoning steps per question (the paper: 1.87 on LoCoMo)",
    "fallback_rate": "share of questions answered from the full conversation"})
