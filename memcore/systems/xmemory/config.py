"""xMemory's parameters at the paper's values (papers/README.md, xMemory section)."""

from __future__ import annotations

from dataclasses import dataclass

from memcore.systems.base import SystemConfig, query_field
from memcore.systems.fields import param


@dataclass
class XMemoryConfig(SystemConfig):
    """Paper parameters (papers/README.md, xMemory section); query_field ones only affect retrieval.

    Readings where the spec leaves room: a theme above `max_theme` always splits (f picks the
    candidate); the soft incoherence split only when it raises f (`coherence_split_needs_gain`);
    a split's largest part keeps the theme id and a merge keeps the larger theme, so only the others
    count as reassigned; merge passes (after every episode) consider pairs with a theme changed since.
    """

    gap_minutes: int = param(30, range=(0, None), source="papers/README.md (xMemory): gap > 30 min", help="time gap that always "
                             "closes an episode")
    episode_messages: int = param(15, range=(1, None), source="papers/README.md (xMemory): ~10-15 messages", help="guidance: an episode "
                                  "should not exceed this many messages")
    buffer_cap: int = param(20, range=(1, None), source="papers/README.md (xMemory): buffer cap 20", help="hard cap on the episode buffer")
    attach_cos: float = param(0.62, range=(-1.0, 1.0), source="papers/README.md (xMemory, authors' code)", help="attach a semantic to the nearest theme "
                              "at or above this centroid cosine")
    attach_cos_small: float = param(0.52, range=(-1.0, 1.0), source="papers/README.md (xMemory, authors' code)", help="attach_cos for themes with fewer "
                                    "than max_theme members")
    max_theme: int = param(12, range=(1, None), source="xMemory Sec. 4.1, App. B.3 (12); sweep Table 8",
                           help="theme size cap: split above; merged size cap")
    split_min: int = param(8, range=(1, None), source="papers/README.md (xMemory, authors' code)", help="... or split at >= split_min members when "
                           "incoherent")
    split_coherence: float = param(0.72, range=(-1.0, 1.0), source="papers/README.md (xMemory, authors' code)", help="mean pairwise cosine below which "
                                   "such a theme is incoherent")
    split_edge_cos: float = param(0.66, range=(-1.0, 1.0), source="papers/README.md (xMemory, authors' code)", help="edges of the component graph for "
                                  "split candidates")
    coherence_split_needs_gain: bool = param(True, source="memcore reading (the spec leaves room)",
                                             help="the soft (incoherence) split only when it raises f")
    split: bool = param(True, omit_default=True, source="ablation, xMemory Sec. 5.3, Fig. 5 (w/o split)",
                        help="split themes (off: no split ever, themes grow past max_theme; merges still run)")
    merge_cos: float = param(0.78, range=(-1.0, 1.0), source="papers/README.md (xMemory, authors' code)", help="merge theme pairs at or above this "
                             "centroid cosine")
    merge_passes: int = param(2, range=(0, None), source="papers/README.md (xMemory, authors' code)", help="merge passes after each episode")
    neighbour_themes: int = param(10, range=(1, None), source="papers/README.md (xMemory, authors' code)", help="f is evaluated on a theme and its "
                                  "nearest themes")
    sem_eps: float = param(1e-3, range=(0.0, None), source="xMemory Sec. 3.2 Eq. 3 (sigma = MAD + eps); 1e-3: "
                           "memcore choice", help="eps in SemScore's sigma (> 0)")
    episode_prompt: str = param("paper", choices=("paper", "shared"), source="paper: xMemory App. C; shared: "
                                "memcore option", help="xmemory_episode role or the shared episode_summary role")
    episode_vector: str = param("text", choices=("text", "mean_messages"), source="text: the paper; "
                                "mean_messages: memcore option", help="episode embedding: its text or the mean of "
                                "its turns")
    semantic_prompt: str = param("paper", choices=("paper", "recmem_typed"), source="paper: xMemory App. C; "
                                 "recmem_typed: memcore option", help="xmemory_semantic (no de-dup) or "
                                 "semantic_facts + dup_cos")
    dup_cos: float = param(0.95, range=(-1.0, 1.0), source="memcore option (recmem_typed only)",
                           help="a new fact this close to a stored semantic links to it instead")
    pool: int = query_field(40, range=(1, None), source="papers/README.md (xMemory): Stage I top-40", help="Stage I: semantics by cosine")
    knn: int = query_field(10, range=(1, None), source="xMemory Sec. 3.2 (kNN graph); k = 10: papers/README.md (xMemory)",
                           help="neighbours per node in the kNN graph")
    knn_scope: str = query_field("level", choices=("level", "joint"), source="xMemory Sec. 3.2 (among theme and "
                                 "semantic nodes); level: memcore reading", help="one kNN graph per level, or one "
                                 "over themes + semantics")
    alpha: float = query_field(0.7, range=(0.0, 1.0), source="xMemory Sec. 3.3 Eq. 4 (alpha in [0, 1]); 0.7: "
                               "papers/README.md", help="Stage I: coverage vs query relevance")
    theme_budget: int = query_field(5, range=(1, None), source="xMemory Sec. 3.3 (budget); 5: papers/README.md (xMemory)",
                                    help="Stage I: themes chosen")
    semantic_budget: int = query_field(20, range=(1, None), source="xMemory Sec. 3.3 (budget); 20: papers/README.md (xMemory)",
                                       help="Stage I: semantics chosen")
    coverage_target: float = query_field(1.0, range=(0.0, 1.0), source="xMemory Sec. 3.3 (target threshold); "
                                         "full coverage: papers/README.md (xMemory)", help="Stage I stops at this covered ratio")
    episode_top: int = query_field(10, range=(0, None), source="papers/README.md (xMemory): top-10 episodes by vector",
                                   help="Stage II: episodes by vector besides the linked ones")
    parent_weight: float = query_field(0.5, range=(0.0, None), source="papers/README.md (xMemory): + 0.5 x best parent score",
                                       help="Stage II priority: weight of the best parent-semantic score")
    probe: int = query_field(10, range=(0, None), source="papers/README.md (xMemory): probe the top 10", help="Stage II: episodes probed")
    max_episodes: int = query_field(10, range=(0, None), source="papers/README.md (xMemory): stop at 10 episodes",
                                    help="Stage II: episodes included at most")
    include_gain: float = query_field(-0.4, range=(None, None), source="papers/README.md (xMemory): gain > -0.4",
                                      help="Stage II: include an episode above this uncertainty gain")
    message_gain: float = query_field(0.25, range=(None, None), source="papers/README.md (xMemory): gain > 0.25",
                                      help="Stage II: also include its raw messages above this gain")
    low_gain: float = query_field(0.0, range=(None, None), source="memcore reading (a probe that did not reduce "
                                  "uncertainty)", help="a probe with gain <= low_gain is low-gain")
    early_window: int = query_field(3, range=(0, None), source="papers/README.md (xMemory): 1 low-gain probe in the first 3",
                                    help="one low-gain probe among the first this many stops Stage II")
    max_low: int = query_field(2, range=(1, None), source="papers/README.md (xMemory): 2 low-gain probes in 10",
                               help="... and so does this many low-gain probes in all")
    answer_tokens: int = query_field(20, range=(1, None), source="papers/README.md (xMemory): 20 tokens, temperature 0",
                                     help="Stage II: answer tokens decoded to measure uncertainty")
    stage_one: bool = query_field(True, source="ablation, xMemory Sec. 5.1, Fig. 3 (RepSel = Stage I)",
                                  help="Stage I representative selection on the kNN graphs (off: the top "
                                  "theme_budget themes and semantic_budget semantics by similarity)")
    stage_two: bool = query_field(True, source="ablation, xMemory Sec. 5.1, Fig. 3 (UncSel = Stage II)",
                                  help="Stage II uncertainty-gated inclusion (off: no probes; the top "
                                  "max_episodes episodes by priority, without their messages)")

    def validate(self) -> None:
        """Raise ValueError on an invalid setting (each field's range and choices: the field specs)."""
        super().validate()
        if self.sem_eps <= 0:
            raise ValueError(f"xmemory sem_eps must be > 0 (it keeps SemScore's sigma above 0), not {self.sem_eps!r}")
