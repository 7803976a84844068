"""Benchmark views over a results JSON (memcore.eval.report): tables, accuracy vs tokens, failures.

Plain data in, figures and tables out: which metrics to show and how each is drawn (`MetricLook`: label,
decimals, better up or down, bounded) are handed in by the caller; memcore.eval.bench_data reads them from the
metric registry, so a registered metric appears here without editing this module (viz never imports eval)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from memcore.types import CATEGORY_NAMES
from memcore.viz.labels import label_annotations, place_labels
from memcore.viz.safe import esc
from memcore.viz.theme import HIT, MISS, style
from memcore.viz.views import series_looks

SYSTEM_FIGURES = ("construction_tokens", "query_tokens_per_question", "llm_calls", "latency_ms_p50", "cost_usd")


@dataclass(frozen=True)
class MetricLook:
    """How a metric is drawn: its field `name`, its `label` on pages, its `digits` (decimals), whether higher is
    better (colour scales), whether it is `bounded` in [0, 1] (the full range shown), and whether it exists only
    when the judge ran (`needs_judge`). The default is an unknown metric's look (memcore.eval.bench_data.metric_look
    gives a registered one's)."""

    name: str = ""
    label: str = ""
    digits: int = 3
    higher_better: bool = True
    bounded: bool = False
    needs_judge: bool = False


