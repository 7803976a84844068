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
                         help="anchors: the top-L pool turns, one chain each (at most K: L > K "
                         "gives K anchors, as the K = 1 point of the Fig. 4 sweep needs)")
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
    # ablation switches (CoM Sec. 4.3, Fig. 3); the paper's full method keeps all three on
    framework: bool = query_field(True, source="ablation, CoM Fig. 3 (w/o Framework)",
                                  help="off: no anchors and no chains, the context is the plain top-K pool")
    dmce: bool = query_field(True, source="ablation, CoM Fig. 3 (w/o DMCE)",
                             help="dynamic memory chain evolution; off: each chain is its anchor alone (no gate)")
    apt: bool = query_field(True, source="ablation, CoM Fig. 3 (w/o APT)",
                            help="adaptive path truncation; off: chains grow to max_len (or the pool's end)")

    @property
    def extended(self) -> bool:
        """Whether any non-paper option is on."""
        return bool(self.speaker_boost or self.neighbour_weight or self.word_budget or self.date_style != "dataset")

# The extended (non-paper) query-side mode measured in bench/retrieval_recall.py.
EXTENDED: dict[str, Any] = {"speaker_boost": 5.0, "neighbour_weight": 0.3, "word_budget": 700,
                            "trace_pool": 60, "date_style": "day"}


def ablation_note(cfg: CoMConfig) -> str:
    """The trace note of an ablated run (CoM Fig. 3) or of more anchors asked for than the pool holds."""
    parts = []
    if not cfg.framework:
        parts.append("w/o Framework (CoM Fig. 3): the context is the plain top-K pool, no anchors, no chains")
    elif not cfg.dmce:
        parts.append("w/o DMCE (CoM Fig. 3): no chain evolution, each of the top-L anchors alone (no gate)")
    elif not cfg.apt:
        parts.append(f"w/o APT (CoM Fig. 3): no relative-drop stop, chains grow to max_len {cfg.max_len} "
                     "or the pool's end")
    if cfg.framework and not cfg.dmce and not cfg.apt:
        parts.append("apt=false has no effect without chain evolution")
    if not cfg.framework and not (cfg.dmce and cfg.apt):
        parts.append("dmce/apt have no effect without the framework")
    if cfg.framework and cfg.L > cfg.K:
        parts.append(f"L={cfg.L} > K={cfg.K}: {cfg.K} anchor(s), the whole pool")
    return "; ".join(parts)

