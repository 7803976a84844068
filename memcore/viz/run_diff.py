"""Tables of a run comparison (memcore.eval.compare.compare_runs): the flipped questions and one flip's two
sides (evidence each kept or lost, and where). The deltas per category are eval's text
(memcore.eval.compare_export.delta_frame)."""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["flip_sides", "flips_frame"]


def flips_frame(system: dict[str, Any]) -> pd.DataFrame:
    """The flipped questions: direction, ids, question, gold and both answers."""
    return pd.DataFrame([{"direction": f["direction"].replace("_", " "), "conv_id": f["conv_id"],
                          "question_id": f["question_id"], "category": f.get("category_name") or f.get("category"),
                          "question": f["question"], "gold": f["gold"], "A": f["a"]["prediction"],
                          "B": f["b"]["prediction"]} for f in system["flips"]],
                        columns=["direction", "conv_id", "question_id", "category", "question", "gold", "A", "B"])


def flip_sides(flip: dict[str, Any]) -> pd.DataFrame:
    """Per gold evidence turn of one flip: cited / content present in A and in B, and where each side lost it."""
    lost = {side: {m["turn_id"]: f"{m['status']} at {m['stage']}" if m.get("stage") else m["status"]
                   for m in flip[side]["missed"]} for side in ("a", "b")}

    def state(ev: dict) -> str:
        content = {True: "content in", False: "content out", None: "content n/a"}[ev["content"]]
        return f"{'cited' if ev['cited'] else 'not cited'}, {content}"

    return pd.DataFrame([{"turn": t, "A": state(flip["a"]["evidence"][t]), "A lost": lost["a"].get(t, ""),
                          "B": state(flip["b"]["evidence"].get(t, {"cited": False, "content": None})),
                          "B lost": lost["b"].get(t, "")} for t in flip["a"]["evidence"]],
                        columns=["turn", "A", "A lost", "B", "B lost"])
