"""Baseline: the whole conversation as context (its token cost shown honestly)."""

from __future__ import annotations

from memcore.systems import register_system
from memcore.systems.base import BaseSystem, SystemConfig, turn_row, turn_trace_item
from memcore.systems.parts import Fidelity, FidelityRow
from memcore.types import Question, Trace, Turn


@register_system
class FullContextSystem(BaseSystem):
    """No memory: every turn of the conversation goes to the answer model."""

    name = "full_context"
    rank = 10
    title = "Full context"
    paper = "baseline"
    config_class = SystemConfig
    fidelity = Fidelity("Baselines", (FidelityRow("Full context", "every turn in the prompt", "systems/full_context.py",
                                                  "faithful (its token cost is reported)"),))

    def on_turn(self, turn: Turn) -> None:
        self.emit("indexed", [turn.turn_id], "appended to the transcript", item_kind="turn")

    def retrieve(self, question: Question) -> Trace:
        tr = self.new_trace(question)
        tr.items = [turn_trace_item(turn_row(t), 1.0, t.index + 1, origin="transcript") for t in self.conv.turns]
        tr.structure = {"turns": len(self.conv.turns)}
        tr.notes.append("full context: no retrieval; every turn is in the prompt")
        return tr
