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

    K: int = query_field(20, range=(1, None), source="CoM Sec. 4.1 (k = 20); Sec. 3.1 Eq. 2 (Top-K pool)",
                         help="candidate pool: the top-K turns by similarity")
    L: int = query_field(3, range=(1, None), source="papers/README.md (CoM, no public code: L=3); Sec. 3.2",
                         help="anchors: the top-L pool turns, one chain each (L <= K)")
    beta: float = query_field(0.5, range=(0.0, 1.0), source="CoM Sec. 3.2 Eq. 4 (beta in [0, 1]); 0.5: "
                              "papers/README.md", help="relative-drop truncation: stop when best gate < beta x last")
    max_len: int = query_field(8, range=(1, None), source="papers/README.md (CoM: max length 8)",
                               help="longest chain, anchor included")
    trace_pool: int = query_field(40, range=(1, None), source="memcore extension (trace display only)",
                                  help="turns shown in the trace's pool stage (beyond K: never in a chain)")
    speaker_boost: float = query_field(0.0, range=(0.0, None), source="memcore extension",
                                       help="z-score boost for turns by a speaker the question names")  # extended
    neighbour_weight: float = query_field(0.0, range=(0.0, 1.0), source="memcore extension",
                                          help="share of same-session neighbours' scores added")  # extended
    word_budget: int = query_field(0, range=(0, None), source="memcore extension",
                                   help="backfill pool turns after the chains up to this many words (0: off)")
    date_style: str = query_field("dataset", choices=("dataset", "day"), source="dataset: as written; day: "
                                  "memcore extension", help="dates in the context: as written or '8 May 2023'")

    @property
    def extended(self) -> bool:
        """Whether any non-paper option is on."""
        return bool(self.speaker_boost or self.neighbour_weight or self.word_budget or self.date_style != "dataset")

    def validate(self) -> None:
        """Raise ValueError on an invalid setting (each field's range and choices: the field specs)."""
        super().validate()
        if self.K < 1 or not 1 <= self.L <= self.K:
            raise ValueError(f"CoM needs K >= 1 and 1 <= L <= K (got K={self.K}, L={self.L})")


# The extended (non-paper) query-side mode measured in bench/retrieval_recall.py.
EXTENDED: dict[str, Any] = {"speaker_boost": 5.0, "neighbour_weight": 0.3, "word_budget": 700,
                            "trace_pool": 60, "date_style": "day"}
