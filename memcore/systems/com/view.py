"""CoM's view (registered with memcore.viz.views): gate score per chain position, the beta threshold and where each
chain was cut.

On the viz floor (tests/test_import_graph.py, "system views"): it draws with memcore.viz's parts; the view registry
imports it by name, nothing in memcore.systems does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from memcore.types import Trace
from memcore.viz.labels import label_annotations, place_labels
from memcore.viz.parts import Block, Choice, Part
from memcore.viz.safe import esc, shorten
from memcore.viz.theme import MISS, style
from memcore.viz.views import ANNOTATE, ASK, COMPARE, REPLAY, SystemView, register_view

CHAIN_COLORS = ("#0072B2", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#D55E00")


def _hover(tid: str, texts: dict[str, str] | None) -> str:
    body = shorten(texts.get(tid, ""), 90) if texts else ""
    return esc(f"{tid}: {body}" if body else tid)


def _label_members(fig: go.Figure, labels: list[tuple[float, float, str, str, float]], yrange: tuple[float, float],
                   positions: int) -> None:
    """Turn-id labels as annotations placed off each other (anchors first); one that cannot be placed without
    overlapping is left to the hover."""
    x0, x1 = 0.5, positions + 0.5
    fig.update_xaxes(range=[x0, x1])
    spots = place_labels([((x - x0) / (x1 - x0), (y - yrange[0]) / (yrange[1] - yrange[0])) for x, y, *_ in labels],
                         [m for _, _, m, *_ in labels], size=(400, 240), char_px=7, line_px=14, marker_px=6,
                         priority=[p for *_, p in labels], skip_crowded=True)
    notes = label_annotations([x for x, *_ in labels], [y for _, y, *_ in labels], [esc(m) for _, _, m, *_ in labels],
                              spots, [c for *_, c, _ in labels], standoff=6, font_size=11)
    fig.update_layout(annotations=[*fig.layout.annotations, *notes])


def chain_figure(structure: dict[str, Any], texts: dict[str, str] | None = None) -> go.Figure:
    """One line per CoM chain: gate S(m) at each position, the threshold, and the cut (red x).

    `texts` maps turn ids to their text for hover labels (escaped).
    """
    fig = go.Figure()
    chains = structure.get("chains") or []
    labels: list[tuple[float, float, str, str, float]] = []  # x, y, turn id, colour, priority
    for ci, ch in enumerate(chains, start=1):
        color = CHAIN_COLORS[(ci - 1) % len(CHAIN_COLORS)]
        members, gates = ch.get("members", []), ch.get("gates", [])
        shift = (ci - (len(chains) + 1) / 2) * 0.14  # chains side by side
        xs = [i + shift for i in range(1, len(members) + 1)]
        labels += [(x, y, m, color, -(10 * i + ci)) for i, (x, y, m) in enumerate(zip(xs, gates, members, strict=False))]
        fig.add_trace(go.Scatter(
            x=xs, y=gates, mode="lines+markers", name=f"chain {ci}", line={"color": color, "width": 3},
            marker={"size": 11}, cliponaxis=False,
            hovertext=[_hover(m, texts) for m in members], hovertemplate="%{hovertext}<br>gate %{y:.3f}<extra></extra>"))
        thr_x, thr_y = [], []
        for st in ch.get("steps", []):
            if st.get("threshold") is not None:
                thr_x.append(st["step"] + 1 + shift)
                thr_y.append(st["threshold"])
        if thr_x:
            fig.add_trace(go.Scatter(x=thr_x, y=thr_y, mode="lines+markers", name="threshold (beta x previous gate)",
                                     line={"color": color, "width": 1.5, "dash": "dot"}, showlegend=ci == 1,
                                     marker={"symbol": "line-ew-open", "size": 22, "color": color, "line": {"width": 2}},
                                     hovertemplate="threshold %{y:.3f}<extra></extra>"))
        last = (ch.get("steps") or [{}])[-1]
        if last.get("stopped") and last.get("best") and last.get("chosen") is None and last.get("gate") is not None:
            fig.add_trace(go.Scatter(
                x=[len(members) + 1 + shift], y=[last["gate"]], mode="markers+text", name="cut (gate below threshold)",
                marker={"symbol": "x", "size": 16, "color": MISS, "line": {"width": 2}}, showlegend=ci == 1,
                text=[esc(last["best"])], textposition="middle right",
                hovertext=[_hover(last["best"], texts) + "<br>" + esc(last.get("stop_reason", ""))],
                hovertemplate="%{hovertext}<extra></extra>"))
    ys = [y for tr in fig.data for y in (tr.y or []) if y is not None]
    if ys:
        lo, hi = min(ys), max(ys)
        pad = max(0.05, 0.15 * (hi - lo))
        fig.update_yaxes(range=[lo - pad, hi + pad])
        _label_members(fig, labels, (lo - pad, hi + pad), max(len(ch.get("members", [])) for ch in chains) + 1)
    fig.update_xaxes(title="position in chain (1 = anchor)", dtick=1)
    fig.update_yaxes(title="gate S(m) = cos(m,q) x cos(m,C)")
    beta = structure.get("beta")
    return style(fig, f"CoM chains (beta = {beta})" if beta is not None else "CoM chains", height=380)


def chain_table(structure: dict[str, Any]) -> pd.DataFrame:
    """One row per chain: anchor, members, gates, why it stopped."""
    rows = [{"chain": ci, "anchor": ch.get("anchor"), "members": " → ".join(ch.get("members", [])),
             "gates": ", ".join(f"{g:.3f}" for g in ch.get("gates", [])), "stopped because": ch.get("stop_reason", ""),
             "stop step": ch.get("stop_step")}
            for ci, ch in enumerate(structure.get("chains") or [], start=1)]
    return pd.DataFrame(rows, columns=["chain", "anchor", "members", "gates", "stopped because", "stop step"])


def chain_steps_table(structure: dict[str, Any], chain: int = 1) -> pd.DataFrame:
    """Every gate computed while growing one chain (step, candidate, relevance, consistency, gate, chosen)."""
    chains = structure.get("chains") or []
    if not 1 <= chain <= len(chains):
        return pd.DataFrame(columns=["step", "candidate", "relevance", "consistency", "gate", "threshold", "chosen"])
    rows = []
    for st in chains[chain - 1].get("steps", []):
        for c in st.get("candidates", []):
            rows.append({"step": st["step"], "candidate": c["id"], "relevance": c["relevance"],
                         "consistency": c["consistency"], "gate": c["gate"], "threshold": st.get("threshold"),
                         "chosen": c["id"] == st.get("chosen")})
    return pd.DataFrame(rows, columns=["step", "candidate", "relevance", "consistency", "gate", "threshold", "chosen"])


def com_structure(trace: Trace, texts: Mapping[str, str]) -> list[Block]:
    """CoM's retrieval on Ask and in the export: the chains' gates and cuts, and every gate per chain."""
    s = trace.structure
    n = len(s.get("chains") or [])
    steps = Choice("Gates computed while growing chain", tuple(
        (ci, (Part(f"Gates computed while growing chain {ci}", chain_steps_table(s, ci), height=240),))
        for ci in range(1, n + 1)), key="ci")
    return [Part("CoM chains", chain_figure(s, dict(texts)), key="chain",
                 caption="Each line is one chain grown from an anchor turn: the gate S(m) = relevance x consistency "
                         "of each added turn. A red x marks the turn whose gate fell below beta x the previous gate: "
                         "the chain was cut there."),
            Part("Chains", chain_table(s)), steps]


register_view(SystemView("com", color="#0072B2", rank=40, structure=com_structure,
                         picks=frozenset({ASK, COMPARE, ANNOTATE, REPLAY})))
