"""Ready-made export bundles: a question's answer, a comparison, a replay, a benchmark run.

Each returns (object for JSON, table for CSV, sections for the standalone HTML page).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from memcore.types import Answer, Question, Trace
from memcore.viz.bench import accuracy_tokens_scatter, category_table, failure_bars, summary_table
from memcore.viz.evidence import (
    compare_bar,
    context_table,
    cost_bar,
    evidence_table,
    export_row,
    missed_table,
)
from memcore.viz.export import Section, block_sections
from memcore.viz.replay import ReplayData, cumulative_cost_figure, layer_counts_figure
from memcore.viz.views import get_view

Bundle = tuple[Any, pd.DataFrame | None, list[Section]]


def structure_sections(system: str, trace: Trace, texts: Mapping[str, str] | None = None) -> list[Section]:
    """A system's retrieval structure as export sections: the blocks its view draws on Ask."""
    return block_sections(get_view(system).structure(trace, dict(texts or {})))


def answer_bundle(q: Question, system: str, ans: Answer, provider: str,
                  texts: Mapping[str, str] | None = None, verdict: Mapping[str, Any] | None = None) -> Bundle:
    """One system's answer to one question: JSON of everything (the page's verdict included), CSV of the
    context, HTML report."""
    obj = {"question": q, "system": system, "retriever": ans.trace.retriever, "provider": provider, "answer": ans,
           "summary": export_row(system, ans, q.evidence, verdict)}
    ctx = context_table(ans.trace, q.evidence)
    sections: list[Section] = [
        ("Question", f"{q.text}\n\nGold answer: {q.answer or '(none)'}\nEvidence: {', '.join(q.evidence) or '(none)'}"),
        (f"Answer by {system}, {ans.trace.retriever} retriever ({provider})", ans.text),
        ("Summary", pd.DataFrame([obj["summary"]])),
    ]
    if q.evidence:
        missed = missed_table(ans.trace, q.evidence, texts)
        sections += [("Why was it missed?", missed if len(missed) else "All gold evidence turns reached the context."),
                     ("Gold evidence", evidence_table(ans.trace, q.evidence, texts))]
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


def replay_bundle(data: Mapping[str, ReplayData]) -> Bundle:
    """Replay of one or more systems: events, layer counts and construction cost."""
    events = pd.concat([rd.events for rd in data.values()], ignore_index=True) if data else pd.DataFrame()
    obj = {s: {"events": rd.events, "counts": rd.counts.reset_index(), "cost": rd.cost.reset_index(),
               "notes": rd.notes} for s, rd in data.items()}
    return obj, events, [("Memory layers over time", layer_counts_figure(dict(data))),
                         ("Construction cost", cumulative_cost_figure(dict(data))), ("Events", events)]


def benchmark_bundle(results: dict[str, Any]) -> Bundle:
    """A benchmark run: summary, per-category tables, accuracy vs tokens, failure attribution."""
    summary = summary_table(results)
    sections: list[Section] = [("Run", run_header(results)), ("Summary", summary)]
    for metric in ("f1", "judge", "evidence_recall"):
        t = category_table(results, metric)
        if t.drop(columns="system").notna().any().any():
            sections.append((f"{metric} by category", t))
    sections += [("Accuracy vs tokens", accuracy_tokens_scatter(results)), ("Failures", failure_bars(results))]
    return results, category_table(results, "f1"), sections


def run_header(results: dict[str, Any]) -> str:
    """A benchmark run's header line: run id, engine, retriever, judge, dataset (what the Benchmark page shows)."""
    dataset = results.get("dataset")
    judge = results.get("judge")
    parts = [f"Run: {results.get('run_id') or '(no id)'}",
             f"Answered by: {results.get('engine') or results.get('llm') or results.get('provider') or '?'}",
             f"Retriever: {results.get('retriever') or '?'}"]
    if isinstance(judge, dict) and judge.get("label"):
        parts.append(f"Judge: {judge['label']}")
    if isinstance(dataset, dict):
        parts.append(f"Dataset: {dataset.get('name', '')} {dataset.get('file') or ''}".rstrip())
    return "\n".join(parts)
