"""memcore's own metrics, in the order results and the CSV list them: the metric registry
(memcore.eval.metric_registry) registers `BUILTIN` first, before any plugin.

Answer metrics are computed here per question (memcore.eval.metrics); the judge's verdicts, the evidence
diagnostics (memcore.eval.diagnostics) and the content measures (memcore.eval.content) are written by the
row builder (memcore.eval.report.build_row), which computes each group together; they are declared here
for aggregation, intervals and display. Which questions each applies to is as computed: the LoCoMo F1
applies to all, with category 5 and LongMemEval abstention questions scored by the abstention rule
(memcore.eval.metrics.locomo_f1); embedding similarity, coverage and answer in context to answerable
questions only; the judge to all (its prompt picks the abstention rule).
"""

from __future__ import annotations

from collections.abc import Callable

from memcore.eval.beam_scores import (
    EVENT_ORDER_RULE,
    OFFLINE_RUBRIC_RULE,
    embedding_similarity,
    event_order_score,
    response_items,
    rubric_rule,
)
from memcore.eval.content import CONTENT_LABELS
from memcore.eval.judge import judge_stats
from memcore.eval.metric_types import (
    ANSWERABLE,
    CHART,
    COMPARE,
    COUNT,
    CSV,
    PLACES,
    REPORT,
    SUMMARY,
    Metric,
    MetricInput,
)
from memcore.eval.metrics import METRIC_LABELS, bleu1, exact_match, locomo_f1, meteor, rouge_2, similarity
from memcore.eval.paper_metrics import latency_block

__all__ = ["BUILTIN"]


def _gold(score: Callable[[MetricInput], float | None]) -> Callable[[MetricInput], float | None]:
    """`score`, or None for a question without a reference answer (LoCoMo-Plus: only a judge can score it)."""
    return lambda m: None if m.question.metadata.get("no_reference_answer") else score(m)


@_gold
def _f1(m: MetricInput) -> float:
    return locomo_f1(m.prediction, m.gold, 5 if m.abstain else m.question.category)


@_gold
def _similarity(m: MetricInput) -> float | None:
    return similarity(m.prediction, m.gold, m.embedder) if m.embedder is not None else None


def _rubric_rule(m: MetricInput) -> float | None:
    """The offline rubric rule's score of a question with a rubric (BEAM), else None."""
    rubric = m.question.metadata.get("rubric")
    return rubric_rule(rubric, m.prediction)[0] if rubric else None


def _event_order(m: MetricInput) -> float | None:
    """BEAM's event-ordering score of an event-ordering question (needs the run's embedder), else None."""
    ref = m.question.metadata.get("reference_order")
    if not ref or m.embedder is None:
        return None
    return event_order_score(ref, response_items(m.prediction), embedding_similarity(m.embedder))["score"]


def _judge_score(row: dict) -> float | None:
    """The judge as the mean over its K runs (booleans 0/1), None when no run gave a verdict."""
    runs = [v for v in (row.get("judge_runs") or [row.get("judge")]) if v is not None]
    return sum(map(float, runs)) / len(runs) if runs else None


def _field_of(name: str) -> Callable[[dict], float | None]:
    """Read a row's numeric field `name` (None when absent)."""
    return lambda r: None if r.get(name) is None else float(r[name])


def _coverage_found(row: dict) -> bool | None:
    return row.get("coverage_blocks") is not None if row.get("coverable", True) else None


def _failure(kind: str, name: str, show: frozenset[str]) -> Metric:
    """Wrong answers of one failure kind (memcore.eval.diagnostics.attribute_failure), counted."""
    return Metric(name, name.replace("_", " "), read=lambda r: r.get("failure") == kind, aggregate=COUNT,
                  bounds=None, higher_better=False, interval=False, digits=0, show=show)


