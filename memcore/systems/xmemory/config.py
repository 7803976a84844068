"""xMemory's parameters at the paper's values (papers/README.md, xMemory section)."""

from __future__ import annotations

from dataclasses import dataclass

from memcore.systems.base import SystemConfig, query_field


@dataclass
class XMemoryConfig(SystemConfig):
    """Paper parameters (papers/README.md, xMemory section); query_field ones only affect retrieval.

    Readings where the spec leaves room: a theme above `max_theme` always splits (f picks the
    candidate); the soft incoherence split only when it raises f (`coherence_split_needs_gain`);
    a split's largest part keeps the theme id and a merge keeps the larger theme, so only the others
    count as reassigned; merge passes (after every episode) consider pairs with a theme changed since.
    """

    gap_minutes: int = 30  # time gap that always closes an episode
    episode_messages: int = 15  # guidance: an episode should not exceed ~10-15 messages
    buffer_cap: int = 20  # hard cap on the episode buffer
    attach_cos: float = 0.62
    attach_cos_small: float = 0.52  # for themes with fewer than max_theme members
    max_theme: int = 12  # split above; merged size cap
    split_min: int = 8  # ... or split at >= split_min members when incoherent
    split_coherence: float = 0.72  # mean pairwise cos below which such a theme is incoherent
    split_edge_cos: float = 0.66  # component graph for split candidates
    coherence_split_needs_gain: bool = True  # the soft (incoherence) split only when it raises f
    merge_cos: float = 0.78
    merge_passes: int = 2
    neighbour_themes: int = 10  # f is evaluated on a theme and its 10 nearest themes
    sem_eps: float = 1e-3  # sigma = MAD + eps in SemScore
    episode_prompt: str = "paper"  # "paper": xmemory_episode (App. C) | "shared": the shared episode_summary role
    episode_vector: str = "text"  # "text": embedding of the episode text (paper) | "mean_messages": mean of its turns
    semantic_prompt: str = "paper"  # "paper": xmemory_semantic, no de-dup | "recmem_typed": semantic_facts + dup_cos
    dup_cos: float = 0.95  # recmem_typed only: a new fact this close to a stored semantic links to it instead
    pool: int = query_field(40)
    knn: int = query_field(10)
    knn_scope: str = query_field("level")  # one kNN graph per level; "joint": one over themes + semantics
    alpha: float = query_field(0.7)
    theme_budget: int = query_field(5)
    semantic_budget: int = query_field(20)
    coverage_target: float = query_field(1.0)
    episode_top: int = query_field(10)
    parent_weight: float = query_field(0.5)
    probe: int = query_field(10)
    max_episodes: int = query_field(10)
    include_gain: float = query_field(-0.4)
    message_gain: float = query_field(0.25)
    low_gain: float = query_field(0.0)  # a probe with gain <= low_gain did not reduce uncertainty
    early_window: int = query_field(3)  # one low-gain probe among the first 3 stops Stage II
    max_low: int = query_field(2)  # ... and so does the second low-gain probe among the 10
    answer_tokens: int = query_field(20)

    def validate(self) -> None:
        """Raise ValueError naming the allowed values of a misspelt option."""
        super().validate()
        for name, allowed in (("episode_prompt", ("paper", "shared")), ("episode_vector", ("text", "mean_messages")),
                              ("semantic_prompt", ("paper", "recmem_typed"))):
            if getattr(self, name) not in allowed:
                raise ValueError(f"xmemory {name}={getattr(self, name)!r}: use one of {', '.join(allowed)}")
