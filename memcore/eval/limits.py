"""The limits a run met, named with its results: turns longer than the embedder's input window (embedded whole
by memcore.embed.LONG_TEXT_RULE, never cut), the model's context window, and the questions whose prompt did not
fit it (memcore.llm.windows: not sent, so not answered; a rerun fails the same way). Stored in the run's record
(payload "limits") and in the results dict; shown by `memcore eval` and the Benchmark page (limit_lines)."""

from __future__ import annotations

from typing import Any

from memcore.embed import LONG_TEXT_RULE_TEXT, long_text_counts
from memcore.llm.windows import DOES_NOT_FIT
from memcore.types import Conversation


def run_limits(wb: Any, convs: list[Conversation]) -> dict[str, Any]:
    """The run's limits known before it answers: long turns of its conversations and the model's context window."""
    return {"long_turns": long_text_counts(wb.embedder, [t.embed_text for c in convs for t in c.turns]),
            "context_window": {"tokens": wb.llm.window, "source": wb.llm.window_source}, "does_not_fit": {}}


def count_does_not_fit(limits: dict[str, Any], msg: dict[str, Any]) -> None:
    """Count an engine's error message against its system when its prompt did not fit the context window."""
    if msg.get("phase") == "error" and DOES_NOT_FIT in str(msg.get("error", "")):
        dnf = limits.setdefault("does_not_fit", {})
        dnf[msg.get("system", "")] = dnf.get(msg.get("system", ""), 0) + 1


def limit_lines(results: dict[str, Any]) -> list[str]:
    """Plain lines naming the limits a run met (none when it met none or predates them)."""
    lim = results.get("limits") or {}
    out = []
    lt = lim.get("long_turns") or {}
    if lt.get("window"):
        over = "an unknown number" if lt.get("over") is None else str(lt["over"])
        out.append(f"long turns: {over} of {lt.get('of')} turns exceed the embedder's {lt['window']}-token window; "
                   f"{LONG_TEXT_RULE_TEXT} (rule {lt.get('rule')})")
    cw = lim.get("context_window") or {}
    out.append(f"context window: {cw['tokens']} tokens ({cw.get('source')})" if cw.get("tokens") else
               "context window: none known for this model (no prompt is checked; MEMCORE_LLM_CONTEXT_WINDOW sets one)")
    dnf = {s: n for s, n in (lim.get("does_not_fit") or {}).items() if n}
    if dnf:
        out.append("questions whose prompt does not fit the context window (not sent, not answered): "
                   + ", ".join(f"{s} {n}" for s, n in sorted(dnf.items())))
    return out if lim else []
