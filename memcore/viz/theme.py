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
