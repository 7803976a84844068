"""Fallbacks in plain sight: which answers came from a fallback path rather than the system's own retrieval.

Kinds (a row may carry several):
- "full_conversation": the system's loop found no answer and its context became the whole conversation
  (trace structure `fallback` = True, e.g. an iterative loop's end-of-loop fallback);
- "backfill_only": every context item came from a backfill stage (origin "backfill"), none from the
  system's own mechanism (e.g. a chain-growing system that grew no chain);
- "unusable_reply": a real model's reply was unusable and the role's fallback output was used
  (`llm_unusable=fallback`; the trace's errors name it);
- "context_cut": the context did not fit the model's context window and the system cut it by its named rule
  (trace structure `context_cut` = {rule, kept, of, window}: full_context keeps the turns nearest the question).
"""

from __future__ import annotations

from typing import Any

from memcore.types import Trace

FALLBACK_KINDS = ("full_conversation", "backfill_only", "unusable_reply", "context_cut")
FALLBACK_TEXT = {  # each kind in plain words, as answer cards say it
    "full_conversation": "Fallback: the system's own search found no answer, so it answered from the whole "
                         "conversation.",
    "backfill_only": "Fallback: every context item came from a backfill stage, none from the system's own mechanism.",
    "unusable_reply": "Fallback: the model's reply was unusable, so the role's fallback output was used.",
    "context_cut": "Context cut to fit: the conversation exceeds the model's context window, so only part of it "
                   "was given to the model.",
}
GOLD_LABEL_TEXT = ("Gold label: the reader chose its prompt by the question's gold category (real questions carry "
                   "none; config category_source = predicted avoids it).")
__all__ = ["FALLBACK_KINDS", "FALLBACK_TEXT", "GOLD_LABEL_TEXT", "answer_fallbacks", "answer_marks", "cut_text",
           "fallback_counts"]


def answer_fallbacks(trace: Trace) -> list[str]:
    """The fallback kinds behind one answer (empty when none)."""
    out = []
    if (trace.structure or {}).get("fallback") is True:
        out.append("full_conversation")
    if trace.items and all(it.origin == "backfill" for it in trace.items):
        out.append("backfill_only")
    if any("llm_unusable=fallback" in e for e in trace.errors):
        out.append("unusable_reply")
    if (trace.structure or {}).get("context_cut"):
        out.append("context_cut")
    return out


def answer_marks(trace: Trace) -> list[str]:
    """What an answer card must say about how the answer came about, in plain words: each fallback kind
    (answer_fallbacks) and, when its reader read the gold category (trace.reader category_source "gold", which
    the reader records only for a family that picks its prompt by category), the gold label."""
    out = [cut_text(trace) if k == "context_cut" else FALLBACK_TEXT[k] for k in answer_fallbacks(trace)]
    if (trace.reader or {}).get("category_source") == "gold":
        out.append(GOLD_LABEL_TEXT)
    return out


def cut_text(trace: Trace) -> str:
    """The context_cut mark with its numbers: the rule, the items kept of how many, the window."""
    cut = (trace.structure or {}).get("context_cut") or {}
    if not isinstance(cut, dict) or "kept" not in cut:
        return FALLBACK_TEXT["context_cut"]
    return (f"Context cut to fit: the model's context window ({cut.get('window')} tokens, {cut.get('window_source', '')}) "
            f"holds {cut['kept']} of the {cut.get('of')} turns; rule: the turns {cut.get('rule', '')}.")


def fallback_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Rows per fallback kind, plus "any": rows with at least one (rows stored before the field count as none)."""
    out = {k: sum(k in (r.get("fallbacks") or []) for r in rows) for k in FALLBACK_KINDS}
    out["any"] = sum(bool(r.get("fallbacks")) for r in rows)
    return out
