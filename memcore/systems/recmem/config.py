"""RecMem's settings: the paper's defaults, its two threshold presets, and the thresholds in force."""

from __future__ import annotations

from dataclasses import dataclass

from memcore.systems.base import SystemConfig, query_field
from memcore.systems.fields import param

# Sec. 3.6 / Sec. 4: theta_sim 0.7, theta_count 5 on LoCoMo (casual, open-ended); 0.6, 4 on LongMemEval-S
# (longer, task-oriented).
PRESETS: dict[str, dict[str, float]] = {
    "locomo": {"theta_sim": 0.7, "theta_count": 5},
    "longmemeval": {"theta_sim": 0.6, "theta_count": 4},
}
PRESET_CHOICES = ("auto", *PRESETS)
# Fact maintenance (Eq. 8-9): how the refiner's changes to known facts are kept.
FACT_MAINTENANCE = {
    "append": "changes become new TIME_ANCHORED_UPDATE facts and known facts stay as they are (the paper: each "
              "fact Eq. 9 extracts \"is stored as an independent entry\" (Sec. 3.4); papers/README.md: "
              "\"new facts only\"; the authors' code)",
    "update": "a fact the new exchanges change is rewritten in place (a new version; the old text stays in "
              "its history): memcore's earlier reading of \"updating evolving user states\" (option)",
}


@dataclass(frozen=True)
class Thresholds:
    """The consolidation thresholds in force for one conversation."""

    preset: str
    theta_sim: float
    theta_count: int
    merge_gate: float  # the merge-first gate of Eq. 6
    split: bool  # True when theta_merge was set apart from theta_sim (a named option, not the paper)


@dataclass
class RecMemConfig(SystemConfig):
    """Paper defaults. `preset` "auto" picks the paper's preset by the conversation's source (LongMemEval
    -> longmemeval, everything else -> locomo); thresholds left at None come from the preset.
    `theta_merge` None (the paper, Eq. 6): the merge gate is theta_sim, so a theta_sim sweep moves both;
    a value splits them. `fact_maintenance`: see FACT_MAINTENANCE. `reader`: "paper" = App. F's answer
    prompt (LoCoMo or LongMemEval), or another (memcore.llm.roles.readers)."""

    preset: str = param("auto", choices=PRESET_CHOICES, source="RecMem Sec. 3.6, Sec. 4.1 (per benchmark); "
                        "auto: memcore (by the data's source)", help="which threshold preset: auto, locomo, "
                        "longmemeval")
    theta_sim: float | None = param(None, range=(-1.0, 1.0), source="RecMem Sec. 3.6, Sec. 4.1 (0.7 LoCoMo, 0.6 "
                                    "LongMemEval); sweep App. C", help="neighbour cosine in the subconscious "
                                    "store (none: the preset's)")
    theta_count: int | None = param(None, range=(1, None), source="RecMem Sec. 3.6, Sec. 4.1 (5 LoCoMo, 4 "
                                    "LongMemEval); sweep App. C", help="cluster size that triggers consolidation, "
                                    "unit included (none: the preset's)")
    theta_merge: float | None = param(None, range=(-1.0, 1.0), source="RecMem Sec. 3.3 Eq. 6 (the gate is "
                                      "theta_sim); a value: memcore option", help="nearest-episode cosine that asks "
                                      "the LLM to merge (none: theta_sim)")
    max_episodes: int = param(3, range=(1, None), source="papers/README.md (RecMem: 1-3 episodes)",
                              help="episodes one consolidation may write")
    k_facts_context: int = param(10, range=(0, None), source="RecMem Sec. 3.4 Eq. 8 (TopK); 10: papers/README.md",
                                 help="existing facts shown to semantic refinement")
    fact_maintenance: str = param("append", choices=tuple(FACT_MAINTENANCE), source="append: RecMem Sec. 3.4 "
                                  "(Eq. 9) and the authors' code; update: memcore option",
                                  help="how refinement's changes to known facts are kept")
    semantic_source: str = param("refine", choices=("refine", "direct"), omit_default=True,
                                 source="ablation, RecMem Sec. 4.3, Fig. 2 (Direct Extraction)",
                                 help="refine: facts refined against the episode (Eq. 8-9); direct: extracted "
                                 "from the raw turns alone, no episode as reference (recmem_extract)")
    k_sub: int = query_field(10, range=(0, None), source="RecMem App. C (k_sub = 10)",
                             help="subconscious units retrieved")
    k_epi: int = query_field(5, range=(0, None), source="RecMem App. C (k_epi = 5)", help="episodes retrieved")
    k_sem: int = query_field(10, range=(0, None), source="RecMem App. C (k_sem = 2 k_epi = 10)",
                             help="semantic facts retrieved")
    pool: int = query_field(20, range=(0, None), source="memcore extension (trace display only)",
                            help="candidates per store kept in the trace")

    def thresholds(self, source: str = "") -> Thresholds:
        """The thresholds in force on data from `source` ("locomo", "longmemeval", ...)."""
        name = self.preset if self.preset != "auto" else ("longmemeval" if source == "longmemeval" else "locomo")
        p = PRESETS[name]
        sim = float(p["theta_sim"] if self.theta_sim is None else self.theta_sim)
        count = int(p["theta_count"] if self.theta_count is None else self.theta_count)
        gate = sim if self.theta_merge is None else float(self.theta_merge)
        return Thresholds(name, sim, count, gate, self.theta_merge is not None)
