"""xMemory's ablations (Sec. 5.1, Fig. 3, App. A.1 Table 4; Sec. 5.3, Fig. 5, App. A.3 Table 6-7) and its
reported sweep (App. A.3 Table 8), registered as named presets and sweeps (memcore.systems.variants).

Retrieval ablations (query-time: the full system's memory): `xmemory:memory-only` (both adaptive stages
off), `xmemory:plus-repsel` (Stage I only), `xmemory:plus-uncsel` (Stage II only); Ours (Full) is `xmemory`.
The figure's Naive RAG is not an xMemory preset: it is the `naive_rag` baseline (top-20 chunks of raw
messages by vector search, xMemory Sec. 4.1), its own system. Construction ablations (a new memory):
`xmemory:no-split`, `xmemory:no-merge`, `xmemory:no-merge-split`. Sweep `theme-cap`: max_theme."""

from __future__ import annotations

from memcore.systems.variants import register_preset, register_sweep

register_preset(
    "xmemory", "memory-only", {"stage_one": False, "stage_two": False},
    source="xMemory Sec. 5.1, Fig. 3; App. A.1 Table 4 (Memory-only)",
    description="Memory-only: our hierarchical memory structure with a simple similarity retriever, both "
                "adaptive retrieval stages disabled (themes, semantics and episodes by similarity; no "
                "kNN-graph selection, no uncertainty probes)")
register_preset(
    "xmemory", "plus-repsel", {"stage_two": False}, source="xMemory Sec. 5.1, Fig. 3; App. A.1 Table 4 (+RepSel)",
    description="+RepSel: Memory-only plus Stage I, query-aware representative selection of theme and "
                "semantic nodes on the high-level kNN graph; episodes by similarity (no Stage II)")
register_preset(
    "xmemory", "plus-uncsel", {"stage_one": False}, source="xMemory Sec. 5.1, Fig. 3; App. A.1 Table 4 (+UncSion)",
    description="+UncSion: Memory-only plus Stage II, uncertainty-adaptive evidence inclusion (episodic and "
                "original evidence admitted only when it reduces the reader's uncertainty); themes and "
                "semantics by similarity (no Stage I)")
register_preset(
    "xmemory", "no-split", {"split": False}, source="xMemory Sec. 5.3, Fig. 5; App. A.3 Table 6-7 (w/o split)",
    description="w/o split: construction without theme splits (themes grow past the size cap); merges run")
register_preset(
    "xmemory", "no-merge", {"merge_passes": 0}, source="xMemory Sec. 5.3, Fig. 5; App. A.3 Table 6-7 (w/o merge)",
    description="w/o merge: construction without theme merges (no merge pass); splits run")
register_preset(
    "xmemory", "no-merge-split", {"split": False, "merge_passes": 0},
    source="xMemory Sec. 5.3, Fig. 5; App. A.3 Table 6-7 (w/o merge&split)",
    description="w/o merge&split: restructuring frozen, a static hierarchy (semantics stay in the theme they "
                "first attached to: reassignment ratio 0%; the paper's full system 44.91%)")
register_sweep(
    "xmemory", "theme-cap", {"max_theme": [8, 10, 12, 14]}, source="xMemory App. A.3 Table 8",
    description="the theme size cap (upper bound of semantic nodes per theme) in {8, 10, 12, 14}: accuracy "
                "with #semantics, #themes and semantics per theme (trace structure semantic_count, theme_count)")
