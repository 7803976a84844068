"""Baseline: the whole conversation as context (its token cost shown honestly).

Within a model's context window (memcore.llm.windows): when the whole conversation does not fit, the named rule
CUT_RULE keeps the turns nearest the question (the latest) that fit, says so on the answer card (trace structure
`context_cut`, counted in results as the fallback kind "context_cut") and in the trace's notes. When not even
the question fits, the prompt is not sent and the question is reported as "does not fit".
"""

from __future__ import annotations

from memcore.llm.roles import get_role
from memcore.llm.roles.readers import Reader
from memcore.systems import register_system
from memcore.systems.base import BaseSystem, SystemConfig, render_context, turn_row, turn_trace_item
from memcore.systems.parts import Fidelity, FidelityRow
from memcore.text.tokens import count_messages, count_tokens
from memcore.types import Question, Trace, Turn

CUT_RULE = "nearest the question"  # the turns kept when the conversation exceeds the window: the latest that fit


@register_system
class FullContextSystem(BaseSystem):
    """No memory: every turn of the conversation goes to the answer model (within its context window)."""

    name = "full_context"
    rank = 10
    title = "Full context"
    paper = "baseline"
    config_class = SystemConfig
    fidelity = Fidelity("Baselines", (FidelityRow("Full context", "every turn in the prompt", "systems/full_context.py",
                                                  "faithful (its token cost is reported; over the model's context "
                                                  "window the turns nearest the question that fit, named)"),))

    def on_turn(self, turn: Turn) -> None:
        self.emit("indexed", [turn.turn_id], "appended to the transcript", item_kind="turn")

    def retrieve(self, question: Question) -> Trace:
        tr = self.new_trace(question)
        tr.items = [turn_trace_item(turn_row(t), 1.0, t.index + 1, origin="transcript") for t in self.conv.turns]
        tr.structure = {"turns": len(self.conv.turns)}
        tr.notes.append("full context: no retrieval; every turn is in the prompt")
        return tr

    def fit_context(self, question: Question, trace: Trace, reader: Reader) -> None:
        """CUT_RULE: keep the latest turns whose prompt fits the window (none cut when all fit)."""
        role = get_role(reader.role)
        budget = self.llm.prompt_budget(role)
        if budget is None or not trace.items:
            return
        items = trace.items

        def need(start: int) -> int:
            kept = items[start:]
            return count_messages(role.messages(self.reader_inputs(question, kept, render_context(kept), reader)))

        if need(0) <= budget:
            return
        sizes = [count_tokens(render_context([it])) + 1 for it in items]  # a line and its newline
        room, start = budget - need(len(items)), len(items)
        while start > 0 and sizes[start - 1] <= room:  # the latest turns first
            room -= sizes[start - 1]
            start -= 1
        over = need(start) - budget
        while over > 0 and start < len(items):  # the estimate missed by a few tokens (or the passages): drop more
            while over > 0 and start < len(items):
                over -= sizes[start]
                start += 1
            over = need(start) - budget
        cut = items[start:]  # each keeps its rank: its turn's position in the conversation
        trace.items, trace.context = cut, render_context(cut)
        trace.structure = {**(trace.structure or {}), "context_cut": {
            "rule": CUT_RULE, "kept": len(cut), "of": len(items), "window": self.llm.window,
            "window_source": self.llm.window_source}}
        trace.notes.append(f"context cut to fit: kept the {len(cut)} turns {CUT_RULE} of {len(items)} "
                           f"(context window {self.llm.window} tokens, {self.llm.window_source})")

