"""MemCoT's trace structure, typed: what MemCoTSystem.retrieve stores in `Trace.structure` (the stored JSON
dict is unchanged; `MemCoTStructure.from_dict` reads it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FULL_CONVERSATION = "full conversation"  # `answered_from` when the loop fell back to the whole conversation


@dataclass(frozen=True)
class MemCoTStructure:
    """One answer's reasoning loop: steps taken, why it stopped, and what the responder read."""

    steps: int
    answered_from: str | None = None
    stop_reason: str | None = None
    fallback: bool | None = None
    fallback_mode: str | None = None
    failed_queries: list[str] | None = None
    iterations: list[dict[str, Any]] | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MemCoTStructure:
        """Read a stored `Trace.structure` of MemCoT (`steps` is required)."""
        return cls(steps=int(d["steps"]), answered_from=d.get("answered_from"), stop_reason=d.get("stop_reason"),
                   fallback=d.get("fallback"), fallback_mode=d.get("fallback_mode"),
                   failed_queries=d.get("failed_queries"), iterations=d.get("iterations"))

    @property
    def fell_back(self) -> bool:
        """Whether this answer was read from the full conversation."""
        return self.answered_from == FULL_CONVERSATION
