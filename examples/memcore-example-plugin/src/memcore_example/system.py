"""recent_k: a memory of the last k turns (a sliding window), with a trace of how it retrieved.

The whole system is this package: its settings with field specs (config.py), its LLM role and offline rule
(roles.py, offline.py), its reader prompt family (reader.py), its typed trace structure (structure.py), its
mechanism statistics (stats.py), its fidelity rows (fidelity.py), its ablation presets (presets.py) and its
view (view.py, the `memcore.views` entry point). Importing this module registers the role, the reader family
and the presets; the class names the rest (`mechanism`, `fidelity`, `reader_family`)."""

from __future__ import annotations

from memcore.systems import register_system
from memcore.systems.base import BaseSystem, candidates_from, item_trace_item, turn_sort_key
from memcore.types import Question, Trace, TraceItem, Turn
from memcore_example import presets as _presets  # noqa: F401  (registers recent_k's ablation presets)
from memcore_example import reader as _reader  # noqa: F401  (registers the "recent_k" reader family)
from memcore_example import roles as _roles  # noqa: F401  (registers the recent_k_focus role)
from memcore_example.config import RecentKConfig
from memcore_example.fidelity import FIDELITY
from memcore_example.stats import MECHANISM
from memcore_example.structure import RecentKStructure

KIND = "recent"
__all__ = ["KIND", "RecentKConfig", "RecentKSystem"]


@register_system
class RecentKSystem(BaseSystem):
    """Keeps the last k turns; the oldest one is deleted when a new one arrives. Retrieval returns them all."""

    name = "recent_k"
    title = "Recent k turns (example plugin)"
    paper = "example plugin (memcore-example-plugin)"
    config_class = RecentKConfig
    kinds = (KIND,)
    rank = 90  # after the built-in systems (10..80)
    reader_family = "recent_k"  # config reader = "paper" uses reader.py's family
    mechanism = MECHANISM  # stats.py: memcore eval's results and the Benchmark page show them
    fidelity = FIDELITY  # fidelity.py: checked by memcore's fidelity test

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
        """The whole window; the `window` stage ranks it with the configured retriever. With config focus, the
        `recent_k_focus` role names the turn that answers; it goes first, the rest in conversation order."""
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
        focus, mode = self._focus(question, tr) if self.config.focus and tr.items else ("", "off")
        if focus:
            first = next(t for t in tr.items if t.turn_ids[0] == focus)
            first.origin = f"focus turn (recent_k_focus) of the last {self.config.k} turns"
            tr.items = [first, *(t for t in tr.items if t is not first)]
        tr.structure = RecentKStructure(
            k=self.config.k, window=[t.turn_ids[0] for t in sorted(items, key=lambda t: turn_sort_key(t.turn_ids[0]))],
            best=ranked[0].turn_ids[0] if ranked else "", retriever=self.config.retriever, focus=focus,
            focus_mode=mode).to_dict()
        return tr

    def _focus(self, question: Question, tr: Trace) -> tuple[str, str]:
        """(focus turn id, mode) from the recent_k_focus role over the window; an unusable reply or an id
        outside the window gives no focus, named in the trace's notes and errors."""
        shown: list[TraceItem] = tr.items
        res = self.llm.run("recent_k_focus", {
            "question": question.text,
            "turns": [f"{t.turn_ids[0]} [{t.metadata.get('date', '')}] {t.text}" for t in shown],
            "items": [{"id": t.turn_ids[0], "text": t.text} for t in shown]}, stage="retrieval")
        tr.notes.extend(res.notes)
        if res.error:
            tr.errors.append(res.error)
            tr.notes.append("recent_k_focus unusable: no focus turn; the window in conversation order")
            return "", "unusable"
        focus = str(res.output.turn_id).strip()
        if focus and focus not in {t.turn_ids[0] for t in shown}:
            tr.notes.append(f"recent_k_focus named {focus!r}, not a turn of the window: no focus turn")
            focus = ""
        return focus, "role"
