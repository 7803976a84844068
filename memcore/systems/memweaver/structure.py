"""MemWeaver's trace structure, typed (the parts its statistics read): what MemWeaverSystem.retrieve stores
in `Trace.structure` (the stored JSON dict is unchanged; `MemWeaverStructure.from_dict` reads it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FORCED = "forced-global"  # a passage's `why` when it was forced from the global pool
SELECTOR_KEY = "triple_selector"  # the structure field of the Eq. 10 LLM triple selector


@dataclass(frozen=True)
class Passage:
    """One passage of the context and why it was chosen (forced-global, graph-linked, backfill)."""

    id: str | None
    why: str | None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Passage:
        """The passage of a trace's `passages[]` entry."""
        return cls(id=d.get("id"), why=d.get("why"))


@dataclass(frozen=True)
class TripleSelector:
    """The Eq. 10 LLM triple selector: on or off, the relations it chose and those added after it
    (relation ids, or a count in older traces)."""

    enabled: bool
    selected: list[str] | int
    backfill: list[str] | int

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TripleSelector:
        """The `triple_selector` block of a trace."""
        return cls(enabled=bool(d.get("enabled", True)), selected=d.get("selected", []),
                   backfill=d.get("backfill", []))


def _count(ids: list[str] | int) -> int:
    return ids if isinstance(ids, int) else len(ids)


@dataclass(frozen=True)
class MemWeaverStructure:
    """One answer's budgets used, passages and triple selection."""

    seed_triples: int
    passages: tuple[Passage, ...]
    selector: TripleSelector | None  # None: no selector block (or not an object)
    has_selector_key: bool  # the trace names the selector at all

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MemWeaverStructure:
        """Read a stored `Trace.structure` of MemWeaver (`budgets.used.seed_triples` is required)."""
        sel = d.get(SELECTOR_KEY)
        return cls(seed_triples=d["budgets"]["used"]["seed_triples"],
                   passages=tuple(Passage.from_dict(p) for p in d.get("passages", [])),
                   selector=TripleSelector.from_dict(sel) if isinstance(sel, dict) else None,
                   has_selector_key=SELECTOR_KEY in d)

    @property
    def forced_passages(self) -> int:
        """Passages forced from the global pool."""
        return sum(1 for p in self.passages if p.why == FORCED)

    @property
    def triples_selected(self) -> int | None:
        """Triples the LLM selector chose; None when it was off or absent."""
        return _count(self.selector.selected) if self.selector and self.selector.enabled else None

    @property
    def triples_backfilled(self) -> int | None:
        """Triples added after the selector; None when it was off or absent."""
        return _count(self.selector.backfill) if self.selector and self.selector.enabled else None
