"""RecMem views: consolidations (subconscious -> episodic / semantic) and the three stores at question time."""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go

from memcore.viz.replay import ReplayData
from memcore.viz.theme import kind_color, style

STORE_KIND = {"subconscious": "unit", "episodic": "episode", "semantic": "semantic"}
PROMO_COLUMNS = ["step", "exchange", "cluster size", "theta_count", "theta_sim", "neighbours", "similarities",
                 "episodes", "reason"]


def promotions_frame(rd: ReplayData, upto: int | None = None) -> pd.DataFrame:
    """One row per consolidation: the recurring cluster (neighbours and similarities) and its episodes."""
    import json

    ev = rd.events
    if upto is not None:
        ev = ev[ev["step"] <= upto]
    rows: dict[int, dict[str, Any]] = {}
    for r in ev.itertuples(index=False):
        if r.event != "created" or r.item_kind != "episode":
            continue
        try:
            d = json.loads(r.data)
        except ValueError:
            d = {}
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
