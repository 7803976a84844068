"""MemWeaver's settings (paper defaults; README: MemWeaver)."""

from __future__ import annotations

from dataclasses import dataclass

from memcore.systems.base import SystemConfig, query_field


@dataclass
class MemWeaverConfig(SystemConfig):
    """Paper defaults (README: MemWeaver). Retrieval budgets only affect queries."""

    entity_sim: float = 0.7  # entity resolution: SequenceMatcher ratio to merge with an alias
    window: int = 12  # experience window and pending re-cluster size
    eps: float = 0.3  # DBSCAN eps (cosine distance)
    min_samples: int = 2
    recluster_rounds: int = 3
    join_sim: float = 0.8  # route: join directly at or above
    route_sim: float = 0.5  # route: shortlist for the router at or above
    router_top: int = 5
    buffer: int = 5  # cluster add buffer that triggers re-induction
    review: bool = True  # session-level review
    seed_triples: int = query_field(6)
    hops: int = query_field(1)
    keep_triples: int = query_field(36)
    passages: int = query_field(6)
    forced_global: int = query_field(2)
    global_pool: int = query_field(18)
    experiences: int = query_field(6)
