"""RecMem's ablations (Sec. 4.3, Fig. 2) and its reported sweeps (App. C, Fig. 4-5), registered as named presets
and sweeps (memcore.systems.variants).

`recmem:no-subconscious`, `recmem:no-episodic`, `recmem:no-semantic`: the module's retrieval budget is 0 and
the other modules keep theirs (query-time: the full system's memory; construction is unchanged, so the
subconscious store still drives recurrence and episodes still guide refinement). `recmem:direct-extraction`:
semantic facts extracted from the raw turns without the episode as reference (recmem_extract, a new memory),
answering from subconscious retrieval + those facts (k_epi = 0).

Sweeps, one parameter at a time with the others at their defaults (on LoCoMo the paper's theta_sim 0.7,
theta_count 5, k_sub 10, k_epi 5, k_sem 10): the figures' exact x values are not in the paper's text, so the grids are memcore's points
around the paper's default (the default included)."""

from __future__ import annotations

from memcore.systems.variants import register_preset, register_sweep

_FIG2 = "RecMem Sec. 4.3, Fig. 2"
register_preset(
    "recmem", "no-subconscious", {"k_sub": 0}, source=f"{_FIG2} (w/o subconscious)",
    description="w/o subconscious: no raw interaction units retrieved (k_sub = 0); the episodic and semantic "
                "retrieval budgets are kept")
register_preset(
    "recmem", "no-episodic", {"k_epi": 0}, source=f"{_FIG2} (w/o episodic)",
    description="w/o episodic: no episodic memories retrieved (k_epi = 0); the subconscious and semantic "
                "retrieval budgets are kept (episodes are still built and still guide semantic refinement)")
register_preset(
    "recmem", "no-semantic", {"k_sem": 0}, source=f"{_FIG2} (w/o semantic)",
    description="w/o semantic: no semantic facts retrieved (k_sem = 0); the subconscious and episodic "
                "retrieval budgets are kept")
register_preset(
    "recmem", "direct-extraction", {"semantic_source": "direct", "k_epi": 0}, source=f"{_FIG2} (Direct Extraction)",
    description="Direct Extraction: semantic facts extracted directly from raw conversations, without episodic "
                "memories as a reference (the refinement-specific guidance tied to episodic summaries removed "
                "from the prompt); answering with subconscious retrieval and the extracted facts only")
_LOCOMO = ("the others at their defaults (the paper's LoCoMo run: theta_sim 0.7, theta_count 5, k_sub 10, k_epi 5; "
           "LongMemEval data takes its preset's thresholds 0.6 / 4)")
register_sweep(
    "recmem", "theta-sim", {"theta_sim": [0.5, 0.6, 0.7, 0.8, 0.9]}, source="RecMem App. C.1, Fig. 4(a)",
    description=f"the consolidation similarity threshold theta_sim: overall score; {_LOCOMO}")
register_sweep(
    "recmem", "theta-count", {"theta_count": [3, 4, 5, 6, 7]}, source="RecMem App. C.1, Fig. 4(b-c)",
    description=f"the recurrence threshold theta_count: overall score and construction tokens; {_LOCOMO}")
register_sweep(
    "recmem", "k-sub", {"k_sub": [1, 2, 5, 10, 15, 20]}, source="RecMem App. C.2, Fig. 5(a)",
    description=f"the subconscious retrieval budget k_sub: overall score; {_LOCOMO}")
register_sweep(
    "recmem", "k-epi", {"k_epi": [1, 2, 3, 5, 8, 10], "k_sem": [2, 4, 6, 10, 16, 20]}, paired=True,
    source="RecMem App. C.2, Fig. 5(b)",
    description=f"the episodic budget k_epi with k_sem = 2 k_epi (paired points): overall score; {_LOCOMO}")