_SCORES = frozenset({CSV, CHART})  # shown in the CSV and on the Benchmark's metric picker only
_MAIN = frozenset({CSV, REPORT, CHART, COMPARE})
BUILTIN: tuple[Metric, ...] = (
    Metric("f1", "F1", _f1, headline=True, column="f1 [95% CI]", description=METRIC_LABELS["f1"], show=PLACES),
    Metric("bleu1", "BLEU-1", _gold(lambda m: bleu1(m.prediction, m.gold)), description=METRIC_LABELS["bleu1"],
           show=_SCORES),
    Metric("rouge_2", "ROUGE-2", _gold(lambda m: rouge_2(m.prediction, m.gold)), column="rouge2",
           description=METRIC_LABELS["rouge_2"], show=_SCORES | {REPORT}),
    Metric("meteor", "METEOR", _gold(lambda m: meteor(m.prediction, m.gold)), description=METRIC_LABELS["meteor"],
           show=_SCORES | {REPORT}),
    Metric("similarity", "embedding similarity", _similarity, bounds=(-1.0, 1.0), applies=ANSWERABLE, column="sim",
           description=METRIC_LABELS["similarity"], show=_SCORES | {REPORT}),
    Metric("em", "exact match", _gold(lambda m: exact_match(m.prediction, m.gold)), show=_SCORES),
    Metric("judge", "judge", read=_judge_score, aggregate=judge_stats, headline=True, needs_judge=True,
           extra=("judge_std",), column="judge [95% CI]", show=PLACES),
    Metric("evidence_recall", "citation recall", headline=True, column="cite_recall", show=PLACES),
    Metric("all_evidence_hit", "all evidence cited", show=_SCORES),
    Metric("content_recall", "content recall", headline=True, description=CONTENT_LABELS["content_recall"],
           show=_MAIN),
    Metric("all_content_hit", "all evidence content", show=_SCORES),
    Metric("answer_in_context", "answer in context", headline=True, column="ans_in_ctx",
           description=CONTENT_LABELS["answer_in_context"], show=_MAIN),
    Metric("answer_token_recall", "answer token recall", show=frozenset({CSV})),
    Metric("coverage_blocks", "coverage blocks", applies=ANSWERABLE, bounds=None, higher_better=False,
           interval=False, show=_SCORES),
    Metric("coverage_tokens", "coverage tokens", applies=ANSWERABLE, bounds=None, higher_better=False,
           interval=False, show=_SCORES),
    Metric("coverage_found", "coverage found", read=_coverage_found, applies=ANSWERABLE, interval=False,
           show=frozenset()),
    Metric("context_tokens", "context tokens", bounds=None, higher_better=False, column="ctx_tok", digits=0,
           show=frozenset({CSV, REPORT, CHART, SUMMARY, COMPARE})),
    Metric("retrieve_ms_p50", "retrieval latency p50 (ms)", read=_field_of("retrieve_ms"), aggregate=latency_block,
           bounds=None, higher_better=False, interval=False, extra=("retrieve_ms_p95",), column="ret_p50_ms",
           description="the retrieve step's wall time per question (without the answer call): p50 and p95 in ms",
           digits=1, show=frozenset({CSV, REPORT, CHART, SUMMARY})),
    _failure("retrieval_failure", "retrieval_failures", frozenset({CSV, CHART})),
    _failure("reasoning_failure", "reasoning_failures", frozenset({CSV, CHART})),
    _failure("no_evidence", "no_evidence_failures", frozenset()),
    # BEAM and LoCoMo-Plus (None on other datasets: the text report shows them only when a run has them)
    Metric("rubric_judge", "rubric score (LLM judge)", needs_judge=True, column="rubric_llm",
           description="BEAM rubric: each rubric item judged 0 / 0.5 / 1 by the LLM judge, the question's score "
           "their mean (memcore.eval.rubric_role)", show=PLACES),
    Metric("rubric_rule", "rubric score (offline rubric rule)", _rubric_rule, column="rubric[offline rule]",
           description=OFFLINE_RUBRIC_RULE, show=PLACES),
    Metric("event_order", "event ordering (tau-b x F1)", _event_order, column="event_order",
           description=EVENT_ORDER_RULE, show=PLACES),
    Metric("plus_judge", "LoCoMo-Plus judge (correct 1 / partial 0.5 / wrong 0)", needs_judge=True,
           column="plus_judge", description="LoCoMo-Plus: the response labelled correct / partial / wrong by the "
           "LLM judge with the category's prompt (memcore.eval.rubric_role)", show=PLACES),
)
