"""Colours per memory kind, stage and event, and a projector-friendly figure layout.

A system's colour is declared with its view: memcore.viz.views.system_color.
"""

from __future__ import annotations

import plotly.graph_objects as go

# Okabe-Ito based: distinguishable for colour-blind viewers and on a projector.
_FALLBACK = ("#56B4E9", "#F0E442", "#7570B3", "#1B9E77", "#E7298A", "#66A61E")

KIND_COLORS: dict[str, str] = {
    "turn": "#9E9E9E",
    "session": "#A6761D",
    "episode": "#0072B2",
    "semantic": "#009E73",
    "theme": "#CC79A7",
    "unit": "#56B4E9",
    "entity": "#D55E00",
    "relation": "#E69F00",
    "passage": "#7570B3",
    "experience": "#1B9E77",
    "subconscious": "#BDBDBD",
    "episodic": "#0072B2",
}

STAGE_COLORS: dict[str, str] = {
    "construction": "#0072B2",
    "retrieval": "#E69F00",
    "answer": "#009E73",
    "judge": "#CC79A7",
}

EVENT_COLORS: dict[str, str] = {
    "created": "#009E73",
    "merged": "#0072B2",
    "split": "#D55E00",
    "moved": "#CC79A7",
    "deleted": "#555555",
    "linked": "#56B4E9",
    "updated": "#E69F00",
    "promoted": "#F0E442",
    "indexed": "#BDBDBD",
}

HIT, MISS = "#009E73", "#D55E00"
FONT_SIZE = 15


def _pick(table: dict[str, str], key: str) -> str:
    return table[key] if key in table else fallback_color(key)


def fallback_color(name: str) -> str:
    """A stable colour for a name no table lists (e.g. a system without a view)."""
    return _FALLBACK[sum(map(ord, name)) % len(_FALLBACK)]


def kind_color(kind: str) -> str:
    """The colour of a memory kind."""
    return _pick(KIND_COLORS, kind)


def stage_color(stage: str) -> str:
    """The colour of a usage stage (construction, retrieval, answer, judge)."""
    return _pick(STAGE_COLORS, stage)


def event_color(kind: str) -> str:
    """The colour of an event kind (created, merged, split, ...)."""
    return _pick(EVENT_COLORS, kind)


def style(fig: go.Figure, title: str = "", height: int = 360) -> go.Figure:
    """Apply the shared layout: large fonts, white background, legend on top."""
    fig.update_layout(
        title={"text": title, "x": 0.0, "font": {"size": FONT_SIZE + 3}} if title else None,
        template="plotly_white",
        font={"size": FONT_SIZE, "family": "sans-serif"},
        height=height,
        margin={"l": 60, "r": 20, "t": 50 if title else 20, "b": 50},
        legend={"orientation": "v", "yanchor": "top", "y": 1.0, "x": 1.02, "xanchor": "left"},
        hoverlabel={"font_size": FONT_SIZE - 1},
    )
    return fig


LEGEND_BESIDE_MAX = 8  # more legend entries than this go under the chart (beside it they would scroll)
LEGEND_ROW_PX = 26
LEGEND_COLUMN_CHARS = (28, 48)  # entries up to this long fit 3 (then 2) columns of a chart ~800 px wide (1280 px page)


def legend_below(fig: go.Figure) -> go.Figure:
    """With many legend entries, a horizontal legend under the chart in 3, 2 or 1 columns (as the longest entry
    allows), the chart grown by its rows, instead of a list beside the chart that scrolls (16 series of 9
    systems) and narrows the plot."""
    names = [str(t.name) for t in fig.data if t.showlegend is not False and t.name]
    if len(names) <= LEGEND_BESIDE_MAX:
        return fig
    longest = max(len(n) for n in names)
    per_row = 3 if longest <= LEGEND_COLUMN_CHARS[0] else 2 if longest <= LEGEND_COLUMN_CHARS[1] else 1
    extra = LEGEND_ROW_PX * -(-len(names) // per_row) + 10
    fig.update_layout(height=(fig.layout.height or 360) + extra,
                      margin={"b": 50 + extra},
                      legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0,
                              "xanchor": "left", "entrywidth": 1 / per_row, "entrywidthmode": "fraction"})
    return fig
