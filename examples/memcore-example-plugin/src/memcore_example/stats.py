"""recent_k's mechanism statistics (memcore.systems.parts.Mechanism; `RecentKSystem.mechanism`): how full the
window was, and whether the focus role agreed with the retriever and how far back its turn lay."""

from __future__ import annotations

from typing import Any

from memcore.systems.parts import Mechanism, Stats, mean
from memcore_example.structure import RecentKStructure


def question(structure: dict[str, Any]) -> Stats:
    """One answer: the window's size, whether the focus role was asked and named the retriever's best turn,
    and the focus turn's place from the end of the window."""
    st = RecentKStructure.from_dict(structure)
    asked = st.focus_mode == "role"
    return {"window": len(st.window), "focused": bool(st.focus) if asked else None,
            "focus_is_best": (st.focus == st.best) if asked and st.focus else None, "focus_back": st.focus_rank}


def summarize(stats: list[Stats], _: dict[str, Any]) -> Stats:
    """Means over the questions (those where the role was asked, for the focus numbers)."""
    return {"window_mean": mean([s["window"] for s in stats]),
            "focus_rate": mean([s["focused"] for s in stats]),
            "focus_agrees_rate": mean([s["focus_is_best"] for s in stats]),
            "focus_back_mean": mean([s["focus_back"] for s in stats])}


MECHANISM = Mechanism(question, summarize, {
    "window_mean": "turns in the window per question (at most k)",
    "focus_rate": "share of questions where the focus role named a window turn",
    "focus_agrees_rate": "share of focused questions where the focus turn is the retriever's best",
    "focus_back_mean": "how far back the focus turn lies (1 = the latest turn)"})
