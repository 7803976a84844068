"""Human-evaluation views: helpfulness rates with 95% intervals, agreement tables."""

from __future__ import annotations

import plotly.graph_objects as go

from memcore.viz.theme import style
from memcore.viz.views import system_color


def helpfulness_figure(rates: list[dict]) -> go.Figure:
    """Grouped bars: helpfulness rate per category for each system, with Wilson 95% intervals."""
    fig = go.Figure()
    systems = sorted({r["system"] for r in rates})
    for s in systems:
        rows = [r for r in rates if r["system"] == s and r["n"]]
        fig.add_bar(
            name=s, x=[r["category"] for r in rows], y=[r["rate"] for r in rows], marker_color=system_color(s),
            error_y={"type": "data", "symmetric": False,
                     "array": [r["ci95"][1] - r["rate"] for r in rows],
                     "arrayminus": [r["rate"] - r["ci95"][0] for r in rows]},
            customdata=[[r["helpful"], r["n"]] for r in rows],
            hovertemplate="%{x}: %{y:.0%} helpful (%{customdata[0]} of %{customdata[1]})<extra>" + s + "</extra>",
        )
    fig.update_layout(barmode="group", yaxis={"range": [0, 1], "tickformat": ".0%"})
    return style(fig, "Helpfulness rate by category (95% Wilson intervals)")


def rates_table(rates: list[dict]) -> list[dict]:
    """Rows for a table: system, category, helpful / n, rate and interval as text."""
    return [{"system": r["system"], "category": r["category"], "helpful": r["helpful"], "n": r["n"],
             "rate": None if r["rate"] is None else round(r["rate"], 3),
             "95% interval": f"{r['ci95'][0]:.2f}–{r['ci95'][1]:.2f}"} for r in rates]
