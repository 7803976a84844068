"""recent_k: a memory of the last k turns (a sliding window), with a trace of how it retrieved."""

from __future__ import annotations

from dataclasses import dataclass

from memcore.systems import register_system
from memcore.systems.base import BaseSystem, SystemConfig, candidates_from, item_trace_item, turn_sort_key
from memcore.types import Question, Trace, Turn

KIND = "recent"


@dataclass
class RecentKConfig(SystemConfig):
    """k: how many of the latest turns the memory keeps (it changes what ingest builds)."""

    k: int = 6

    def validate(self) -> None:
        """The base checks (the retriever is registered) and k >= 1."""
        super().validate()
        if not isinstance(self.k, int) or self.k < 1:
            raise ValueError(f"recent_k: k must be a whole number >= 1, not {self.k!r}")


@register_system
class RecentKSystem(BaseSystem):
    """Keeps the last k turns; the oldest one is deleted when a new one arrives. Retrieval returns them all."""

    name = "recent_k"
    title = "Recent k turns (example plugin)"
    paper = "example plugin (memcore-example-plugin)"
    config_class = RecentKConfig
    kinds = (KIND,)
    rank = 90  # after the built-in systems (10..80)

    def window(self) -> list:
        """The turns in memory, oldest first."""
        return sorted(self.memory.of_kind(KIND), key=lambda it: turn_sort_key(it.turn_ids[0]))

    def on_turn(self, turn: Turn) -> None:
        """Store the turn; delete the oldest when the window holds more than k."""
        item = self.new_item(KIND, f"{turn.speaker}: {turn.content}", [turn.turn_id], [turn.turn_id],
                             date=turn.session_date, speaker=turn.speaker)
        self.emit("created", [item], f"turn {turn.turn_id} entered the window of the last {self.config.k}")
        window = self.window()
        for old in window[:max(0, len(window) - self.config.k)]:
            self.memory.remove(old.id)
            self.emit("deleted", [old], f"{old.turn_ids[0]} fell out of the window of the last {self.config.k} "
                      f"turns (pushed out by {turn.turn_id})")

    def retrieve(self, question: Question) -> Trace:
        """The whole window, in conversation order; the `window` stage ranks it with the configured retriever."""
        tr = self.new_trace(question)
        window = self.window()
        hits = self.search_items(KIND, question.text, len(window)) if window else []
        scores = {it.id: s for it, s in hits}
        ranked = sorted(window, key=lambda it: -scores.get(it.id, float("-inf")))
        items = [item_trace_item(it, scores.get(it.id, 0.0), r, origin=f"last {self.config.k} turns")
                 for r, it in enumerate(ranked, start=1)]
        tr.stages = ["window"]
        tr.candidates = candidates_from("window", items, {t.id for t in items})
        tr.items = sorted(items, key=lambda t: turn_sort_key(t.turn_ids[0]))
        tr.structure = {"k": self.config.k, "window": [t.turn_ids[0] for t in tr.items],
                        "best": ranked[0].turn_ids[0] if ranked else "", "retriever": self.config.retriever}
        return tr
