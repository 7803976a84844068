"""CoM's mechanism statistics: chain lengths (a chain of length 1 is its anchor alone, i.e. plain top-L
retrieval), over every chain of every question."""

from __future__ import annotations

from collections import Counter
from typing import Any

from memcore.systems.com.structure import CoMStructure
from memcore.systems.parts import Mechanism, Stats, mean


def question(structure: dict[str, Any]) -> Stats:
    """The lengths of one answer's chains."""
    return {"chain_lengths": [len(ch.members) for ch in CoMStructure.from_dict(structure).chains]}


def summarize(stats: list[Stats], _: dict[str, Any]) -> Stats:
    """Mean chain length, the histogram {length: chains} and chains per question."""
    lengths = [n for s in stats for n in s["chain_lengths"]]
    hist = Counter(lengths)
    return {"chain_length_mean": mean(lengths),
            "chain_length_hist": {str(k): hist[k] for k in sorted(hist)},
            "chains_per_question": mean([len(s["chain_lengths"]) for s in stats])}


MECHANISM = Mechanism(question, summarize, {
    "chain_length_mean": "mean chain length over every chain (1 = the anchor alone: plain top-L retrieval)",
    "chain_length_hist": "chains per length",
    "chains_per_question": "chains per question"})
