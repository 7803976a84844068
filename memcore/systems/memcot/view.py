"""MemCoT's view (registered with memcore.viz.views): the zoom-in / zoom-out / judge loop, step by step.

On the viz floor (tests/test_import_graph.py, "system views"): it draws with memcore.viz's parts; the view registry
imports it by name, nothing in memcore.systems does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from memcore.types import Trace
from memcore.viz.parts import Block, Part, Text
from memcore.viz.safe import esc, shorten
from memcore.viz.theme import HIT, style
from memcore.viz.views import SystemView, register_view

COLUMNS = ["step", "queries", "zoom-in hits", "useful", "zoom-out turns", "picked", "missing", "can answer",
           "action", "new queries"]


def iterations_table(structure: dict[str, Any]) -> pd.DataFrame:
    """One row per loop step: the queries issued, what zoom-in/out found and kept, the judge's decision."""
    rows = []
    for it in structure.get("iterations") or []:
        judge = it.get("judge") or {}
        rows.append({"step": it.get("step"), "queries": " | ".join(it.get("queries") or []),
                     "zoom-in hits": len(it.get("zoom_in_hits") or []), "useful": ", ".join(it.get("useful") or []),
                     "zoom-out turns": sum(len(w) for w in it.get("zoom_out_windows") or []),
                     "picked": ", ".join(it.get("picked") or []), "missing": it.get("missing", ""),
                     "can answer": judge.get("can_answer"), "action": it.get("action", ""),
                     "new queries": " | ".join(it.get("accepted_queries") or [])})
    return pd.DataFrame(rows, columns=COLUMNS)


def iterations_figure(structure: dict[str, Any]) -> go.Figure:
    """Per step: zoom-in hits, useful hits, zoom-out window turns, picks; and the short-term memory size."""
    its = structure.get("iterations") or []
    steps = [it.get("step") for it in its]
    stm: set[str] = set()
    sizes = []
    for it in its:
        stm |= set(it.get("picked") or []) | set((it.get("judge") or {}).get("useful_id") or [])
        sizes.append(len(stm))
    hover = [esc(shorten(" | ".join(it.get("queries") or []), 160)) for it in its]
    fig = go.Figure([
        go.Bar(x=steps, y=[len(it.get("zoom_in_hits") or []) for it in its], name="zoom-in hits",
               marker_color="#BDBDBD", hovertext=hover, hovertemplate="queries: %{hovertext}<extra></extra>"),
        go.Bar(x=steps, y=[len(it.get("useful") or []) for it in its], name="useful (zoom-in)", marker_color="#0072B2"),
        go.Bar(x=steps, y=[sum(len(w) for w in it.get("zoom_out_windows") or []) for it in its],
               name="zoom-out window turns", marker_color="#E69F00"),
        go.Bar(x=steps, y=[len(it.get("picked") or []) for it in its], name="picked", marker_color="#CC79A7"),
        go.Scatter(x=steps, y=sizes, name="short-term memory", mode="lines+markers",
                   line={"color": HIT, "width": 3}, marker={"size": 10}),
    ])
    fig.update_layout(barmode="group")
    fig.update_xaxes(title="loop step", dtick=1)
    fig.update_yaxes(title="turns")
    title = f"MemCoT loop: {len(its)} step(s), {esc(structure.get('stop_reason', ''))}"
    return style(fig, title, height=360)


def memcot_structure(trace: Trace, texts: Mapping[str, str]) -> list[Block]:
    """MemCoT's retrieval on Ask and in the export: the loop, step by step."""
    s = trace.structure
    if not s.get("iterations"):
        return [Part("MemCoT loop", Text("MemCoT ran no loop step for this question.", "info"))]
    return [Part("MemCoT loop", iterations_figure(s), key="loop",
                 caption="Each step: zoom-in searches every queued query, keeps the useful hits; zoom-out reads the "
                         "turns around them; the judge answers or breaks / rewrites the query. The green line is the "
                         f"short-term memory. Answered from: {s.get('answered_from', '')}."),
            Part("Steps", iterations_table(s))]


register_view(SystemView("memcot", color="#009E73", rank=60, structure=memcot_structure))
