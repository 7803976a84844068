"""Vega-Lite specs (plain dicts with their data as pandas frames under "datasets") for the charts a page draws in
its first paint.

Why not plotly there: a fresh browser evaluates plotly's 4.7 MB chunk before the first plotly chart shows, about
2 s of a 2-core machine's main thread; Vega-Lite, which Streamlit also ships, costs about 0.5 s (bench/chart_floor.py).
Replay's default view and Ask's and Compare's bars are drawn from these specs; Replay's other views, and exports,
keep the plotly figures of memcore.viz.replay and memcore.viz.evidence, built from the same data in the same
colours. So plotly's chunk loads only when a view that needs it opens.

Each chart over the steps has an x scale fixed to [0, n_steps] without padding, so a page can place its current
step over the drawn chart from the plot area's box alone (ui.step_line). Hover shows the values at most
TOOLTIP_COLUMNS steps, each named with its step.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from memcore.viz.evidence import BAR_ROW_PX, SIDEWAYS_FROM, usage_dict, usage_tokens
from memcore.viz.replay import ReplayData
from memcore.viz.theme import FONT_SIZE, STAGE_COLORS, kind_color, stage_color
from memcore.viz.views import system_color

DRAWN_COLUMNS = 800  # a step chart's line columns (~its plot's px at a 1280 px page): more steps share a column
TOOLTIP_COLUMNS = 400  # hover columns over the steps (every step up to this many; else every k-th step)
DASHES = [[1, 0], [8, 4], [2, 3], [8, 3, 2, 3], [14, 4], [4, 2, 1, 2, 1, 2], [12, 3, 3, 3], [2, 7]]
# one dash pattern per memory kind, in kind-name order (solid, dash, dot, dash-dot, ...; a ninth kind repeats them)
NO_ITEMS = " (turn index only: no items)"
LEGEND_PX = 700  # a legend's row on a chart ~800 px wide (a 1280 px page): its columns fit it
LABEL_PX = 360  # a legend label longer than this ends in "…" (Vega's labelLimit)
CHAR_PX = 8.5  # a legend label's character at its font size, roughly


def legend_columns(labels: list[str] | dict[str, str], symbol_px: int = 30) -> int:
    """How many legend columns fit LEGEND_PX with the longest label whole (1 to 6)."""
    longest = min(LABEL_PX, CHAR_PX * max((len(str(x)) for x in labels), default=1)) + symbol_px + 16
    return max(1, min(6, int(LEGEND_PX // longest)))


def changes(series: pd.Series) -> pd.Series:
    """The values of a per-step series where they change, with its first and last step: drawn as a step-after line
    it is the same line as every step's value, in a fraction of the rows at 1,500 and more steps."""
    if series.empty:
        return series
    keep = series.ne(series.shift())
    keep.iloc[-1] = True
    return series[keep]


