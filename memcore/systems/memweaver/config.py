"""MemWeaver's settings (paper defaults; README: MemWeaver)."""

from __future__ import annotations

from dataclasses import dataclass

from memcore.systems.base import SystemConfig, query_field
from memcore.systems.fields import param


@dataclass
class MemWeaverConfig(SystemConfig):
    """Paper defaults (README: MemWeaver). Retrieval budgets only affect queries.

    Where the paper and the authors' public code differ, the paper is the default and the code's
    value a named setting: buffer=5 (the paper's App. B triggers re-induction when the buffer reaches
    4), triple_selector=False (the code skips the Eq. 10 selector). experience_min_sources=1 keeps
    memcore's earlier single-source experiences.
    """

    entity_sim: float = param(0.7, range=(0.0, 1.0), source="papers/README.md (MemWeaver: string similarity >= 0.7)",
                              help="entity resolution: SequenceMatcher ratio to merge with an alias")
    window: int = param(12, range=(1, None), source="papers/README.md (MemWeaver: windows of 12 turns)",
                        help="experience window and pending re-cluster size")
    eps: float = param(0.3, range=(0.0, 2.0), source="MemWeaver App. B (DBSCAN); 0.3: papers/README.md",
                       help="DBSCAN eps (cosine distance, > 0)")
    min_samples: int = param(2, range=(1, None), source="MemWeaver App. B (DBSCAN); 2: papers/README.md",
                             help="DBSCAN min_samples")
    recluster_rounds: int = param(3, range=(0, None), source="papers/README.md (MemWeaver: <= 3 rounds)",
                                  help="re-clustering rounds for incoherent groups")
    join_sim: float = param(0.8, range=(-1.0, 1.0), source="MemWeaver App. B (routing); 0.8: papers/README.md",
                            help="route: join a cluster directly at or above this cosine")
    route_sim: float = param(0.5, range=(-1.0, 1.0), source="MemWeaver App. B (routing); 0.5: papers/README.md",
                             help="route: shortlist clusters for the LLM router at or above this cosine")
    router_top: int = param(5, range=(1, None), source="papers/README.md (MemWeaver: top-5 clusters)",
                            help="clusters shown to the router")
    buffer: int = param(4, range=(1, None), source="MemWeaver App. B (reaches 4; the authors' code: 5)",
                        help="add-buffer size that triggers centroid and experience re-induction")
    experience_min_sources: int = param(2, range=(1, None), source="MemWeaver Sec. 4.3 (multiple units); 1: "
                                        "memcore option", help="dialogue units an experience must cite")
    review: bool = param(True, source="MemWeaver Sec. 4.2 (session-level review)",
                         help="end-of-session review of the session's relations")
    seed_triples: int = query_field(6, range=(1, None), source="MemWeaver Sec. 4.4, App. B; 6: papers/README.md",
                                    help="seed triples by cosine")
    hops: int = query_field(1, range=(0, None), source="MemWeaver App. B (single-hop expansion)",
                            help="graph expansion hops from the seeds")
    keep_triples: int = query_field(36, range=(1, None), source="papers/README.md (MemWeaver: keep top 36)",
                                    help="triples kept after expansion")
    passages: int = query_field(6, range=(0, None), source="MemWeaver App. B (budgets); 6: papers/README.md",
                                help="passages in the context")
    forced_global: int = query_field(2, range=(0, None), source="papers/README.md (MemWeaver: 2 forced from global top-18)",
                                     help="passages forced from the global dense channel")
    global_pool: int = query_field(18, range=(0, None), source="papers/README.md (MemWeaver: global top-18)",
                                   help="global dense channel's candidate pool")
    experiences: int = query_field(6, range=(0, None), source="MemWeaver App. B (budgets); 6: papers/README.md",
                                   help="experiences via `about` edges of the final entities")
    triple_selector: bool = query_field(True, source="MemWeaver Sec. 4.4 Eq. 10 (the authors' code: off)",
                                        help="LLM selector over the filtered triples")
    select_backfill: int = query_field(6, range=(0, None), source="MemWeaver Sec. 4.4 Eq. 10 ('a few'); 6: "
                                       "memcore reading", help="high-similarity triples added back after the "
                                       "selector")
    # ablation switches (MemWeaver Sec. 5.4, Table 3); the global passage channel is kept in both
    graph_memory: bool = query_field(True, source="ablation, MemWeaver Sec. 5.4, Table 3 (w/o GM)",
                                     help="off: retrieval uses no graph memory (no triples, no graph-linked "
                                     "passages; experiences by cosine); the memory is built as usual")
    experience_memory: bool = query_field(True, source="ablation, MemWeaver Sec. 5.4, Table 3 (w/o ExpM)",
                                          help="off: no experience items in the context; the memory is built "
                                          "as usual")

    def validate(self) -> None:
        """Raise ValueError on an invalid setting (DBSCAN needs eps > 0)."""
        super().validate()
        if self.eps <= 0:
            raise ValueError(f"MemWeaver eps must be > 0 (a DBSCAN radius), not {self.eps!r}")


def ablation_notes(cfg: MemWeaverConfig) -> list[str]:
    """The trace notes of an ablated retrieval (MemWeaver Table 3); none for the full system."""
    notes = []
    if not cfg.graph_memory:
        notes.append("w/o GM (MemWeaver Table 3): no graph memory at retrieval - no seed or expanded triples, no "
                     "triple selector, no graph-linked passages; passages from the global channel only"
                     + ("; experiences by cosine to the question (no entities to follow `about` edges)"
                        if cfg.experience_memory else ""))
    if not cfg.experience_memory:
        notes.append("w/o ExpM (MemWeaver Table 3): no experience memory at retrieval")
    if notes:
        notes.append("query-time ablation: the memory (graph, passages, experiences) is the full system's; "
                     "construction cost is not removed")
    return notes

