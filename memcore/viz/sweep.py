"""Figures of a sweep result (memcore.eval.sweep): a metric against one swept parameter, one line per value of a
second, and the ablation chart (the system's presets beside the full system), both with 95% intervals. The caller
hands in the swept fields (`params`: memcore.eval.sweep_report.param_columns); memcore.eval.sweep_report.is_sweep
tells a sweep's results from one run's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from memcore.viz.safe import esc
from memcore.viz.theme import style
from memcore.viz.views import system_color

FULL = "(full system)"


def _block(point: dict[str, Any], category: str) -> dict[str, Any]:
    summary = point.get("summary") or {}
    return summary.get("overall") if category == "overall" else (summary.get("categories") or {}).get(category) or {}


def sweep_frame(results: dict[str, Any], metric: str = "f1", category: str = "overall", *,
                params: Sequence[str]) -> pd.DataFrame:
    """One row per point: point, preset, each swept field (`params`, in grid order), n, the metric, its interval
    (lo, hi) and the interval's n, memory space (category: a question category key or "overall")."""
    cols = list(params)
    rows = []
    for p in results.get("points", []):
        block = _block(p, category) or {}
        ci = (block.get("ci") or {}).get(metric) or {}
        rows.append({"point": p["name"], "preset": p.get("preset") or FULL,
                     **{c: p.get("params", {}).get(c) for c in cols}, "n": block.get("n", 0),
                     metric: block.get(metric), "lo": ci.get("lo"), "hi": ci.get("hi"), "ci_n": ci.get("n"),
                     "memory": p.get("memory_space", "")})
    return pd.DataFrame(rows, columns=["point", "preset", *cols, "n", metric, "lo", "hi", "ci_n", "memory"])


def _errors(df: pd.DataFrame, metric: str) -> dict[str, Any]:
    y = df[metric].astype(float)
    return {"type": "data", "symmetric": False, "thickness": 1.5, "width": 4,
            "array": (df["hi"].astype(float) - y).fillna(0).tolist(),
            "arrayminus": (y - df["lo"].astype(float)).fillna(0).tolist()}


def param_chart(results: dict[str, Any], metric: str, x: str, line: str | None = None,
                fixed: dict[str, Any] | None = None, category: str = "overall", preset: str = FULL, *,
                params: Sequence[str]) -> go.Figure:
    """`metric` against the swept field `x`, one line per value of `line` (None: one line), over the points of
    `preset` whose other swept fields (`params`) equal `fixed`; error bars: 95% bootstrap intervals (hover: point,
    n)."""
    df = sweep_frame(results, metric, category, params=params)
    df = df[df["preset"] == preset]
    for key, value in (fixed or {}).items():
        if key not in (x, line):
            df = df[df[key] == value]
    df = df[df[metric].notna()]
    fig = go.Figure()
    groups = [(None, df)] if line is None else list(df.groupby(line, sort=True))
    for i, (value, part) in enumerate(groups):
        part = part.sort_values(x)
        name = results.get("system", "") if line is None else f"{line}={value}"
        fig.add_trace(go.Scatter(
            x=part[x].astype(str) if part[x].dtype == object else part[x], y=part[metric], mode="lines+markers",
            name=esc(name), error_y=_errors(part, metric), customdata=part[["point", "n"]].to_numpy(),
            marker={"size": 9, "color": qualitative.Dark2[i % 8] if line else system_color(results.get("system", ""))},
            hovertemplate="%{customdata[0]}: %{y:.3f} (n=%{customdata[1]})<extra></extra>"))
    fig.update_xaxes(title=esc(x))
    fig.update_yaxes(title=f"{esc(metric)} (95% bootstrap interval)")
    fig.update_layout(legend={"orientation": "h", "y": -0.25, "title": {"text": esc(line or "")}})
    where = "" if category == "overall" else f", category {esc(category)}"
    return style(fig, f"{esc(results.get('system', ''))}: {esc(metric)} against {esc(x)}{where}", height=420)


def ablation_chart(results: dict[str, Any], metric: str, fixed: dict[str, Any] | None = None,
                   category: str = "overall", *, params: Sequence[str]) -> go.Figure:
    """The full system and each preset at the swept values `fixed` (default: the first point's) of the swept
    fields `params`, as bars with 95% intervals; the axis names each preset's source (the paper's figure or
    table)."""
    df = sweep_frame(results, metric, category, params=params)
    cols = list(params)
    first = results["points"][0].get("params", {}) if results.get("points") else {}
    held = {p["name"]: set(p.get("held") or ()) for p in results.get("points", [])}
    for key in cols:  # a preset's held field keeps the preset's value: it matches any
        df = df[(df[key] == (fixed or first).get(key)) | df["point"].map(lambda n, k=key: k in held.get(n, ()))]
    sources = results.get("preset_sources") or {}
    labels = [FULL if p == FULL else f"{esc(p)}<br><sub>{esc(sources.get(p, ''))}</sub>" for p in df["preset"]]
    fig = go.Figure(go.Bar(
        x=labels, y=df[metric],
        error_y=_errors(df, metric), customdata=df[["point", "n"]].to_numpy(),
        marker={"color": [system_color(results.get("system", "")) if p == FULL else qualitative.Dark2[i % 8]
                          for i, p in enumerate(df["preset"])]},
        hovertemplate="%{customdata[0]}: %{y:.3f} (n=%{customdata[1]})<extra></extra>"))
    fig.update_yaxes(title=f"{esc(metric)} (95% bootstrap interval)")
    at = ", ".join(f"{k}={v}" for k, v in (fixed or first).items())
    return style(fig, f"{esc(results.get('system', ''))}: ablations, {esc(metric)}" + (f" at {esc(at)}" if at else ""),
                 height=420)
