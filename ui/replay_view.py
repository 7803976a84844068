"""The Replay viewer: step controls, the turn, events per system, curves and growth views."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pandas as pd
import streamlit as st

from memcore import gcpause
from memcore.store.view import MemoryView
from memcore.types import Conversation
from memcore.viz.replay import ReplayData, event_strip_figure
from memcore.viz.vega import cumulative_cost_spec, layer_counts_spec
from memcore.workbench import Workbench
from ui import calls_view, growth, state, timeline_view, widgets
from ui.render import Prebuilt, built_once
from ui.step_line import step_line

STEP = "replay_step"
PLAYING = "replay_playing"


def _set(step: int, n: int) -> None:
    st.session_state[STEP] = max(0, min(n, step))


def _toggle_play(n: int) -> None:
    playing = not st.session_state.get(PLAYING, False)
    st.session_state[PLAYING] = playing
    if playing and st.session_state.get(STEP, 0) >= n:
        st.session_state[STEP] = 0


PAST_END = "replay_past_end"  # (the link's step, the last step) of a link whose step lies past the end


def _past_the_end(n: int) -> None:
    """A link whose ?step= lies past the end opens the last step, and says so (once per link and session)."""
    raw = st.query_params.get("step")
    seen: set = st.session_state.setdefault("_url_seeded", set())
    if raw is not None and (STEP, raw) not in seen and raw.strip().isdigit() and int(raw) > n:
        seen.add((STEP, raw))
        st.session_state[STEP] = n
        st.session_state[PAST_END] = (int(raw), n)
    past = st.session_state.get(PAST_END)
    if past and st.session_state.get(STEP) == past[1]:
        st.info(f"The link asked for step {past[0]:,}, past the end of this replay: showing the last step "
                f"({past[1]}).", icon=":material/info:")
    elif past:
        st.session_state.pop(PAST_END, None)


def replay_viewer(wb: Workbench, conv: Conversation, data: dict[str, ReplayData],
                  below: Callable[[], None] | None = None) -> None:
    """Render the step-controlled viewer (a fragment: stepping reruns only this part); `below` draws what follows
    the step inside the fragment (Replay's step diff), so that it follows the step too."""
    n = max(rd.n_steps for rd in data.values())
    _past_the_end(n)
    state.url_seed(STEP, "step", list(range(n + 1)), parse=int)  # a shared link reopens its step
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
        state.url_set(step=str(st.session_state[STEP]))
        state.step_events_ahead(data, st.session_state[STEP])  # one store read for every memory's step, if any
        timeline_view.timeline(data, _sig(wb, conv, data), st.session_state[STEP], n, STEP, _set)
        _step_body(wb, conv, data, st.session_state[STEP])
        if below is not None:
            below()

    viewer()
    warm_versions(wb, conv, data)


_WARMED: set[tuple] = set()  # (memory, checkpoint step) whose item versions a warm-up loaded (or is loading)
_WARM_LOCK = threading.Lock()


def _warm(mems: list[tuple[MemoryView, list[str]]], replays: list[ReplayData] = ()) -> None:
    with gcpause.paused():  # no full GC pass during the load: each stalled a step's run (memcore.gcpause)
        _load(mems, replays)


def _load(mems: list[tuple[MemoryView, list[str]]], replays: list[ReplayData]) -> None:
    for mem, kinds in mems:  # first what the next step's diff waits for
        try:  # the stored events, which the next steps' diffs slice (the first diff read only its own)
            state.event_stream(mem, state.checkpoint(mem)[0])
        except Exception:
            return
        for kind in kinds:
            try:
                state.items_at(mem, kind, 0)  # loads the kind's versions once (a resource shared by every session)
            except Exception:  # a warm-up only: the step that needs them reads them (and says why)
                return
    for rd in replays:  # events a ReplayData built from cached counts has not read: till then a step reads its own
        try:
            rd.events  # noqa: B018 (loads them, once)
        except Exception:
            return


def warm_versions(wb: Workbench, conv: Conversation, data: dict[str, ReplayData]) -> threading.Thread | None:
    """Load, in a background thread once the page is drawn, every stored event and item version of each memory on
    Replay (once per memory and checkpoint on this server): the step diff below the step (ui.memory_diff_view) reads
    a memory's few changed items by id on a page's first visit and loads every version at its next step, which made
    the first step after a page load the slowest (+200-700 ms at BEAM 1M, for memories of 1,000 and 5,600
    versions). A step that comes before the warm-up is done waits for it (one load: the cache's lock), as it
    waited for the load before. Last, the event streams of the memories whose Replay data came from the counts
    cached in the store (ui.state._replay): until they are loaded a step reads its own events (a step's diff does
    not wait for them). Returns the thread started (None: nothing left to warm)."""
    todo = []
    shown = st.session_state.get("md_system")  # the step diff's memory first
    replays = [rd for rd in data.values() if not rd.events_loaded]
    with _WARM_LOCK:
        for name, rd in sorted(data.items(), key=lambda kv: kv[0] != shown):
            kinds = [k for k in rd.counts.columns if rd.counts[k].max() > 0]
            if not kinds:
                continue
            mem = state.memory_of(wb, name, conv)
            key = (mem.key, state.checkpoint(mem))
            if key not in _WARMED:
                _WARMED.add(key)
                todo.append((mem, kinds))
    if not todo and not replays:
        return None
    thread = threading.Thread(target=_warm, args=(todo, replays), name="memcore-replay-warm", daemon=True)
    thread.start()
    return thread


def _step_body(wb: Workbench, conv: Conversation, data: dict[str, ReplayData], step: int) -> None:
    n_turns = len(conv.turns)
    if 1 <= step <= n_turns:
        t = conv.turns[step - 1]
        st.markdown(f"**Turn {step} of {n_turns}** · {widgets.md_escape(t.turn_id)} · session "
                    f"{widgets.md_escape(t.session)} · {widgets.md_escape(t.session_date)}")
        with st.container(border=True):
            widgets.text(t.embed_text)
    elif step == 0:
        st.markdown(f"**Before turn 1 of {n_turns}**: memory is empty.")
    else:
        st.markdown(f"**After turn {n_turns} of {n_turns}** · end of conversation: systems flush their buffers.")
    frames = []
    # one box per system, as wide as its name: the boxes wrap onto more rows (10 systems at 1280 px keep their names)
    row = st.container(horizontal=True, gap="small")
    for name, rd in data.items():
        ev = rd.events_at(step)
        counts = rd.counts.loc[min(step, rd.n_steps)] if not rd.counts.empty else None
        total = int(counts.sum()) if counts is not None else 0
        col = row.container(border=True, width="content", key=f"rp_stat_{name}")
        indexed = int(rd.event_counts.loc[:step, "indexed"].sum()) if "indexed" in rd.event_counts else 0
        # a system that only indexes raw turns has no items of its own: say what it does hold
        held = f"{total} item(s) in memory" if total or not indexed else f"{indexed} turn(s) indexed"
        col.metric(name, len(ev), width="content", help=f"{name}: {len(ev)} memory event(s) at this step (listed "
                   "below); " + (held if total or not indexed else f"{held}, no memory items of its own"))
        col.caption(f"event(s) now · {held}")
        frames.append(ev)
    now = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if len(now):
        # a static table: a data grid re-draws its canvas ~300 ms after every step
        shown = now[["system", "event", "item_kind", "items", "reason"]].head(MAX_EVENT_ROWS)
        widgets.text_table(shown)
        if len(now) > MAX_EVENT_ROWS:
            st.caption(f"… and {len(now) - MAX_EVENT_ROWS} more event(s) at this step (all of them: Explore, "
                       "or the Events per step view).")
    else:
        st.caption("No system changed its memory at this step.")
    known = all(rd.call_rows is not None for rd in data.values())  # the title's counts without reading the calls
    calls_view.replay_step_calls(wb, conv, list(data), step,
                                 {n: rd.calls_at(step) for n, rd in data.items()} if known else None)
    state.url_seed("rp_view", "view", VIEWS)  # a shared link reopens the view (Growth: its system and drill path)
    view = widgets.segmented("View", VIEWS, "rp_view", VIEWS[0])
    state.url_set(view=None if view == VIEWS[0] else view)
    if view != "Growth":
        state.url_set(gsystem=None, hpath=None)
    sig = _sig(wb, conv, data)
    here = f"The dashed line is the current step ({step:,})."
    if view == VIEWS[0]:
        _chart("layers", "rp_layers", sig, data, step)
        st.caption("Items alive in each memory layer at every step (from stored item versions): one colour per "
                   f"system, one dash style per memory kind. {here}")
    elif view == VIEWS[1]:
        metric = widgets.segmented("Show", ["tokens", "calls"], "rp_metric", "tokens")
        _chart(f"cost-{metric}", "rp_cost", sig, data, step)
        notes = {note for rd in data.values() for note in rd.notes}
        st.caption(f"Cumulative LLM usage while building memory (stage = construction). {here} " + " ".join(notes))
    elif view == VIEWS[2]:
        _chart("events", "rp_events", sig, data, step)
        st.caption(f"What each system did at every step: created, merged, split, moved, promoted… {here}")
    elif view == VIEWS[3]:
        timeline_view.chart(data, sig, step, max(rd.n_steps for rd in data.values()), STEP)
    else:
        growth.growth_views(wb, conv, data, step)


def _sig(wb: Workbench, conv: Conversation, data: dict[str, ReplayData]) -> tuple:
    """What identifies the memories shown (charts built from them are cached under it)."""
    return (wb.store.uri, conv.id, tuple((n, rd.n_steps, rd.n_events, int(rd.cost["tokens"].iloc[-1]))
                                         for n, rd in data.items()))


MAX_EVENT_ROWS = 12
VIEWS = ["Layers over time", "Construction cost", "Events per step", "Timeline", "Growth"]
_FIGS: dict[tuple, dict] = {}


def _built(kind: str, sig: tuple, data: dict[str, ReplayData]) -> dict:
    """A chart over every step, built once per memory state and the same at every step (the current step is drawn
    over it: ui.step_line), so a step neither re-sends nor redraws it: the events strip as a plotly dict, the
    layers and cost as Vega-Lite specs (memcore.viz.vega)."""
    def make() -> dict:
        if kind == "events":
            return event_strip_figure(data).to_plotly_json()
        return layer_counts_spec(data) if kind == "layers" else cumulative_cost_spec(data, kind.split("-", 1)[1])
    return built_once(_FIGS, (kind, sig), make, limit=32)


def _chart(kind: str, chart_key: str, sig: tuple, data: dict[str, ReplayData], step: int) -> None:
    """One of the charts over every step, unchanged from step to step, with the current step's dashed line. Layers
    and cost are drawn with Vega-Lite: Layers is the first paint, and plotly there costs a fresh browser ~2 s
    (memcore.viz.vega); the events strip keeps plotly (its rows per system)."""
    if kind == "events":
        st.plotly_chart(Prebuilt(_built(kind, sig, data)), key=chart_key)
        step_line(chart_key, step, (kind, sig))
        return
    with st.container(key=chart_key):
        st.vega_lite_chart(_built(kind, sig, data), width="stretch")
    step_line(chart_key, step, (kind, sig), (0, max(1, max((rd.n_steps for rd in data.values()), default=0))))
