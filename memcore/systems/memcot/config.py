"""MemCoT's settings (paper defaults)."""

from __future__ import annotations

from dataclasses import dataclass

from memcore.systems.base import SystemConfig, query_field


@dataclass
class MemCoTConfig(SystemConfig):
    """J: max steps; K: zoom-in hits per query; W: zoom-out window (W_longmemeval on LongMemEval data);
    max_queries: new queries per step; max_failed: failed queries fed back to the judge."""

    J: int = query_field(8)
    K: int = query_field(10)
    W: int = query_field(4)
    W_longmemeval: int = query_field(15)
    max_queries: int = query_field(2)
    max_failed: int = query_field(3)

    def validate(self) -> None:
        """Raise ValueError on an invalid setting."""
        super().validate()
        if self.J < 2 or self.K < 1 or self.W < 0 or self.W_longmemeval < 0:
            raise ValueError(f"MemCoT needs J >= 2, K >= 1, W >= 0 (got J={self.J}, K={self.K}, W={self.W})")