def thinned(series: pd.Series, k: int) -> pd.Series:
    """The change points of a per-step series drawn `k` steps to a column (k > 1): in each column of `k` steps its
    first, lowest, highest and last change point, in step order. Drawn as a step-after line, each column covers
    the same values as the full line, which a plot ~800 px wide cannot draw apart anyway; exact for k = 1."""
    ch = changes(series)
    if k <= 1 or len(ch) <= 2 * DRAWN_COLUMNS:
        return ch
    frame = pd.DataFrame({"v": ch.to_numpy(), "col": ch.index.to_numpy() // k})
    by = frame.groupby("col", sort=False)["v"]
    keep = np.unique(np.concatenate([by.head(1).index, by.tail(1).index, by.idxmin().to_numpy(),
                                     by.idxmax().to_numpy()]))
    return ch.iloc[keep]


def steps_per_column(n_steps: int) -> int:
    """Steps drawn to one column of a step chart: 1 up to DRAWN_COLUMNS steps (every change point drawn)."""
    return max(1, math.ceil((n_steps + 1) / DRAWN_COLUMNS))


def _lines(frames: dict[str, pd.Series], series_of: dict[str, tuple[str, str]], k: int = 1) -> pd.DataFrame:
    """Long rows (step, value, system, kind) of each named series' change points (`k` steps to a column: thinned)."""
    parts = []
    for name, values in frames.items():
        ch = thinned(values, k)
        system, kind = series_of[name]
        parts.append(pd.DataFrame({"step": ch.index.astype("int64"), "value": ch.to_numpy(dtype="float64"),
                                   "system": system, "kind": kind}))
    if not parts:
        return pd.DataFrame({"step": pd.Series(dtype="int64"), "value": pd.Series(dtype="float64"),
                             "system": pd.Series(dtype="object"), "kind": pd.Series(dtype="object")})
    # names as categories: sent as Arrow dictionaries (at 10M tokens 6,000 rows were 294 KB as text, 110 KB so)
    return pd.concat(parts, ignore_index=True).astype({"system": "category", "kind": "category"})


def _hover(frames: dict[str, pd.Series], n_steps: int) -> tuple[pd.DataFrame, int]:
    """Hover columns: every k-th step (k = 1 up to TOOLTIP_COLUMNS steps) with each series' value at that step, in
    columns v0, v1, ... (field names free of the characters Vega-Lite reads as paths); returns (rows, k)."""
    k = max(1, math.ceil((n_steps + 1) / TOOLTIP_COLUMNS))
    steps = list(range(0, n_steps + 1, k))
    rows = pd.DataFrame({"step": steps, "step_end": [s + k for s in steps]})  # the last one clipped at n_steps
    for i, values in enumerate(frames.values()):
        rows[f"v{i}"] = values.reindex(steps).ffill().fillna(0).to_numpy(dtype="float64")
    return rows, k


def _steps_chart(title: str, y_title: str, n_steps: int, frames: dict[str, pd.Series],
                 series_of: dict[str, tuple[str, str]], colors: dict[str, str], dashed: bool,
                 height: int) -> dict[str, Any]:
    """A layered single view: the step-after lines (thinned past DRAWN_COLUMNS steps, which the subtitle says),
    and invisible hover columns over the steps, each naming its step and every series' value there."""
    k = steps_per_column(n_steps)
    lines = _lines(frames, series_of, k)
    thin = len(lines) < sum(len(changes(v)) for v in frames.values())
    hover, _ = _hover(frames, n_steps)
    labels = list(frames)
    x = {"field": "step", "type": "quantitative", "title": "step (turn)",
         "scale": {"domain": [0, max(1, n_steps)], "nice": False, "zero": False, "padding": 0}}
    line: dict[str, Any] = {
        "data": {"name": "lines"},
        "mark": {"type": "line", "interpolate": "step-after", "strokeWidth": 3, "clip": True},
        "encoding": {
            "x": x,
            "y": {"field": "value", "type": "quantitative", "title": y_title, "scale": {"zero": True}},
            "color": {"field": "system", "type": "nominal", "title": "system",
                      "scale": {"domain": list(colors), "range": list(colors.values())},
                      "legend": {"orient": "bottom", "direction": "horizontal", "columns": legend_columns(colors)}},
            "detail": {"field": "kind", "type": "nominal"},
        },
    }
    if dashed:
        kinds = sorted(set(lines["kind"]))
        line["encoding"]["strokeDash"] = {"field": "kind", "type": "nominal", "title": "kind",
                                          # above the plot: beside the systems' legend it ran off the chart's right
                                          "legend": {"orient": "top", "direction": "horizontal",
                                                     "columns": legend_columns(kinds, symbol_px=50),
                                                     "symbolType": "stroke", "symbolSize": 900, "symbolStrokeWidth": 2.5},
                                          "scale": {"domain": kinds, "range": [DASHES[i % len(DASHES)] for i in range(len(kinds))]}}
    tips = [{"field": "step", "type": "quantitative", "title": "step", "format": ","}] + [
        {"field": f"v{i}", "type": "quantitative", "title": label, "format": ","} for i, label in enumerate(labels)]
    hover_layer = {
        "data": {"name": "hover"},
        "mark": {"type": "rect", "opacity": 0, "clip": True},
        "encoding": {"x": {**x, "field": "step"}, "x2": {"field": "step_end"}, "tooltip": tips},
    }
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": {"text": title, "anchor": "start", "fontSize": FONT_SIZE + 3,
                  **({"subtitle": f"{n_steps:,} steps drawn {k} to a column: each column keeps its first, lowest, "
                                  "highest and last value (hover: the values at a step)"} if thin else {})},
        "height": height,  # the plot's: the title, axes and legends come on top of it
        "autosize": {"type": "fit-x", "contains": "padding"},
        "layer": [line, hover_layer],
        "datasets": {"lines": lines, "hover": hover},
        "config": {"legend": {"labelLimit": LABEL_PX, "labelFontSize": FONT_SIZE - 2, "titleFontSize": FONT_SIZE - 2},
                   "axis": {"labelFontSize": FONT_SIZE - 2, "titleFontSize": FONT_SIZE - 1}},
        # SVG, not the canvas Streamlit picks for many marks: the page places its step line from the plot's box
        "usermeta": {"embedOptions": {"renderer": "svg"}},
    }


