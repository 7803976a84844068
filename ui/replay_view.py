"""The Replay viewer: step controls, the turn, events per system, curves and growth views."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memcore.types import Conversation
from memcore.viz.replay import ReplayData, cumulative_cost_figure, event_strip_figure, layer_counts_figure
from memcore.workbench import Workbench
from ui import growth, widgets

STEP = "replay_step"
PLAYING = "replay_playing"


def _set(step: int, n: int) -> None:
    st.session_state[STEP] = max(0, min(n, step))


def _toggle_play(n: int) -> None:
    playing = not st.session_state.get(PLAYING, False)
    st.session_state[PLAYING] = playing
    if playing and st.session_state.get(STEP, 0) >= n:
        st.session_state[STEP] = 0


def replay_viewer(wb: Workbench, conv: Conversation, data: dict[str, ReplayData]) -> None:
    """Render the step-controlled viewer (a fragment: stepping reruns only this part)."""
    n = max(rd.n_steps for rd in data.values())
    st.session_state.setdefault(STEP, min(n, 1))
    playing = st.session_state.get(PLAYING, False)
    speed = st.session_state.get("replay_speed", 0.8)

    @st.fragment(run_every=speed if playing else None)
    def viewer() -> None:
        if st.session_state.get(PLAYING, False) != playing:
            st.rerun()  # play / pause changed inside the fragment: redefine it with the new timer
        if playing:
            if st.session_state[STEP] >= n:
                st.session_state[PLAYING] = False
                st.rerun()
            else:
                st.session_state[STEP] += 1
        c = st.columns([1, 1, 1, 1, 1, 12], vertical_alignment="center", gap="small")
        step = st.session_state[STEP]
        playing_now = st.session_state.get(PLAYING, False)
        c[0].button("", icon=":material/first_page:", help="first step", on_click=_set, args=(0, n), key="rp_first")
        c[1].button("", icon=":material/chevron_left:", help="previous step", on_click=_set, args=(step - 1, n),
                    key="rp_prev")
        c[2].button("", icon=":material/pause:" if playing_now else ":material/play_arrow:", help="play / pause",
                    on_click=_toggle_play, args=(n,), key="rp_play")
        c[3].button("", icon=":material/chevron_right:", help="next step", on_click=_set, args=(step + 1, n),
                    key="rp_next")
        c[4].button("", icon=":material/last_page:", help="last step", on_click=_set, args=(n, n), key="rp_last")
        c[5].slider("Step", 0, n, key=STEP, label_visibility="collapsed")
        _step_body(wb, conv, data, st.session_state[STEP])

    viewer()


def _step_body(wb: Workbench, conv: Conversation, data: dict[str, ReplayData], step: int) -> None:
    n_turns = len(conv.turns)
    if 1 <= step <= n_turns:
        t = conv.turns[step - 1]
        st.markdown(f"**Step {step}/{n_turns + 1}** · turn `{t.turn_id}` · session {t.session} · "
                    f"{widgets.md_escape(t.session_date)}")
        with st.container(border=True):
            widgets.text(f"{t.speaker}: {t.content}")
    elif step == 0:
        st.markdown("**Step 0** · before the first turn: memory is empty.")
    else:
        st.markdown(f"**Step {step}** · end of conversation: systems flush their buffers.")
    cols = st.columns(len(data))
    frames = []
    for col, (name, rd) in zip(cols, data.items(), strict=True):
        ev = rd.events_at(step)
        counts = rd.counts.loc[min(step, rd.n_steps)] if not rd.counts.empty else None
        total = int(counts.sum()) if counts is not None else 0
        col.metric(name, f"{len(ev)} event(s)", f"{total} item(s) in memory", delta_color="off")
        frames.append(ev)
    now = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if len(now):
        st.dataframe(now[["system", "event", "item_kind", "items", "reason"]], hide_index=True,
                     height=min(38 + 35 * len(now), 280))
    else:
        st.caption("No system changed its memory at this step.")
    tabs = st.tabs(["Layers over time", "Construction cost", "Events per step", "Growth"])
    with tabs[0]:
        st.plotly_chart(layer_counts_figure(data, step), key="rp_layers")
        st.caption("Items alive in each memory layer at every step (from stored item versions). "
                   "The dashed line is the current step.")
    with tabs[1]:
        metric = st.segmented_control("Show", ["tokens", "calls"], default="tokens", key="rp_metric") or "tokens"
        st.plotly_chart(cumulative_cost_figure(data, step, metric), key="rp_cost")
        notes = {note for rd in data.values() for note in rd.notes}
        st.caption("Cumulative LLM usage while building memory (stage = construction). " + " ".join(notes))
    with tabs[2]:
        st.plotly_chart(event_strip_figure(data, step), key="rp_events")
        st.caption("What each system did at every step: created, merged, split, moved, promoted…")
    with tabs[3]:
        growth.growth_views(wb, conv, data, step)
