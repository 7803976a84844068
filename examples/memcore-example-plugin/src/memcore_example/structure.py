"""recent_k's trace structure, typed: what RecentKSystem.retrieve stores in `Trace.structure` (the stored JSON
dict: `RecentKStructure.to_dict`; `from_dict` reads it back for the statistics and the view)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class RecentKStructure:
    """One retrieval: the window (oldest first), the retriever's best turn, the focus role's turn."""

    k: int
    window: list[str] = field(default_factory=list)
    best: str = ""  # the configured retriever's top turn in the window
    retriever: str = ""
    focus: str = ""  # the turn the recent_k_focus role named ("" when off, unusable or none)
    focus_mode: str = "off"  # "role" (asked), "off" (config focus = false), "unusable" (the reply was not usable)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RecentKStructure:
        """Read a stored `Trace.structure` of recent_k (`k` is required; traces stored before focus have none)."""
        return cls(k=int(d["k"]), window=list(d.get("window") or []), best=d.get("best", ""),
                   retriever=d.get("retriever", ""), focus=d.get("focus", ""), focus_mode=d.get("focus_mode", "off"))

    def to_dict(self) -> dict[str, Any]:
        """The JSON dict the trace stores."""
        return asdict(self)

    @property
    def focus_rank(self) -> int | None:
        """The focus turn's place in the window, 1 = the latest turn (None without a focus)."""
        return len(self.window) - self.window.index(self.focus) if self.focus in self.window else None
