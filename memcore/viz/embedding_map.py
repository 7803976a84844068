"""The embedding map as a figure: items as points (plain data in, no system named), coloured by a column, with a
question, its retrieved items (numbered by rank) and its near-misses marked. Hover text is data: escaped."""

from __future__ import annotations

import re
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from memcore.viz.safe import esc, shorten
from memcore.viz.theme import HIT, MISS, kind_color, legend_below, style

COLOR_BY = ("kind", "theme", "session", "time")
MAX_GROUPS = 12  # more themes than this: the largest ones, the rest as "other themes"
GL_FROM = 1500  # from this many points, WebGL markers (SVG slows down)
RETRIEVED = "retrieved (number = position in context)"
NEAR_MISS = "near-miss (not retrieved; number = cosine rank)"
QUESTION = "question"
PALETTE = tuple(qualitative.Dark24)  # distinct colours for up to MAX_GROUPS themes and many sessions
OTHER = {"other themes": "#BDBDBD", "no theme": "#E0E0E0", "no session": "#E0E0E0"}
_LINES = re.compile(r".{1,60}(?:\s+|$)|\S{61,}")  # lines of up to 60 characters, cut at spaces


def hover(kind: Any, item_id: Any, text: Any) -> str:
    """The hover text of a point: kind, id and text, HTML-escaped, wrapped."""
    body = "<br>".join(esc(line.strip()) for line in _LINES.findall(shorten(text, 300)))
    return f"<b>{esc(kind)}</b> {esc(item_id)}<br>{body}"


def _groups(df: pd.DataFrame, color_by: str) -> pd.Series:
    if color_by == "kind":
        return df["kind"].astype(str)
    if color_by == "session":
        return df["session"].map(lambda s: "no session" if pd.isna(s) else f"session {int(s)}")
    theme = df["theme"].fillna("").astype(str)
    top = [t for t in theme[theme != ""].value_counts().index[:MAX_GROUPS]]
    return theme.map(lambda t: shorten(t, 40) if t in top else ("no theme" if t == "" else "other themes"))


def embedding_map_figure(points: pd.DataFrame, color_by: str = "kind", question: dict[str, Any] | None = None,
                         height: int = 560) -> go.Figure:
    """Points (columns id, kind, text, x, y, created_step, session, theme; optional mark, rank) coloured by
    `color_by` (COLOR_BY); with `question` ({x, y, text}) the question as a star, points marked 'retrieved' ringed
    and numbered by rank, 'near-miss' crossed and numbered. Each point's customdata is [id, kind] (a click names
    the item)."""
    if color_by not in COLOR_BY:
        raise ValueError(f"unknown colouring {color_by!r}; use one of {COLOR_BY}")
    fig = go.Figure()
    scatter = go.Scattergl if len(points) >= GL_FROM else go.Scatter
    hovers = pd.Series([hover(k, i, t) for k, i, t in zip(points["kind"], points["id"], points["text"], strict=True)],
                       index=points.index, dtype=object)
    common = {"mode": "markers", "hovertemplate": "%{hovertext}<extra></extra>"}
    if color_by == "time":
        fig.add_trace(scatter(x=points["x"], y=points["y"], hovertext=hovers, name="items",
                              customdata=points[["id", "kind"]].to_numpy(), **common,
                              marker={"size": 7, "color": points["created_step"], "colorscale": "Viridis",
                                      "showscale": True, "colorbar": {"title": {"text": "created at turn"}}}))
    else:
        groups = _groups(points, color_by) if len(points) else pd.Series(dtype=str)
        names = sorted(set(groups), key=lambda g: (g in OTHER, -int((groups == g).sum()), g))
        palette = {g: OTHER.get(g) or (kind_color(g) if color_by == "kind" else PALETTE[i % len(PALETTE)])
                   for i, g in enumerate(names)}
        for name in names:
            sel = points[groups == name]
            fig.add_trace(scatter(x=sel["x"], y=sel["y"], hovertext=hovers[groups == name], name=esc(name),
                                  customdata=sel[["id", "kind"]].to_numpy(), **common,
                                  marker={"size": 7, "opacity": 0.75, "color": palette[name]}))
    if question is not None:
        marks = points.get("mark", pd.Series("", index=points.index))
        for mark, name, color, symbol in (("near-miss", NEAR_MISS, MISS, "x-thin-open"),
                                          ("retrieved", RETRIEVED, HIT, "circle-open")):
            sel = points[marks == mark]
            fig.add_trace(go.Scatter(x=sel["x"], y=sel["y"], mode="markers+text", name=name,
                                     text=[str(int(r)) for r in sel["rank"]], textposition="top right",
                                     textfont={"color": color, "size": 14}, hovertext=hovers[marks == mark],
                                     hovertemplate="%{hovertext}<extra>" + esc(mark) + " %{text}</extra>",
                                     customdata=sel[["id", "kind"]].to_numpy(),
                                     marker={"size": 16, "color": color, "symbol": symbol,
                                             "line": {"width": 3, "color": color}}))
        fig.add_trace(go.Scatter(x=[question["x"]], y=[question["y"]], mode="markers", name=QUESTION,
                                 hovertext=[f"<b>question</b><br>{esc(shorten(question.get('text', ''), 200))}"],
                                 hovertemplate="%{hovertext}<extra></extra>",
                                 marker={"size": 22, "color": "#000000", "symbol": "star"}))
    style(fig, height=height)
    fig.update_layout(xaxis={"showticklabels": False, "title": None, "zeroline": False},
                      yaxis={"showticklabels": False, "title": None, "zeroline": False},
                      clickmode="event+select", dragmode="pan")
    return legend_below(fig)