def layer_counts_spec(data: dict[str, ReplayData]) -> dict[str, Any]:
    """Items per memory kind over the steps (memcore.viz.replay.layer_counts_figure's chart): one colour per
    system, one dash style per kind; a system whose memory holds no item is named in the colour legend, not drawn."""
    frames: dict[str, pd.Series] = {}
    series_of: dict[str, tuple[str, str]] = {}
    colors: dict[str, str] = {}
    for name, rd in data.items():
        label = name if not rd.counts.columns.empty else name + NO_ITEMS
        colors[label] = system_color(name)
        for kind in rd.counts.columns:
            frames[f"{name} · {kind}"] = rd.counts[kind]
            series_of[f"{name} · {kind}"] = (label, str(kind))
    n = max((rd.n_steps for rd in data.values()), default=0)
    return _steps_chart("Memory layers over time", "items in memory", n, frames, series_of, colors, dashed=True,
                        height=300)


def cumulative_cost_spec(data: dict[str, ReplayData], metric: str = "tokens") -> dict[str, Any]:
    """Cumulative construction tokens (or LLM calls) per system over the steps (memcore.viz.replay.
    cumulative_cost_figure's chart); a system whose cost is estimated is named "(approx.)"."""
    frames: dict[str, pd.Series] = {}
    series_of: dict[str, tuple[str, str]] = {}
    colors: dict[str, str] = {}
    for name, rd in data.items():
        label = name + ("" if rd.cost_exact else " (approx.)")
        colors[label] = system_color(name)
        frames[label] = rd.cost[metric]
        series_of[label] = (label, metric)
    n = max((rd.n_steps for rd in data.values()), default=0)
    y_title = f"construction {'tokens' if metric == 'tokens' else 'LLM calls'}"
    return _steps_chart("Construction cost so far", y_title, n, frames, series_of, colors, dashed=False, height=260)


