"""MemWeaver's ablations (Sec. 5.4, Table 3) and reported sweep (Sec. 5.5, Fig. 3), registered as named presets
and sweeps (memcore.systems.variants): `memweaver:no-graph`, `memweaver:no-experience`, sweep `budgets`.
Both switches are query-time: the memory is built as usual (construction cost is the full system's); the
global passage channel is kept in both, as the paper keeps it."""

from __future__ import annotations

from memcore.systems.variants import register_preset, register_sweep

register_preset(
    "memweaver", "no-graph", {"graph_memory": False}, source="MemWeaver Sec. 5.4, Table 3 (w/o GM)",
    description="w/o GM: without Graph Memory; no triples and no graph-linked passages at retrieval, the global "
                "passage retrieval channel preserved, experiences by cosine (no entities to link them)")
register_preset(
    "memweaver", "no-experience", {"experience_memory": False}, source="MemWeaver Sec. 5.4, Table 3 (w/o ExpM)",
    description="w/o ExpM: without Experience Memory; no experience items at retrieval, the graph and the "
                "global passage retrieval channel preserved")
register_sweep(
    "memweaver", "budgets", {"seed_triples": [2, 4, 6, 8, 10], "passages": [2, 4, 6, 8, 10]},
    source="MemWeaver Sec. 5.5, Fig. 3",
    description="retrieval budgets: the number of retrieved graph triples (seed triples, the paper's triple "
                "budget; expansion keeps up to keep_triples) x the number of textual memory items (passages; "
                "experiences stay at 6): heatmaps per category")
