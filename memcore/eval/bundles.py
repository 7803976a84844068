"""Ready-made export bundles of eval's rows: a question's answer, a comparison across systems, a benchmark run.

Each returns (object for JSON, table for CSV, sections for the standalone HTML page), as memcore.viz.bundles'
(a replay; a system's retrieval structure): eval works out the rows and hands them to viz's tables and figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from memcore.eval.answer_rows import export_row
from memcore.eval.bench_data import metric_look, summary_scores
from memcore.eval.diagnostics import evidence_hits, locate_missed_evidence
from memcore.types import Answer, Question
from memcore.viz.bench import accuracy_tokens_scatter, category_table, failure_bars, summary_table
from memcore.viz.bundles import Bundle, run_header, structure_sections
from memcore.viz.evidence import compare_bar, context_table, cost_bar, evidence_table, missed_table
from memcore.viz.export import Section

__all__ = ["answer_bundle", "benchmark_bundle", "comparison_bundle"]


def answer_bundle(q: Question, system: str, ans: Answer, provider: str,
                  texts: Mapping[str, str] | None = None, verdict: Mapping[str, Any] | None = None) -> Bundle:
    """One system's answer to one question: JSON of everything (the page's verdict included), CSV of the
    context, HTML report."""
    obj = {"question": q, "system": system, "retriever": ans.trace.retriever, "provider": provider, "answer": ans,
           "summary": export_row(system, ans, q.evidence, verdict)}
    hits = evidence_hits(ans.trace, q.evidence)
    ctx = context_table(ans.trace, hits.gold)
    sections: list[Section] = [
        ("Question", f"{q.text}\n\nGold answer: {q.answer or '(none)'}\nEvidence: {', '.join(q.evidence) or '(none)'}"),
        (f"Answer by {system}, {ans.trace.retriever} retriever ({provider})", ans.text),
        ("Summary", pd.DataFrame([obj["summary"]])),
    ]
    if q.evidence:
        missed = missed_table(locate_missed_evidence(ans.trace, q.evidence), texts)
        sections += [("Why was it missed?", missed if len(missed) else "All gold evidence turns reached the context."),
                     ("Gold evidence", evidence_table(hits, texts))]
    sections += [("Retrieved context", ctx), ("Cost by stage", cost_bar({system: ans.usage}))]
    sections += structure_sections(system, ans.trace, texts)
    return obj, ctx, sections


def comparison_bundle(q: Question, answers: Mapping[str, Answer], provider: str,
                      verdicts: Mapping[str, Mapping[str, Any] | None] | None = None) -> Bundle:
    """The same question across systems: per system the evidence hit and missed, the verdict with F1, judge and
    reason (`verdicts`: system -> the page's verdict, None for a question without a gold answer), the answer,
    context size and cost."""
    rows = [export_row(s, a, q.evidence, (verdicts or {}).get(s)) for s, a in answers.items()]
    table = pd.DataFrame(rows)
    obj = {"question": q, "provider": provider, "rows": rows, "answers": dict(answers)}
    return obj, table, [("Question", f"{q.text}\n\nGold answer: {q.answer or '(none)'}"), ("Comparison", table),
                        ("Context size", compare_bar(rows, "context tokens")),
                        ("Cost by stage", cost_bar({s: a.usage for s, a in answers.items()}))]


def benchmark_bundle(results: dict[str, Any]) -> Bundle:
    """A benchmark run: summary, per-category tables, accuracy vs tokens, failure attribution."""
    summary = summary_table(results, summary_scores())
    sections: list[Section] = [("Run", run_header(results)), ("Summary", summary)]
    for metric in ("f1", "judge", "evidence_recall"):
        t = category_table(results, metric)
        if t.drop(columns="system").notna().any().any():
            sections.append((f"{metric} by category", t))
    sections += [("Accuracy vs tokens", accuracy_tokens_scatter(results, look=metric_look("f1"))), ("Failures", failure_bars(results))]
    return results, category_table(results, "f1"), sections
