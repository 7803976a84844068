"""The offline rule of recent_k's focus role: the window turn sharing the most word stems with the question.

It returns the fields of the role's output as a dict (memcore_example.roles builds the model). Ties go to the
latest turn (the window is shown oldest first); a window with no shared stem gets the latest turn, said so."""

from __future__ import annotations

from typing import Any

from memcore.text.terms import stems


def offline_focus(inputs: dict[str, Any]) -> dict[str, Any]:
    """The id of the window item sharing the most stems with the question, and why."""
    want = set(stems(inputs.get("question", "")))
    items = [i for i in inputs.get("items", []) or [] if isinstance(i, dict) and i.get("id")]
    if not items:
        return {"turn_id": "", "reason": "offline engine: the window is empty"}
    shared = [len(want & set(stems(i.get("text", "")))) for i in items]
    best = max(range(len(items)), key=lambda n: (shared[n], n))
    why = (f"offline engine: shares {shared[best]} word stem(s) with the question, the most in the window"
           if shared[best] else "offline engine: no turn shares a word stem with the question; the latest one")
    return {"turn_id": items[best]["id"], "reason": why}
