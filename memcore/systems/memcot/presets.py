"""MemCoT's ablations (Sec. 5.3, Table 4) and reported sweeps (Sec. 5.4, Fig. 4), registered as named presets
and sweeps (memcore.systems.variants): `memcot:no-zoom-out`, `memcot:no-visual`, `memcot:no-zoom-out-visual`,
sweeps `W`, `J`, `K`. Every switch is query-time: the memory (the flat turn index) is the full system's.
memcore has no visual module, so the visual-grounding presets say so instead of removing anything."""

from __future__ import annotations

from memcore.systems.variants import register_preset, register_sweep

_NO_VISUAL = ("memcore has NO visual module (LoCoMo image captions are text in the turns), so this removes "
              "nothing: the run equals the full system's and its trace says so")

register_preset(
    "memcot", "no-zoom-out", {"zoom_out": False}, source="MemCoT Sec. 5.3, Table 4 (w/o zoom-out); App. B.3, Table 8",
    description="w/o zoom-out: the zoom-out context expansion module removed, relying solely on fine-grained "
                "zoom-in chunks; no zoom-out call")
register_preset(
    "memcot", "no-visual", {"visual_grounding": "off"}, source="MemCoT Sec. 5.3, Table 4 (w/o visual grounding)",
    description=f"w/o visual grounding: the panoramic visual grounding module disabled; {_NO_VISUAL}")
register_preset(
    "memcot", "no-zoom-out-visual", {"zoom_out": False, "visual_grounding": "off"},
    source="MemCoT Sec. 5.3, Table 4 (w/o zoom-out + visual)",
    description="w/o zoom-out + visual: both modules removed; fine-grained zoom-in only, no zoom-out call; the "
                f"visual part: {_NO_VISUAL.replace('the run equals the full system', 'it equals no-zoom-out')}")
register_sweep(
    "memcot", "W", {"W": [1, 2, 4, 6, 8, 10, 12]}, source="MemCoT Sec. 5.4, Fig. 4(a)",
    description="the adjacent (zoom-out) window size W from 1 to beyond 8: retrieval recall and F1 (LoCoMo "
                "data; on LongMemEval data W_longmemeval is the window)")
register_sweep(
    "memcot", "J", {"J": [2, 3, 4, 5, 6]}, source="MemCoT Sec. 5.4, Fig. 4(b)",
    description="the maximum evolution steps J from 2 to 6: recall (steps taken) and F1")
register_sweep(
    "memcot", "K", {"K": [5, 10, 15, 20]}, source="MemCoT Sec. 5.4, Fig. 4(c)",
    description="the fine-grained zoom-in top-K around the paper's 10-15: retrieval recall")
