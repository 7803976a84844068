"""recent_k's ablation presets and sweep (memcore.systems.variants' registries): `recent_k:no-focus` runs the
window without the focus role; `recent_k:short` keeps the last 2 turns only; the sweep `k` runs windows of 2 to
12 turns. Registered when memcore_example.system is imported."""

from __future__ import annotations

from memcore.systems.variants import register_preset, register_sweep

SOURCE = "example plugin (memcore-example-plugin): ablation"

NO_FOCUS = register_preset("recent_k", "no-focus", {"focus": False}, SOURCE,
                           "without the focus role: the reader gets the window in conversation order")
SHORT = register_preset("recent_k", "short", {"k": 2}, SOURCE, "a window of the last 2 turns")
K = register_sweep("recent_k", "k", {"k": [2, 4, 6, 8, 12]}, SOURCE,
                   "the window size k in {2, 4, 6, 8, 12}: how much recent context the reader needs")
