"""Evaluation: answer metrics, LLM-judge prompts and retrieval diagnostics (benchmark runner lives beside)."""

from memcore.eval.diagnostics import (
    FAILURE_KINDS,
    all_evidence_hit,
    attribute_failure,
    content_words,
    coverage,
    evidence_recall,
    first_evidence_rank,
    locate_missed_evidence,
    split_evidence,
)
from memcore.eval.judge_prompts import JUDGE_TEMPERATURE, judge_prompt, parse_judge_label
from memcore.eval.metric_builtins import BUILTIN as BUILTIN_METRICS
from memcore.eval.metrics import (
    bleu1,
    count_tokens,
    exact_match,
    f1_score,
    is_abstention,
    lexical_judge,
    locomo_f1,
    normalize_answer,
    rouge_l,
)

__all__ = [
    "BUILTIN_METRICS",
    "FAILURE_KINDS",
    "JUDGE_TEMPERATURE",
    "all_evidence_hit",
    "attribute_failure",
    "bleu1",
    "content_words",
    "count_tokens",
    "coverage",
    "evidence_recall",
    "exact_match",
    "f1_score",
    "first_evidence_rank",
    "is_abstention",
    "judge_prompt",
    "lexical_judge",
    "locate_missed_evidence",
    "locomo_f1",
    "normalize_answer",
    "parse_judge_label",
    "rouge_l",
    "split_evidence",
]
