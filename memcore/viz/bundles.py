"""Ready-made export bundles drawn from plain data: a replay, a system's retrieval structure, a run's header.

Each bundle is (object for JSON, table for CSV, sections for the standalone HTML page). The bundles that need
eval's rows and metrics (a question's answer, a comparison, a benchmark run) are memcore.eval.bundles.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from memcore.types import Trace
from memcore.viz.export import Section, block_sections
from memcore.viz.replay import ReplayData, cumulative_cost_figure, layer_counts_figure
from memcore.viz.views import get_view

Bundle = tuple[Any, pd.DataFrame | None, list[Section]]


def structure_sections(system: str, trace: Trace, texts: Mapping[str, str] | None = None) -> list[Section]:
    """A system's retrieval structure as export sections: the blocks its view draws on Ask."""
    return block_sections(get_view(system).structure(trace, dict(texts or {})))


def replay_bundle(data: Mapping[str, ReplayData]) -> Bundle:
    """Replay of one or more systems: events, layer counts and construction cost."""
    events = pd.concat([rd.events for rd in data.values()], ignore_index=True) if data else pd.DataFrame()
    obj = {s: {"events": rd.events, "counts": rd.counts.reset_index(), "cost": rd.cost.reset_index(),
               "notes": rd.notes} for s, rd in data.items()}
    return obj, events, [("Memory layers over time", layer_counts_figure(dict(data))),
                         ("Construction cost", cumulative_cost_figure(dict(data))), ("Events", events)]


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