def _bars(title: str, value_title: str, rows: pd.DataFrame, order: list[str], colors: dict[str, str],
          tooltip: list[dict[str, Any]], height: int) -> dict[str, Any]:
    """Bars per system stacked by `part` (rows: system, part, value, ...), in the systems' order: upright for a few
    systems, sideways (a row each, names level) from SIDEWAYS_FROM on, as memcore.viz.evidence's plotly bars."""
    sideways = len(order) >= SIDEWAYS_FROM
    system = {"field": "system", "type": "nominal", "title": None, "scale": {"domain": order},  # all, in order
              "axis": {"labelLimit": LABEL_PX, **({} if sideways else {"labelAngle": 0})}}
    value = {"field": "value", "type": "quantitative", "title": value_title, "stack": "zero"}
    enc: dict[str, Any] = {
        "x": value if sideways else system, "y": system if sideways else value,
        "color": {"field": "part", "type": "nominal", "title": None,
                  "scale": {"domain": list(colors), "range": list(colors.values())},
                  "legend": {"orient": "bottom", "direction": "horizontal", "columns": legend_columns(colors)}},
        "order": {"field": "order", "type": "quantitative"},
        "tooltip": [{"field": "system", "type": "nominal", "title": "system"}, *tooltip],
    }
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": {"text": title, "anchor": "start", "fontSize": FONT_SIZE + 3},
        "height": max(height, BAR_ROW_PX * len(order)) if sideways else height,
        "autosize": {"type": "fit-x", "contains": "padding"},
        "data": {"name": "bars"}, "datasets": {"bars": rows},
        "mark": {"type": "bar"}, "encoding": enc,
        "config": {"legend": {"labelLimit": LABEL_PX, "labelFontSize": FONT_SIZE - 2},
                   "axis": {"labelFontSize": FONT_SIZE - 2, "titleFontSize": FONT_SIZE - 1}},
    }


def kind_count_spec(counts: dict[str, dict[str, int]], title: str = "Items stored per memory, by kind") -> dict[str, Any]:
    """Each system's stored items stacked by kind (a system storing none has no bar but keeps
    its place)."""
    kinds = sorted({k for c in counts.values() for k in c})
    rows = pd.DataFrame([{"system": s, "part": k, "value": int(c[k]), "order": i}
                         for s, c in counts.items() for i, k in enumerate(kinds) if k in c],
                        columns=["system", "part", "value", "order"])
    return _bars(title, "items", rows, list(counts), {k: kind_color(k) for k in kinds},
                 [{"field": "part", "type": "nominal", "title": "kind"},
                  {"field": "value", "type": "quantitative", "title": "items", "format": ","}], 260)


def cost_bar_spec(usage: dict[str, dict[str, Any]], title: str = "Tokens per question by stage") -> dict[str, Any]:
    """Each system's tokens for one question stacked by stage, with the calls per stage on hover
    (memcore.viz.evidence.cost_bar's chart)."""
    stages = [s for s in STAGE_COLORS if any(s in u for u in usage.values())]
    stages += sorted({s for u in usage.values() for s in u} - set(stages))
    rows = pd.DataFrame([{"system": s, "part": st, "value": usage_tokens(u[st]),
                          "calls": int(usage_dict(u[st]).get("calls", 0)), "order": i}
                         for s, u in usage.items() for i, st in enumerate(stages) if st in u],
                        columns=["system", "part", "value", "calls", "order"])
    return _bars(title, "tokens", rows, list(usage), {s: stage_color(s) for s in stages},
                 [{"field": "part", "type": "nominal", "title": "stage"},
                  {"field": "value", "type": "quantitative", "title": "tokens", "format": ","},
                  {"field": "calls", "type": "quantitative", "title": "calls"}], 300)


def compare_bar_spec(rows: list[dict[str, Any]], metric: str = "context tokens") -> dict[str, Any]:
    """One bar per system for a comparison metric in the system's colour (memcore.viz.evidence.compare_bar's)."""
    data = pd.DataFrame([{"system": r["system"], "part": r["system"], "value": r.get(metric) or 0, "order": 0}
                         for r in rows], columns=["system", "part", "value", "order"])
    spec = _bars(metric.capitalize(), metric, data, [r["system"] for r in rows],
                 {r["system"]: system_color(r["system"]) for r in rows},
                 [{"field": "value", "type": "quantitative", "title": metric, "format": ","}], 300)
    spec["encoding"]["color"]["legend"] = None  # the bars are named on their axis
    return spec
