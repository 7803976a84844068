"""xMemory's mechanism statistics: the memory's theme reassignment ratio (mean over conversations) and
Stage II episode probes per question."""

from __future__ import annotations

from typing import Any

from memcore.systems.parts import Mechanism, Stats, mean, per_conversation
from memcore.systems.xmemory.structure import XMemoryStructure


def question(structure: dict[str, Any]) -> Stats:
    """The memory's reassignment ratio and this answer's Stage II probes."""
    st = XMemoryStructure.from_dict(structure)
    return {"reassignment_ratio": st.reassignment_ratio, "stage2_probes": st.probes}


def summarize(stats: list[Stats], _: dict[str, Any]) -> Stats:
    """The ratio averaged over conversations, the probes over questions."""
    per_conv = per_conversation(stats, "reassignment_ratio")
    return {"reassignment_ratio": mean(list(per_conv.values())),
            "stage2_probes_mean": mean([s["stage2_probes"] for s in stats])}


MECHANISM = Mechanism(question, summarize, {
    "reassignment_ratio": "theme reassignment ratio of the built memory, mean over conversations",
    "stage2_probes_mean": "Stage II episode probes per question"})
