"""RecMem's settings: the paper's defaults and its two threshold presets."""

from __future__ import annotations

from dataclasses import dataclass

from memcore.systems.base import SystemConfig, query_field

PRESETS: dict[str, dict[str, float]] = {
    "locomo": {"theta_sim": 0.7, "theta_count": 5, "theta_merge": 0.7},
    "longmemeval": {"theta_sim": 0.6, "theta_count": 4, "theta_merge": 0.6},
}


@dataclass
class RecMemConfig(SystemConfig):
    """Paper defaults; `preset` (locomo | longmemeval) fills the thresholds left at None."""

    preset: str = "locomo"
    theta_sim: float | None = None  # neighbour similarity in the subconscious store (0.7 / 0.6)
    theta_count: int | None = None  # cluster size that triggers consolidation, unit included (5 / 4)
    theta_merge: float | None = None  # nearest-episode similarity that asks the LLM to merge (0.7 / 0.6)
    max_episodes: int = 3  # episodes one consolidation may write
    k_facts_context: int = 10  # existing facts shown to semantic refinement
    k_sub: int = query_field(10)
    k_epi: int = query_field(5)
    k_sem: int = query_field(10)
    pool: int = query_field(20)  # candidates per store kept in the trace

    def __post_init__(self) -> None:
        for key, value in PRESETS.get(self.preset, PRESETS["locomo"]).items():
            if getattr(self, key) is None:
                setattr(self, key, int(value) if key == "theta_count" else float(value))

    def validate(self) -> None:
        """Raise ValueError on an invalid setting."""
        super().validate()
        if self.preset not in PRESETS:
            raise ValueError(f"preset must be one of {sorted(PRESETS)}, not {self.preset!r}")
        for key in ("theta_sim", "theta_merge"):
            if not -1.0 <= float(getattr(self, key)) <= 1.0:
                raise ValueError(f"{key} is a cosine similarity in [-1, 1], not {getattr(self, key)!r}")
        if int(self.theta_count) < 1 or self.max_episodes < 1:
            raise ValueError("theta_count and max_episodes must be >= 1")
        if min(self.k_sub, self.k_epi, self.k_sem) < 0:
            raise ValueError("retrieval budgets k_sub, k_epi, k_sem must be >= 0")
