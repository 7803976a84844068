"""recent_k's ablation presets (memcore.systems.variants' registry): `recent_k:no-focus` runs the window
without the focus role; `recent_k:short` keeps the last 2 turns only. Registered when memcore_example.system
is imported."""

from __future__ import annotations

from memcore.systems.variants import register_preset

SOURCE = "example plugin (memcore-example-plugin): ablation"

NO_FOCUS = register_preset("recent_k", "no-focus", {"focus": False}, SOURCE,
                           "without the focus role: the reader gets the window in conversation order")
SHORT = register_preset("recent_k", "short", {"k": 2}, SOURCE, "a window of the last 2 turns")
