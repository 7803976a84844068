"""CoM's trace structure, typed: what CoMSystem.retrieve stores in `Trace.structure` (the stored JSON dict
is unchanged; `CoMStructure.from_dict` reads it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Chain:
    """One chain: its anchor turn, its members in selection order (the anchor first) and why it stopped."""

    anchor: str
    members: tuple[str, ...]
    stop_reason: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Chain:
        """The chain of a trace's `chains[]` entry."""
        return cls(anchor=d.get("anchor", ""), members=tuple(d["members"]), stop_reason=d.get("stop_reason", ""))


@dataclass(frozen=True)
class CoMStructure:
    """The chains of one answer and the settings they were grown with (K, L, beta, max_len, retriever)."""

    chains: tuple[Chain, ...]
    K: int | None = None
    L: int | None = None
    beta: float | None = None
    max_len: int | None = None
    retriever: str | None = None
    extended: bool = False

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CoMStructure:
        """Read a stored `Trace.structure` of CoM."""
        return cls(chains=tuple(Chain.from_dict(c) for c in d.get("chains", [])), K=d.get("K"), L=d.get("L"),
                   beta=d.get("beta"), max_len=d.get("max_len"), retriever=d.get("retriever"),
                   extended=bool(d.get("extended", False)))
