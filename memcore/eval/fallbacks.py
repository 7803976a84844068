"""Fallbacks in plain sight: which answers came from a fallback path rather than the system's own retrieval.

Kinds (a row may carry several):
- "full_conversation": the system's loop found no answer and its context became the whole conversation
  (trace structure `fallback` = True, e.g. an iterative loop's end-of-loop fallback);
- "backfill_only": every context item came from a backfill stage (origin "backfill"), none from the
  system's own mechanism (e.g. a chain-growing system that grew no chain);
- "unusable_reply": a real model's reply was unusable and the role's fallback output was used
  (`llm_unusable=fallback`; the trace's errors name it).
"""

from __future__ import annotations

from typing import Any

from memcore.types import Trace

FALLBACK_KINDS = ("full_conversation", "backfill_only", "unusable_reply")
__all__ = ["FALLBACK_KINDS", "answer_fallbacks", "fallback_counts"]


def answer_fallbacks(trace: Trace) -> list[str]:
    """The fallback kinds behind one answer (empty when none)."""
    out = []
    if (trace.structure or {}).get("fallback") is True:
        out.append("full_conversation")
    if trace.items and all(it.origin == "backfill" for it in trace.items):
        out.append("backfill_only")
    if any("llm_unusable=fallback" in e for e in trace.errors):
        out.append("unusable_reply")
    return out


def fallback_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Rows per fallback kind, plus "any": rows with at least one (rows stored before the field count as none)."""
    out = {k: sum(k in (r.get("fallbacks") or []) for r in rows) for k in FALLBACK_KINDS}
    out["any"] = sum(bool(r.get("fallbacks")) for r in rows)
    return out
