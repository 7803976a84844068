"""recent_k's fidelity rows (memcore.systems.parts.Fidelity; `RecentKSystem.fidelity`): what the system does,
its values and where in the code. It follows no paper, so every row is memcore's own; memcore's fidelity test
(tests/systems/test_fidelity.py) checks that the defaults and roles named here are the code's."""

from __future__ import annotations

from memcore.systems.parts import Fidelity, FidelityRow

FIDELITY = Fidelity("recent_k (example plugin)", (
    FidelityRow("Memory", "the last k turns, k = 6",
                "`recent_k.k` = 6; RecentKSystem.on_turn (the oldest turn is deleted as an event)",
                "memcore's own (example plugin)"),
    FidelityRow("Window ranking", "the configured retriever over the window",
                '`recent_k.retriever` = "dense"; the trace\'s window stage (RecentKSystem.retrieve)', "memcore's own (example plugin)"),
    FidelityRow("Focus turn", "an LLM names the window turn that answers; it goes to the reader first",
                "`recent_k_focus`; `recent_k.focus` = True (offline: the turn sharing the most word stems)",
                "memcore's own (example plugin)"),
    FidelityRow("Reader prompt", "the latest turns, the focus turn first; temperature 0",
                '`answer_recent_k`; `recent_k.reader` = "paper"', "memcore's own (example plugin)"),
))
