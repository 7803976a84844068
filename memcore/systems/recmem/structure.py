"""RecMem's trace structure, typed (the parts its statistics read): what RecMemSystem.retrieve stores in
`Trace.structure` (the stored JSON dict is unchanged; `RecMemStructure.from_dict` reads it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Exchanges:
    """What the built memory did with its interaction units: units seen, consolidations fired, ..."""

    units: int | None = None
    merged: int | None = None
    stored: int | None = None
    consolidations: int | None = None
    consolidated: int | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Exchanges:
        """The `exchanges` block of a trace."""
        return cls(units=d.get("units"), merged=d.get("merged"), stored=d.get("stored"),
                   consolidations=d.get("consolidations"), consolidated=d.get("consolidated"))


@dataclass(frozen=True)
class RecMemStructure:
    """One answer's retrieval budgets and counts, and the built memory's figures."""

    exchanges: Exchanges
    stores: dict[str, int] | None = None
    budgets: dict[str, int] | None = None
    retrieved: dict[str, int] | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RecMemStructure:
        """Read a stored `Trace.structure` of RecMem."""
        return cls(exchanges=Exchanges.from_dict(d.get("exchanges", {})), stores=d.get("stores"),
                   budgets=d.get("budgets"), retrieved=d.get("retrieved"))
