"""CoM's ablations (Sec. 4.3, Fig. 3) and its reported sweep (Sec. 4.4, Fig. 4), registered as named presets
and sweeps (memcore.systems.variants): `com:no-framework`, `com:no-dmce`, `com:no-apt`, sweep `k`.
Every switch is query-time: the memory (the flat turn index) is the full system's."""

from __future__ import annotations

from memcore.systems.variants import register_preset, register_sweep

register_preset(
    "com", "no-framework", {"framework": False}, source="CoM Sec. 4.3, Fig. 3 (w/o Framework)",
    description="w/o Framework: removing the entire framework (no dynamic memory chain evolution, no adaptive "
                "path truncation); the context is the plain top-K retrieved turns in rank order")
register_preset(
    "com", "no-dmce", {"dmce": False}, source="CoM Sec. 4.3, Fig. 3 (w/o DMCE)",
    description="w/o DMCE: excluding Dynamic Memory Chain Evolution; no chain evolution, the top-L anchors "
                "of the ranked pool alone, no gate")
register_preset(
    "com", "no-apt", {"apt": False}, source="CoM Sec. 4.3, Fig. 3 (w/o APT)",
    description="w/o APT: omitting Adaptive Path Truncation; chains grow without the relative-drop stop, to "
                "the length cap (max_len) or the pool's end")
register_sweep(
    "com", "k", {"K": [1, 5, 10, 20, 50]}, source="CoM Sec. 4.4, Fig. 4",
    description="the retrieval hyperparameter k (candidate pool) in {1, 5, 10, 20, 50}: accuracy and tokens "
                "(at k = 1 the pool holds one anchor)")
