"""xMemory's trace structure, typed (the parts its statistics read): what XMemorySystem.retrieve stores in
`Trace.structure` (the stored JSON dict is unchanged; `XMemoryStructure.from_dict` reads it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NOT_PROBED = "not probed"  # an episode's Stage II decision when it was never probed
ADMITTED = "include (not probed)"  # kept by priority alone: Stage II off (the Memory-only / +RepSel ablations)


@dataclass(frozen=True)
class EpisodeProbe:
    """One Stage II episode candidate and its decision (include / skip / not probed ...)."""

    id: str | None
    decision: str | None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EpisodeProbe:
        """The candidate of a trace's `episodes[]` entry."""
        return cls(id=d.get("id"), decision=d.get("decision"))


@dataclass(frozen=True)
class XMemoryStructure:
    """One answer's Stage II episodes and the built memory's theme figures."""

    reassignment_ratio: float | None
    episodes: tuple[EpisodeProbe, ...]
    theme_count: int | None = None
    semantic_count: int | None = None
    episode_count: int | None = None
    thresholds: dict[str, float] | None = None  # Stage II's include_gain / message_gain this answer used (None: older)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> XMemoryStructure:
        """Read a stored `Trace.structure` of xMemory."""
        return cls(reassignment_ratio=d.get("reassignment_ratio"),
                   episodes=tuple(EpisodeProbe.from_dict(e) for e in d.get("episodes", [])),
                   theme_count=d.get("theme_count"), semantic_count=d.get("semantic_count"),
                   episode_count=d.get("episode_count"), thresholds=d.get("thresholds"))

    @property
    def probes(self) -> int:
        """Stage II episodes probed for this answer."""
        return sum(1 for e in self.episodes if e.decision not in (NOT_PROBED, ADMITTED))
