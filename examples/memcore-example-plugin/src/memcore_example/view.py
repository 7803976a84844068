"""recent_k's view: its colour, its place in lists, its Ask/Export structure (read through the typed structure,
structure.py) and its Replay growth view. Registered through the `memcore.views` entry point."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from memcore.types import Trace
from memcore.viz.parts import Block, Part, Text
from memcore.viz.replay import ReplayData
from memcore.viz.views import ItemsAt, SystemView
from memcore_example.structure import RecentKStructure

COLOR = "#332288"  # indigo: not used by a built-in system


def recent_structure(trace: Trace, texts: Mapping[str, str]) -> list[Block]:
    """One retrieval: a note on the window and the focus turn, and the window as a table with the retriever's
    scores, the focus turn marked."""
    s = RecentKStructure.from_dict(trace.structure)
    window = s.window
    focus = {"role": f"The focus role (recent_k_focus) named {s.focus}: it goes to the reader first."
             if s.focus else "The focus role (recent_k_focus) named no turn of the window.",
             "unusable": "The focus role's reply was unusable: no focus turn.",
             "off": "The focus role is off (focus = false)."}.get(s.focus_mode, "")
    note = (f"The memory is the last {s.k} turns: {window[0]} to {window[-1]}; "
            f"the {s.retriever or trace.retriever} retriever ranks {s.best or '?'} first. {focus}"
            if window else "The window is empty.")
    table = pd.DataFrame([{"turn": it.turn_ids[0], "focus": "focus" if it.turn_ids[0] == s.focus else "",
                           "rank": it.rank, "score": round(it.score, 3),
                           "text": texts.get(it.turn_ids[0], it.text)} for it in trace.items])
    return [Part("Recent window", Text(note, "info")),
            Part("Window turns", table, caption="Every turn in the window goes to the answer model, in this order.")]


def recent_growth(rd: ReplayData, step: int, items_at: ItemsAt) -> list[Block]:
    """The window at one Replay step."""
    items = sorted(items_at("recent", step), key=lambda it: it.created_step)
    table = pd.DataFrame([{"turn": ", ".join(it.turn_ids), "since step": it.created_step, "text": it.text}
                          for it in items])
    return [Part("Window at this step", table, caption=f"{len(items)} turn(s) in memory after step {step}.")]


VIEW = SystemView("recent_k", color=COLOR, rank=90, structure=recent_structure, growth=recent_growth,
                  growth_rank=9, picks=frozenset(), pick_when_built=False)  # starts unselected
