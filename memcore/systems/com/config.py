"""CoM's settings (paper defaults) and the extended (non-paper) query-side mode."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memcore.systems.base import SystemConfig, query_field


@dataclass
class CoMConfig(SystemConfig):
    """CoM parameters at the paper's defaults (all query-side: the memory is the turn index).

    K: candidate pool size; L: anchors (one chain each); beta: relative-drop truncation;
    max_len: longest chain (anchor included); trace_pool: turns shown in the trace's pool
    stage (those beyond K are marked "ranked below the top K" and never enter a chain);
    reader: "paper" = App. A.1's answer prompt (LoCoMo or LongMemEval by the data's source), "short" =
    memcore's shared short-answer prompt, or another paper's (memcore.llm.roles.readers).
    """

    K: int = query_field(20)
    L: int = query_field(3)
    beta: float = query_field(0.5)
    max_len: int = query_field(8)
    trace_pool: int = query_field(40)
    speaker_boost: float = query_field(0.0)  # extended: z-score boost for turns by a named speaker
    neighbour_weight: float = query_field(0.0)  # extended: share of same-session neighbours' scores
    word_budget: int = query_field(0)  # extended: backfill pool turns after the chains up to this
    date_style: str = query_field("dataset")  # "dataset" (as written) | "day" ("8 May 2023")

    @property
    def extended(self) -> bool:
        """Whether any non-paper option is on."""
        return bool(self.speaker_boost or self.neighbour_weight or self.word_budget or self.date_style != "dataset")

    def validate(self) -> None:
        """Raise ValueError on an invalid setting."""
        super().validate()
        if self.K < 1 or not 1 <= self.L <= self.K:
            raise ValueError(f"CoM needs K >= 1 and 1 <= L <= K (got K={self.K}, L={self.L})")
        if not 0.0 <= self.beta <= 1.0:
            raise ValueError(f"CoM beta must be in [0, 1], not {self.beta}")
        if self.max_len < 1:
            raise ValueError(f"CoM max_len must be >= 1, not {self.max_len}")
        if self.date_style not in ("dataset", "day"):
            raise ValueError(f"CoM date_style must be 'dataset' or 'day', not {self.date_style!r}")


# The extended (non-paper) query-side mode measured in bench/retrieval_recall.py.
EXTENDED: dict[str, Any] = {"speaker_boost": 5.0, "neighbour_weight": 0.3, "word_budget": 700,
                            "trace_pool": 60, "date_style": "day"}
