"""recent_k's settings, each with its field spec (memcore.systems.fields): where the value comes from, its
valid range, and whether it changes what ingest builds (construction) or only retrieval and answering (query).
`memcore systems` lists them; variant names (`recent_k[k=3]`) and the settings panel read them."""

from __future__ import annotations

from dataclasses import dataclass

from memcore.systems.base import SystemConfig, query_field
from memcore.systems.fields import param

SOURCE = "example plugin (memcore-example-plugin)"


@dataclass
class RecentKConfig(SystemConfig):
    """k: how many of the latest turns the memory keeps (it changes what ingest builds); focus: whether
    retrieval asks the `recent_k_focus` role which window turn answers the question (query-time)."""

    k: int = param(6, range=(1, None), source=SOURCE, help="how many of the latest turns the memory keeps")
    focus: bool = query_field(True, source=SOURCE, help="ask the recent_k_focus role which window turn answers "
                              "the question; it goes to the reader first")

    def validate(self) -> None:
        """The base checks (retriever registered, every field's range) and k a whole number."""
        super().validate()
        if not isinstance(self.k, int) or isinstance(self.k, bool):
            raise ValueError(f"recent_k: k must be a whole number >= 1, not {self.k!r}")