def systems_of(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The per-system blocks of a results dict (accepts the full file or its "systems" part)."""
    if "systems" in results and isinstance(results["systems"], dict):
        return results["systems"]
    return {k: v for k, v in results.items() if isinstance(v, dict) and "overall" in v}


def category_names(results: dict[str, Any]) -> dict[str, str]:
    """Category key -> display name across systems, in first-seen order (LoCoMo numbers get their names)."""
    out: dict[str, str] = {}
    for s in systems_of(results).values():
        for key, block in (s.get("categories") or {}).items():
            fallback = CATEGORY_NAMES.get(int(key), str(key)) if str(key).isdigit() else str(key)
            out.setdefault(str(key), str(block.get("name") or fallback))
    return out


def excluded_note(results: dict[str, Any]) -> str:
    """A sentence naming the LoCoMo adversarial category when a LoCoMo-style run left it out, else ""."""
    names = category_names(results)
    locomo = any(n in CATEGORY_NAMES.values() for n in names.values())
    if not locomo or "5" in names or CATEGORY_NAMES[5] in names.values():
        return ""
    return (f"The {CATEGORY_NAMES[5]} category (5: questions whose answer is not in the conversation) was excluded, "
            "as in the papers' protocol; tick 'Include adversarial questions' under Start a run to score it.")


def count_table(results: dict[str, Any]) -> pd.DataFrame:
    """Systems x categories (plus overall): the number of questions behind each score."""
    return category_table(results, "n")


def category_table(results: dict[str, Any], metric: str = "f1") -> pd.DataFrame:
    """Systems x categories (plus overall) for one metric."""
    names = category_names(results)
    rows = []
    for sysname, s in systems_of(results).items():
        row: dict[str, Any] = {"system": sysname}
        for key, name in names.items():
            row[name] = (s.get("categories") or {}).get(key, {}).get(metric)
        row["overall"] = (s.get("overall") or {}).get(metric)
        rows.append(row)
    return pd.DataFrame(rows, columns=["system", *names.values(), "overall"])


def summary_table(results: dict[str, Any], scores: Sequence[str]) -> pd.DataFrame:
    """One row per system: n, the overall `scores` (the registry's summary metrics:
    memcore.eval.bench_data.summary_scores) and cost figures."""
    cols = ["n", *scores]
    rows = []
    for sysname, s in systems_of(results).items():
        o = s.get("overall") or {}
        rows.append({"system": sysname, **{m: o.get(m) for m in cols}, **{k: s.get(k) for k in SYSTEM_FIGURES}})
    return pd.DataFrame(rows, columns=["system", *cols, *SYSTEM_FIGURES])


def rounded(df: pd.DataFrame) -> pd.DataFrame:
    """A table as shown: scores (columns within [0, 1]) to 3 decimals, larger numbers (tokens, latency) to 1,
    so 894.7368 tokens reads 894.7, small amounts (cost in USD) to 3 significant digits. Exports keep every digit."""
    out = df.copy()
    for col in out.columns:
        vals = pd.to_numeric(out[col], errors="coerce")
        if out[col].dtype == object and vals.notna().sum() < out[col].notna().sum():
            continue  # text
        top = vals.dropna().abs().max() if vals.notna().any() else 0
        if vals.notna().any() and (vals.dropna() % 1 != 0).any():  # small amounts (cost): 3 significant digits
            out[col] = vals.map(lambda v: float(f"{v:.3g}")) if top < 0.1 else vals.round(3 if top <= 1 else 1)
    return out


SCATTER_PLOT_PX = (310.0, 240.0)  # the scatter's plot area in the app: half of a 1280 px page, 380 px high


def accuracy_tokens_scatter(results: dict[str, Any], accuracy: str = "f1",
                            tokens: str = "query_tokens_per_question", look: MetricLook = MetricLook(),
                            plot_px: tuple[float, float] = SCATTER_PLOT_PX) -> go.Figure:
    """Accuracy (y) against tokens (x, log scale), one point per system in its colour (a system's further variants
    in shades of it, views.series_looks); labels are placed for a plot area of `plot_px` pixels (the app draws this
    chart in half a 1280 px page) so they overlap neither each other nor a point nor leave the plot (the x range is
    padded by a third of a decade); a label that cannot be placed so is left out, and the legend then names every
    point (the hover always does). `look` is the accuracy metric's (a bounded one shows the full [0, 1] range)."""

    points = []
    for sysname, s in systems_of(results).items():
        x = s.get(tokens) if tokens in s else (s.get("overall") or {}).get(tokens)
        y = (s.get("overall") or {}).get(accuracy)
        if x is not None and y is not None:
            points.append((sysname, max(float(x), 1.0), float(y)))
    bounded = look.bounded  # scores in [0, 1]: the full range shown
    fig = go.Figure()
    if points:
        lx = [math.log10(x) for _, x, _ in points]
        lo, hi = min(lx) - 0.35, max(lx) + 0.35
        ys = [y for *_, y in points]
        pad = 0.15 * ((max(ys) - min(ys)) or abs(max(ys)) or 1.0)
        ylo, yhi = (0.0, 1.05) if bounded else (min(ys) - pad, max(ys) + pad)
        where = place_labels([((a - lo) / (hi - lo), (y - ylo) / (yhi - ylo)) for a, y in zip(lx, ys, strict=True)],
                             [n for n, *_ in points], size=plot_px, marker_px=10, skip_crowded=True,
                             inside=True)
        looks = series_looks(n for n, *_ in points)
        for sysname, x, y in points:
            color, symbol = looks[sysname]
            fig.add_trace(go.Scatter(x=[x], y=[y], mode="markers", name=esc(sysname),
                                     marker={"size": 18, "color": color, "symbol": symbol},
                                     hovertemplate=f"{esc(sysname)}: {accuracy} %{{y:.3f}}, %{{x:,.0f}} tokens"
                                                   "<extra></extra>"))
        # one layout update (add_annotation costs ~3 ms per label); x in log10 units on a log axis
        notes = label_annotations(lx, ys, [esc(n) for n, *_ in points], where, ["#9aa0a6"] * len(points), standoff=9)
        fig.update_layout(annotations=notes)
        vals, text = log_ticks(min(x for _, x, _ in points), max(x for _, x, _ in points))
        fig.update_xaxes(range=[lo, hi], tickvals=vals, ticktext=text)
        fig.update_yaxes(range=[ylo, yhi])
    fig.update_xaxes(title=tokens.replace("_", " ") + " (log scale)", type="log")
    fig.update_yaxes(title=accuracy)
    unlabelled = bool(points) and any(w is None for w in where)
    fig = style(fig, f"{accuracy} vs {tokens.replace('_', ' ')}", height=380)
    fig.update_layout(showlegend=unlabelled)  # a label left out: the legend names every point
    if unlabelled:
        fig.update_layout(legend={"orientation": "h", "x": 0.0, "xanchor": "left", "y": -0.3, "yanchor": "top"},
                          height=380 + 26 * math.ceil(len(points) / 3), margin={"b": 60 + 26 * math.ceil(len(points) / 3)})
    return fig


def log_ticks(lo: float, hi: float) -> tuple[list[float], list[str]]:
    """Readable ticks for a log axis from lo to hi: 1, 2 and 5 times powers of ten, as 500 / 2k / 1M
    (never the bare '4 5 6 7 8 9 1000 2 3' of a default log axis), thinned to at most 8."""

    lo, hi = max(lo, 1.0), max(hi, 1.0)
    vals = [m * 10**e for e in range(int(math.floor(math.log10(lo / 2))), int(math.ceil(math.log10(hi * 2))) + 1)
            for m in (1, 2, 5) if lo / 2 <= m * 10**e <= hi * 2]
    while len(vals) > 8:
        vals = vals[::2]

    def fmt(v: float) -> str:
        for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if v >= div:
                return f"{v / div:g}{suffix}"
        return f"{v:g}"

    return [float(v) for v in vals], [fmt(v) for v in vals]


def failure_bars(results: dict[str, Any], category: str | None = None) -> go.Figure:
    """Retrieval vs reasoning failures per system (overall, or one category key)."""
    systems = systems_of(results)
    names = list(systems)

    def block(s: dict) -> dict:
        return (s.get("categories") or {}).get(category, {}) if category else (s.get("overall") or {})

    fig = go.Figure([
        go.Bar(x=[esc(n) for n in names], y=[block(systems[n]).get("retrieval_failures") or 0 for n in names],
               name="retrieval failure (evidence missing)", marker_color=MISS),
        go.Bar(x=[esc(n) for n in names], y=[block(systems[n]).get("reasoning_failures") or 0 for n in names],
               name="reasoning failure (evidence present, answer wrong)", marker_color="#0072B2"),
    ])
    fig.update_layout(barmode="stack", bargap=0.35)
    fig.update_yaxes(title="wrong answers")
    title = "Failure attribution" + (f" · {category_names(results).get(category, category)}" if category else "")
    fig = style(fig, title, height=400)
    # the legend sits at the bottom of the whole figure, below the (slanted, auto-margined) system names
    fig.update_layout(legend={"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.0, "x": 0.0,
                              "xanchor": "left"}, margin={"b": 60})
    fig.update_xaxes(tickangle=-30, automargin=True)
    return fig


def metric_heatmap(table: pd.DataFrame, metric: str, counts: pd.DataFrame | None = None,
                   look: MetricLook = MetricLook()) -> go.Figure:
    """The systems x categories table as a heatmap (better = greener: higher, or lower for a metric whose `look`
    says lower-is-better, e.g. failures, context tokens; its decimals from `look`); each cell shows n when
    `counts` (count_table) is given."""
    cols = [c for c in table.columns if c != "system"]
    z = table[cols].astype(float).to_numpy() if len(table) else [[]]
    n = None
    if counts is not None and len(table):
        n = counts.set_index("system").reindex(list(table["system"]))[cols].to_numpy()
        n = [["" if v is None or v != v else f"{int(v)}" for v in row] for row in n]
    digits = look.digits
    fmt = f"%{{z:.{digits}f}}" if digits else "%{z:,.0f}"
    scale = [[0, "#F8DCCB"], [1, HIT]] if look.higher_better else [[0, HIT], [1, "#F8DCCB"]]
    # the counts ride in `text`: plotly.js heatmaps fill %{text} in texttemplate but draw "-" for %{customdata}
    fig = go.Figure(go.Heatmap(z=z, x=[esc(c) for c in cols], y=[esc(s) for s in table["system"]], text=n,
                               colorscale=scale, showscale=False,
                               texttemplate=fmt + ("<br>n=%{text}" if n is not None else ""),
                               hovertemplate="%{y} · %{x}: " + fmt + (" (n=%{text})" if n is not None else "")
                               + "<extra></extra>"))
    return style(fig, f"{metric} by category", height=120 + 40 * len(table))
