"""Replay's timeline: where each system created, merged, split, moved, promoted or superseded memory, per turn.

`timeline_frame` counts a ReplayData's events per (system, kind, step); `timeline_figure` draws them as a density
strip, one row per system and kind (a tick at every step with such an event, taller and darker the more events it
holds), clickable (each tick carries its step); `next_event_step` finds the next (or previous) step with an event
of the chosen kinds, for "next consolidation event". Pure data -> figure; no Streamlit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from memcore.viz.replay import ReplayData
from memcore.viz.safe import esc
from memcore.viz.theme import event_color, style
from memcore.viz.views import system_color

TIMELINE_KINDS = ("created", "merged", "split", "moved", "promoted", "superseded")
CONSOLIDATION = ("merged", "split", "moved", "promoted", "superseded")  # the events that restructure memory
NOT_SHOWN = ("indexed",)  # bookkeeping, one per turn for every system: it would only paint every step
COLUMNS = ["system", "event", "step", "n"]


def timeline_frame(data: Mapping[str, ReplayData]) -> pd.DataFrame:
    """Events per (system, event kind, step) with their count `n`, every kind but NOT_SHOWN."""
    frames = []
    for name, rd in data.items():
        ec = rd.event_counts
        for kind in ec.columns:
            if kind in NOT_SHOWN:
                continue
            col = ec[kind]
            col = col[col > 0]
            frames.append(pd.DataFrame({"system": name, "event": kind, "step": col.index.to_numpy(dtype=np.int64),
                                        "n": col.to_numpy(dtype=np.int64)}))
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)


def kinds_present(frame: pd.DataFrame) -> list[str]:
    """The event kinds in a timeline frame: the named ones (TIMELINE_KINDS) in their order, then any other."""
    have = set(frame["event"])
    return [k for k in TIMELINE_KINDS if k in have] + sorted(have - set(TIMELINE_KINDS))


def select(frame: pd.DataFrame, systems: Iterable[str] | None = None, kinds: Iterable[str] | None = None
           ) -> pd.DataFrame:
    """The rows of the chosen systems and kinds (None: all)."""
    keep = pd.Series(True, index=frame.index)
    if systems is not None:
        keep &= frame["system"].isin(list(systems))
    if kinds is not None:
        keep &= frame["event"].isin(list(kinds))
    return frame[keep]


def next_event_step(frame: pd.DataFrame, step: int, systems: Iterable[str] | None = None,
                    kinds: Iterable[str] | None = CONSOLIDATION, forward: bool = True) -> int | None:
    """The nearest step after (`forward`) or before `step` holding an event of the chosen systems and kinds."""
    steps = select(frame, systems, kinds)["step"]
    steps = steps[steps > step] if forward else steps[steps < step]
    if steps.empty:
        return None
    return int(steps.min() if forward else steps.max())


ROW_PX = 26


def timeline_figure(frame: pd.DataFrame, n_steps: int, systems: Iterable[str] | None = None,
                    kinds: Iterable[str] | None = None) -> go.Figure:
    """The density strip: one row per (system, kind) with events, a tick at each step holding some (taller the
    more); each tick's x is its step (click to jump). The row's name is coloured as its system."""
    f = select(frame, systems, kinds)
    order = list(dict.fromkeys(systems or f["system"]))
    kind_order = {k: i for i, k in enumerate(kinds_present(frame))}
    rows = sorted({(s, k) for s, k in zip(f["system"], f["event"], strict=True)},
                  key=lambda r: (order.index(r[0]) if r[0] in order else 99, kind_order.get(r[1], 99)))
    fig = go.Figure()
    seen: set[str] = set()
    for sysname, kind in rows:
        g = f[(f["system"] == sysname) & (f["event"] == kind)]
        n = g["n"].to_numpy()
        size = 10 + 8 * np.log2(1 + n) / np.log2(1 + max(int(n.max()), 1))
        fig.add_trace(go.Scatter(
            x=g["step"], y=[f"{sysname} · {kind}"] * len(g), mode="markers", name=kind, legendgroup=kind,
            showlegend=kind not in seen, text=n,
            marker={"symbol": "line-ns", "size": size, "line": {"width": 2.5, "color": event_color(kind)},
                    "color": event_color(kind)},
            hovertemplate=f"{esc(sysname)}: %{{text}} {esc(kind)} at step %{{x}} (click to go there)<extra></extra>"))
        seen.add(kind)
    labels = [f"{s} · {k}" for s, k in rows]
    fig.update_yaxes(categoryorder="array", categoryarray=labels[::-1], showgrid=False,
                     tickfont={"size": 12})
    fig.update_xaxes(range=[-0.5, n_steps + 0.5], title="step (turn)", showgrid=False)
    for lab in labels:
        fig.add_shape(type="line", xref="paper", x0=0, x1=1, y0=lab, y1=lab, line={"color": "#EEEEEE", "width": 1},
                      layer="below")
    colors = {f"{s} · {k}": system_color(s) for s, k in rows}
    fig.update_yaxes(ticktext=[f'<span style="color:{colors[lab]}">{esc(lab)}</span>' for lab in labels],
                     tickvals=labels)
    title = "Timeline: memory events per turn" if rows else "Timeline: no event of the chosen kinds"
    style(fig, title, height=120 + ROW_PX * max(len(rows), 1))
    fig.update_layout(clickmode="event", dragmode=False, hovermode="closest",
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
                      margin={"l": 10, "r": 10, "t": 60, "b": 40})
    return fig
