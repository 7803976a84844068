"""MemCoT's rows of docs/fidelity.md: each paper step, its value, where memcore does it, the status."""

from __future__ import annotations

from memcore.systems.parts import Fidelity, FidelityRow

FIDELITY = Fidelity("MemCoT", (
    FidelityRow('Long-term memory',
                'LightRAG over minimal chunks',
                'the flat turn index with the configured retriever (`memcot.retriever` = "dense")',
                'deviation: no graph index; App. B.2 (Table 7) reports naive RAG close to LightRAG (57.73 vs'
         ' 58.03 F1)'),
    FidelityRow('Max iterations',
                'J = 8',
                '`memcot.J` = 8',
                'faithful'),
    FidelityRow('Zoom-in focal retrieval',
                'top-K = 10 per query, de-duplicated, in conversation order with dates',
                '`memcot.K` = 10; MemCoTSystem._zoom_in_hits',
                'faithful'),
    FidelityRow('Zoom-out context expansion',
                '+-W turns around each useful hit within its session; W = 4, 15 on LongMemEval',
                '`memcot.W` = 4, `memcot.W_longmemeval` = 15; MemCoTSystem._windows',
                'faithful'),
    FidelityRow('Panoramic visual grounding',
                'page images of the sessions',
                '-',
                'deviation: text-only data has no page images (module docstring)'),
    FidelityRow('Zoom-in / zoom-out / judge prompts',
                'App. D (constraint matching; Break / Delete; never a failed query)',
                '`memcot_zoom_in`, `memcot_zoom_out`, `memcot_judge`',
                'faithful, adapted: results are shown and answered as dialogue ids ("D3:5"; positions are '
         'accepted too)'),
    FidelityRow('Perception temperature',
                '1.0 (App. C)',
                '`memcot.temperature_perception` = 1.0',
                "faithful (the code's zoom agents default to 0: option 0.0)"),
    FidelityRow('Judge temperature',
                '0.0 (App. C)',
                '`memcot.temperature_judge` = 0.0',
                'faithful'),
    FidelityRow('Responder temperature',
                '1.0 (App. C)',
                '`memcot.temperature_responder` = 1.0',
                "faithful; 0.0 = the authors' code (option)"),
    FidelityRow('Seed',
                'not stated',
                '`memcot.seed` = 0',
                'memcore addition: sent with every MemCoT call so sampled runs repeat where the server '
         'honours seeds'),
    FidelityRow('New queries per step',
                'at most 2',
                '`memcot.max_queries` = 2',
                'faithful (papers/README.md)'),
    FidelityRow('Failed-query memory',
                'episodic trajectory; the last 3 fed back',
                '`memcot.max_failed` = 3',
                'faithful (papers/README.md)'),
    FidelityRow('Judge proposes only issued queries',
                'paper: the trajectory "prevents redundant searches"; code: asks again up to twice, naming '
         'them',
                '`memcot.judge_retries` = 2; MemCoTSystem._judge',
                "faithful (the code's mechanism)"),
    FidelityRow('Loop end',
                'the judge can answer, or step J-1',
                'systems/memcot/__init__.py retrieve',
                'faithful (papers/README.md)'),
    FidelityRow('No new query after the retries',
                'no such case in the paper (the code asserts)',
                'the responder reads the short-term memory; trace `structure.stop_reason` says so',
                'our reading'),
    FidelityRow('Full-conversation fallback',
                'papers/README.md: "if the loop ends without an answer, fall back to answering from the full'
         ' conversation" (the paper\'s text has no end-of-loop path, so the page decides; the authors\''
         ' code does the same)',
                '`memcot.fallback` = "abstain"',
                'faithful: the loop ends without an answer when the short-term memory is empty or the '
         'responder abstains from it; the responder then answers from the whole conversation '
         '(tests/systems/test_paper_defaults.py). "empty" (memcore\'s earlier reading: only an empty '
         'short-term memory) and "never" are options; trace `structure.fallback` and `answered_from`'),
    FidelityRow('Responder prompt',
                "LoCoMo's and LongMemEval's standard prompts (App. D)",
                '`memcot.reader` = "paper"; `answer_locomo_standard`, `answer_locomo_standard_adversarial`, '
         '`answer_longmemeval_standard`',
                "faithful; the code's JSON answer agent (thinking + answer) is not offered (deviation, noted"
         ' here)'),
    FidelityRow('Category that picks the reader prompt',
                "the question's LoCoMo category (LoCoMo's standard prompt adds its date hint for category 2 "
         "and has its own category-5 prompt); in the papers' code, the dataset's gold label",
                '`memcot.category_source` = "gold"',
                "faithful, marked: every answer's `Trace.reader` and result row record `category_source`; "
         "the Benchmark ranking table and `memcore eval`'s table name the systems that read gold "
         'labels; "predicted" (the `question_type` role: an LLM prompt, offline a rule) is the option'
         ' for a comparison on equal terms (see "Reader prompts")'),
    FidelityRow('Steps reported',
                '1.87 average on LoCoMo (Table 6)',
                'trace `structure.steps`',
                'memcore addition for reporting (mechanism statistics `steps_mean`, `fallback_rate`)'),
))
