"""Human-evaluation views: helpfulness as the mean of annotators' rates with their spread, agreement tables."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from memcore.types import CATEGORY_NAMES
from memcore.viz.safe import esc
from memcore.viz.tables import explain_empty
from memcore.viz.theme import style
from memcore.viz.views import system_color

_ORDER = {name: i for i, name in enumerate(CATEGORY_NAMES.values())}


def _cat_key(cat: str) -> tuple[int, str]:
    return (10**6 if cat == "all" else _ORDER.get(cat, 10**5), cat)


def _bounds(r: dict) -> tuple[float, float]:
    """The error bar: the annotators' lowest and highest rate when two or more labelled, else the pooled
    labels' Wilson 95% interval."""
    if r.get("n_annotators", 1) > 1 and r.get("min") is not None:
        return r["min"], r["max"]
    return r["ci95"]


def helpfulness_figure(rates: list[dict]) -> go.Figure:
    """Grouped bars: per category and system, the mean of annotators' helpfulness rates; error bars span the
    annotators' rates (one annotator: Wilson 95% interval); hover lists every annotator's rate. A system with no
    label in a category gets a flat bar reading "no labels" (a missing bar would read as 0% or be missed)."""
    fig = go.Figure()
    systems = sorted({r["system"] for r in rates})
    cats = sorted({r["category"] for r in rates}, key=_cat_key)
    for s in systems:
        have = {r["category"]: r for r in rates if r["system"] == s and r["n"]}
        rows = [have.get(c) for c in cats]
        lo_hi = [_bounds(r) if r else (0.0, 0.0) for r in rows]
        fig.add_bar(
            name=s, x=cats, y=[r["rate"] if r else 0.0 for r in rows], marker_color=system_color(s),
            error_y={"type": "data", "symmetric": False,
                     "array": [hi - r["rate"] if r else 0.0 for r, (_, hi) in zip(rows, lo_hi, strict=True)],
                     "arrayminus": [r["rate"] - lo if r else 0.0 for r, (lo, _) in zip(rows, lo_hi, strict=True)]},
            text=["" if r else "no labels" for r in rows], textposition="outside", textangle=-90,
            textfont={"size": 11, "color": "#6b7280"}, cliponaxis=False,
            customdata=[[r["helpful"], r["n"], r.get("n_annotators", 1), _per_annotator_text(r)] if r
                        else [0, 0, 0, "no label in this category yet"] for r in rows],
            hovertemplate="%{x}: %{y:.0%} helpful, mean of %{customdata[2]} annotator(s)<br>"
                          "%{customdata[3]}<br>pooled: %{customdata[0]} of %{customdata[1]} labels<extra>"
                          + s + "</extra>",
        )
    # "no labels" at a readable size: plotly otherwise shrinks a bar's text to the bar's width (~7 px here)
    fig.update_layout(barmode="group", yaxis={"range": [0, 1.05], "tickformat": ".0%"},
                      uniformtext={"minsize": 11, "mode": "show"})
    return style(fig, "Helpfulness by category: mean of annotators' rates (bars: their range; one annotator: 95% interval)")


def _per_annotator_text(r: dict) -> str:
    return "<br>".join(f"{esc(a)}: {v:.0%}" for a, v in r.get("per_annotator", {}).items())


def rates_table(rates: list[dict]) -> list[dict]:
    """Rows for a table: system, category, mean of annotators' rates, their spread and each annotator's rate,
    pooled helpful / n with its Wilson interval."""
    annotators = sorted({a for r in rates for a in r.get("per_annotator", {})})
    rows = []
    for r in sorted(rates, key=lambda r: (r["system"], _cat_key(r["category"]))):
        row = {"system": r["system"], "category": r["category"],
               "rate (mean of annotators)": None if r["rate"] is None else round(r["rate"], 3),
               "sd": None if r.get("sd") is None else round(r["sd"], 3), "annotators": r.get("n_annotators", 1)}
        row.update({f"rate · {a}": None if a not in r.get("per_annotator", {}) else round(r["per_annotator"][a], 3)
                    for a in annotators})
        row.update({"helpful (pooled)": r["helpful"], "n (pooled)": r["n"],
                    "pooled 95% interval": f"{r['ci95'][0]:.2f}–{r['ci95'][1]:.2f}"})
        rows.append(row)
    return rows


RATE_EMPTIES = {
    "rate (mean of annotators)": "No label in this cell yet: no rate to average.",
    "sd": ("n<2", "Standard deviation of the annotators' rates: it needs two or more annotators who labelled this "
                  "cell (n<2: one or none did)."),
    "rate · *": "This annotator gave no label in this cell.",
}


def rates_frame(rates: list[dict]) -> pd.DataFrame:
    """rates_table as a DataFrame that names why a cell can be empty (RATE_EMPTIES, memcore.viz.tables): "n<2"
    for a spread of fewer than two annotators, "-" for an annotator without a label in the cell."""
    return explain_empty(pd.DataFrame(rates_table(rates)), RATE_EMPTIES)
