"""Replay's timeline strip: events per turn per system by kind (memcore.viz.timeline), click a tick to jump to its
step, "previous / next consolidation event" buttons, filters by system and kind."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from memcore.viz.replay import ReplayData
from memcore.viz.timeline import (
    CONSOLIDATION,
    kinds_present,
    next_event_step,
    timeline_figure,
    timeline_frame,
)
from ui.render import Prebuilt
from ui.step_line import step_line

KEY = "rp_timeline"
JUMPS = "_rp_tl_jumps"  # clicks on the strip that jumped (each one draws the strip anew)
_FRAMES: dict[tuple, pd.DataFrame] = {}
_FIGS: dict[tuple, dict] = {}


def _frame(sig: tuple, data: dict[str, ReplayData]) -> pd.DataFrame:
    if sig not in _FRAMES:
        if len(_FRAMES) > 16:
            _FRAMES.clear()
        _FRAMES[sig] = timeline_frame(data)
    return _FRAMES[sig]


def _figure(sig: tuple, frame: pd.DataFrame, n: int, systems: tuple[str, ...], kinds: tuple[str, ...]) -> dict:
    """The strip built once per memory state and filter (as a plain dict), the same at every step (the current
    step's line is drawn over it: ui.step_line)."""
    key = (sig, systems, kinds)
    if key not in _FIGS:
        if len(_FIGS) > 32:
            _FIGS.clear()
        _FIGS[key] = timeline_figure(frame, n, systems, kinds).to_plotly_json()
    return _FIGS[key]


def _jump(step_key: str, n: int) -> None:
    sel = st.session_state.get(KEY)
    points = (sel or {}).get("selection", {}).get("points", []) if isinstance(sel, dict) else \
        getattr(getattr(sel, "selection", None), "points", [])
    if points:
        st.session_state[step_key] = max(0, min(n, int(round(float(points[0]["x"])))))
        # the strip stays the same chart from step to step, and so would its selection: a click on the same tick
        # later would change nothing and not jump. A jump draws the strip anew (once), its selection empty.
        st.session_state[JUMPS] = st.session_state.get(JUMPS, 0) + 1


def timeline(data: dict[str, ReplayData], sig: tuple, step: int, n: int, step_key: str,
             go_to: Callable[[int, int], None]) -> None:
    """The timeline's filters and the previous / next consolidation event buttons (the strip: `chart`)."""
    frame = _frame(sig, data)
    names = list(data)
    present = kinds_present(frame)
    # each filter a full-width row: pills do not wrap inside a column, so at 1280 px a third of the width cut the
    # fourth system's pill ("mem…")
    systems = st.pills("Systems on the timeline", names, selection_mode="multi", default=names, key="rp_tl_systems")
    kinds = st.pills("Event kinds", present, selection_mode="multi", key="rp_tl_kinds",
                     default=[k for k in present if k not in ("updated", "linked")])
    systems, kinds = tuple(systems or ()), tuple(kinds or ())
    cons = [k for k in kinds if k in CONSOLIDATION] or list(CONSOLIDATION)
    prev_step = next_event_step(frame, step, systems, cons, forward=False)
    next_step = next_event_step(frame, step, systems, cons, forward=True)
    b = st.columns([1, 1, 1.4], vertical_alignment="center")
    b[0].button("Previous consolidation event", icon=":material/skip_previous:", disabled=prev_step is None,
                on_click=go_to, args=(prev_step or 0, n), key="rp_prev_event",
                help=f"the nearest earlier step with {' / '.join(cons)} ({prev_step if prev_step is not None else 'none'})")
    b[1].button("Next consolidation event", icon=":material/skip_next:", disabled=next_step is None,
                on_click=go_to, args=(next_step or 0, n), key="rp_next_event",
                help=f"the nearest later step with {' / '.join(cons)} ({next_step if next_step is not None else 'none'})")
    shown = frame[frame["system"].isin(systems) & frame["event"].isin(kinds)]
    b[2].caption(f"{int(shown['n'].sum())} event(s) at {shown['step'].nunique()} step(s) of {n} shown; "
                 f"consolidation = {', '.join(cons)}.")
    st.session_state["_rp_tl_filter"] = (systems, kinds)


def chart(data: dict[str, ReplayData], sig: tuple, step: int, n: int, step_key: str) -> None:
    """The strip itself (Replay's Timeline view): click a tick to jump to its step. Drawn only in that view: at
    1,500 turns its tens of thousands of ticks would slow every step of the other views."""
    frame = _frame(sig, data)
    systems, kinds = st.session_state.get("_rp_tl_filter", (tuple(data), tuple(kinds_present(frame))))
    if not systems or not kinds:
        st.caption("Pick at least one system and one event kind to draw the timeline.")
        return
    spec, jumps = _figure(sig, frame, n, systems, kinds), st.session_state.get(JUMPS, 0)
    if jumps:
        spec = {**spec, "layout": {**spec["layout"], "meta": {"jumps": jumps}}}
    st.plotly_chart(Prebuilt(spec), key=KEY, on_select=lambda: _jump(step_key, n),
                    selection_mode="points", config={"displayModeBar": False})
    step_line(KEY, step, (sig, systems, kinds, jumps))
    st.caption("One row per system and event kind, a tick at every step holding such events (taller: more). "
               f"Click a tick to go to its step; the dashed line is the current step ({step:,}).")
