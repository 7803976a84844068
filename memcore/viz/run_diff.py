"""Tables of a run comparison (memcore.eval.compare.compare_runs): deltas per category, flipped questions,
and one flip's two sides (evidence each kept or lost, and where)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from memcore.eval.compare import delta_scores
from memcore.eval.compare_export import delta_text, mcnemar_text

__all__ = ["delta_frame", "flip_sides", "flips_frame"]


def delta_frame(system: dict[str, Any]) -> pd.DataFrame:
    """One row per category and overall: n, each delta (B - A) with its 95% interval ('*' = excludes 0), McNemar."""
    rows = []
    for key, block in [("overall", system["overall"]), *system["categories"].items()]:
        row: dict[str, Any] = {"category": "overall" if key == "overall" else str(block.get("name", key)),
                               "n": block["n"]}
        for m in delta_scores():
            if block.get(m):
                row[f"Δ {m}"] = delta_text(block[m])
        row["McNemar"] = mcnemar_text(block["mcnemar"])
        rows.append(row)
    return pd.DataFrame(rows)


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
