"""RecMem's rows of docs/fidelity.md: each paper step, its value, where memcore does it, the status."""

from __future__ import annotations

from memcore.systems.parts import Fidelity, FidelityRow

FIDELITY = Fidelity("RecMem", (
    FidelityRow('Interaction unit',
                'a message exchange (Eq. 2-3); LoCoMo: consecutive messages paired within a session',
                'RecMemSystem.on_turn, unit_text',
                'faithful (papers/README.md)'),
    FidelityRow('Threshold preset',
                'theta_sim / theta_count = 0.7 / 5 on LoCoMo, 0.6 / 4 on LongMemEval-S (Sec. 4)',
                '`recmem.preset` = "auto"; RecMemConfig.thresholds(source)',
                'faithful: chosen by the conversation\'s source; other sources get the LoCoMo preset ("casual'
         ' open-ended", Sec. 3.6: our reading); a named preset is an option'),
    FidelityRow('Recurrence similarity',
                'theta_sim (Eq. 5)',
                '`recmem.theta_sim` = None',
                "faithful: None = the preset's"),
    FidelityRow('Recurrence count',
                'theta_count, the unit included (Eq. 5)',
                '`recmem.theta_count` = None',
                "faithful: None = the preset's"),
    FidelityRow('Merge-first gate',
                'the same theta_sim (Eq. 6)',
                '`recmem.theta_merge` = None',
                'faithful: one threshold, so a theta_sim sweep moves both; a value splits them (option; the '
         'merged event says which gate)'),
    FidelityRow('Neighbours queried',
                'top-k = 2 * theta_count',
                'RecMemSystem.process_unit',
                'faithful (papers/README.md)'),
    FidelityRow('Episodic consolidation',
                'time-sorted cluster -> 1-3 episodes, inductive (Eq. 7, Fig. 6-8)',
                '`recmem.max_episodes` = 3; `recmem_episodes`',
                "faithful; the reply also names each episode's turns and a title (memcore addition for "
         'provenance)'),
    FidelityRow('Episodic merge',
                'LLM_merge on the nearest episode (Eq. 6, Fig. 12-14)',
                '`recmem_merge`',
                'faithful; a reason is asked too (memcore addition, shown on Replay)'),
    FidelityRow('Semantic refinement context',
                "the top-k known facts by the episode's vector (Eq. 8), k = 10",
                '`recmem.k_facts_context` = 10',
                'faithful (papers/README.md)'),
    FidelityRow('Semantic refinement',
                'detail recovery + fact maintenance (Eq. 9, Fig. 9-11), four fact types',
                '`recmem_refine`',
                'faithful'),
    FidelityRow('Fact maintenance',
                'Sec. 3.4 after Eq. 9: "each extracted fact ... is stored as an independent entry"; '
         '"updating evolving user states" happens by extracting the change as a new fact; '
         'papers/README.md: "new facts only"',
                '`recmem.fact_maintenance` = "append"; RecMemSystem._refine',
                'faithful: a change becomes a new TIME_ANCHORED_UPDATE fact and known facts stay as they are'
         ' (tests/systems/test_paper_defaults.py); "update" (memcore\'s earlier reading: the changed '
         'fact is rewritten in place as a new version, RecMemSystem._maintain) is an option'),
    FidelityRow('Retrieval budgets',
                'k_sub = 10, k_epi = 5, k_sem = 10 (k_sem = 2 k_epi)',
                '`recmem.k_sub` = 10, `recmem.k_epi` = 5, `recmem.k_sem` = 10',
                'faithful'),
    FidelityRow('Candidates shown in the trace',
                '-',
                '`recmem.pool` = 20',
                'memcore addition (display only)'),
    FidelityRow('Temperatures',
                '0.0 for every call (Sec. 4)',
                'Role.temperature 0 for `recmem_merge`, `recmem_episodes`, `recmem_refine`',
                'faithful'),
    FidelityRow('Reader prompt',
                'App. F (Fig. 15-16), E.3-E.4: three memory kinds, no double counting, most recent wins, < '
         '5-6 words on LoCoMo only',
                '`recmem.reader` = "paper"; `answer_recmem_locomo`, `answer_recmem_longmemeval`',
                'faithful'),
    FidelityRow('Embedder',
                'text-embedding-3-small',
                'MiniLM (offline)',
                "deviation: memcore's offline-first stack; cosines differ, so the thresholds trigger at "
         'other rates'),
))
