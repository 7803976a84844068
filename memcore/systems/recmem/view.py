"""RecMem's view (registered with memcore.viz.views): consolidations (subconscious -> episodic / semantic), the three
stores at question time.

On the viz floor (tests/test_import_graph.py, "system views"): it draws with memcore.viz's parts; the view registry
imports it by name, nothing in memcore.systems does."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from memcore.types import Trace
from memcore.viz.evidence import context_table
from memcore.viz.parts import Block, Part, Text
from memcore.viz.replay import ReplayData
from memcore.viz.theme import kind_color, style
from memcore.viz.views import ItemsAt, SystemView, register_view

STORE_KIND = {"subconscious": "unit", "episodic": "episode", "semantic": "semantic"}
PROMO_COLUMNS = ["step", "exchange", "cluster size", "theta_count", "theta_sim", "neighbours", "similarities",
                 "episodes", "reason"]


def _events(rd: ReplayData, upto: int | None, event: str, item_kind: str) -> Iterator[tuple[Any, dict[str, Any]]]:
    """(event row, its data) for one event and item kind up to a step (unreadable data reads as {})."""
    ev = rd.events
    if upto is not None:
        ev = ev[ev["step"] <= upto]
    for r in ev.itertuples(index=False):
        if r.event == event and r.item_kind == item_kind:
            try:
                yield r, json.loads(r.data)
            except ValueError:
                yield r, {}


def promotions_frame(rd: ReplayData, upto: int | None = None) -> pd.DataFrame:
    """One row per consolidation: the recurring cluster (neighbours and similarities) and its episodes."""
    rows: dict[int, dict[str, Any]] = {}
    for r, d in _events(rd, upto, "created", "episode"):
        if "count" not in d:
            continue
        row = rows.setdefault(r.step, {
            "step": r.step, "exchange": ", ".join(d.get("exchange", [])), "cluster size": d.get("count"),
            "theta_count": d.get("theta_count"), "theta_sim": d.get("theta_sim"),
            "neighbours": ", ".join(d.get("neighbours", [])),
            "similarities": ", ".join(f"{s:.2f}" for s in d.get("similarities", [])), "episodes": [], "reason": r.reason})
        row["episodes"].append(r.items)
    out = [{**r, "episodes": ", ".join(r["episodes"])} for r in rows.values()]
    return pd.DataFrame(out, columns=PROMO_COLUMNS).sort_values("step", ascending=False)


UPDATE_COLUMNS = ["step", "fact", "type", "before", "after", "episode"]


def fact_updates_frame(rd: ReplayData, upto: int | None = None) -> pd.DataFrame:
    """One row per fact rewritten by fact maintenance (Eq. 8-9): the fact's text before and after."""
    rows = []
    for r, d in _events(rd, upto, "updated", "semantic"):
        if d.get("maintenance") != "update":
            continue
        rows.append({"step": r.step, "fact": r.items, "type": d.get("type", ""), "before": d.get("old_text", ""),
                     "after": d.get("new_text", ""), "episode": d.get("episode", "")})
    return pd.DataFrame(rows, columns=UPDATE_COLUMNS).sort_values("step", ascending=False, kind="stable")


def stores_figure(structure: dict[str, Any]) -> go.Figure:
    """Store sizes and what retrieval took from each (subconscious, episodic, semantic)."""
    stores = structure.get("stores") or {}
    got = structure.get("retrieved") or {}
    names = list(STORE_KIND)
    fig = go.Figure([
        go.Bar(x=names, y=[stores.get(n, 0) for n in names], name="in store",
               marker_color=[kind_color(STORE_KIND[n]) for n in names], opacity=0.35),
        go.Bar(x=names, y=[got.get(n, 0) for n in names], name="retrieved",
               marker_color=[kind_color(STORE_KIND[n]) for n in names]),
    ])
    fig.update_layout(barmode="overlay")
    fig.update_yaxes(title="items")
    return style(fig, "RecMem stores: size (pale) and retrieved (solid)", height=300)


def recmem_structure(trace: Trace, texts: Mapping[str, str]) -> list[Block]:
    """RecMem's retrieval on Ask and in the export: store sizes, then what came from each store."""
    out: list[Block] = [Part("RecMem stores", stores_figure(trace.structure), key="stores")]
    df = context_table(trace)
    for origin in ("semantic", "episodic", "subconscious"):
        part = df[df["origin"] == origin]
        out.append(Part(f"{origin} · {len(part)} item(s)", part[["id", "score", "text", "turns"]] if len(part) else None,
                        label=f"**{origin}** · {len(part)} item(s)", height=min(40 + 35 * len(part), 240)))
    return out


def recmem_growth(rd: ReplayData, step: int, items_at: ItemsAt) -> list[Block]:
    """Consolidations so far, and at a promotion step the recurring cluster that triggered it."""
    df = promotions_frame(rd, step)
    now = df[df["step"] == step]
    out: list[Block] = []
    if len(now):
        first = now.iloc[0]
        out.append(Part("Consolidated at this step", Text(
            f"Step {step}: a topic recurred {first['cluster size']} times (theta_count {first['theta_count']}) "
            f"and was consolidated into {first['episodes']}.", "success")))
        units = {u.id: u for u in items_at("unit", step - 1)}
        cluster = [units[u] for u in str(first["neighbours"]).split(", ") if u in units]
        if cluster:
            out.append(Part("Recurrence cluster", pd.DataFrame([{"unit": u.id, "turns": ", ".join(u.turn_ids),
                                                                 "text": u.text} for u in cluster]),
                            caption="The recurrence cluster that triggered it (subconscious units, now promoted)."))
    updates = fact_updates_frame(rd, step)
    if len(updates):
        out.append(Part("Fact maintenance", updates, height=min(38 + 35 * len(updates), 260),
                        caption=f"{len(updates)} fact(s) rewritten up to step {step} (fact maintenance, Eq. 8-9): "
                                "a later exchange changed what was known; the earlier text stays in the fact's "
                                "version history."))
    out.append(Part("Consolidations", df, height=min(38 + 35 * max(len(df), 1), 260),
                    caption=f"{len(df)} consolidation(s) up to step {step}: subconscious exchanges -> episodes -> "
                            "semantic facts, only when a topic recurs."))
    return out


register_view(SystemView("recmem", color="#E69F00", rank=50, structure=recmem_structure, growth=recmem_growth,
                         growth_rank=3))
