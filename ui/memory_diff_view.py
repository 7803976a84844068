"""Memory diff in the app: on Replay, what changed in one memory between two steps; on Compare runs, two memories
of one conversation (a system under two configurations, e.g. the memories behind two runs) at one step."""

from __future__ import annotations

from typing import Any

import streamlit as st

from memcore.errors import MemcoreError
from memcore.eval.run_record import get_run
from memcore.memory_diff import MemoryDiff, diff_memories, diff_steps
from memcore.store.view import MemoryView
from memcore.systems import load_all
from memcore.systems.variants import Variant, parse_variant, presets, system_of, variant_name
from memcore.types import Conversation
from memcore.viz.memory_diff import cause_text, changes_frame, counts_frame, headline, word_diff_html
from memcore.viz.replay import ReplayData
from memcore.viz.safe import md_escape
from memcore.workbench import Workbench
from ui import jobs, nav, state, widgets
from ui.replay_view import STEP

_COLUMNS = {"kind": st.column_config.TextColumn(width=80), "change": st.column_config.TextColumn(width=75),
            "item": st.column_config.TextColumn(width=110), "step": st.column_config.TextColumn(width=80),
            "turn": st.column_config.TextColumn(width=150), "event": st.column_config.TextColumn(width=110),
            "text": st.column_config.TextColumn(width="large")}
_ORDER = ("kind", "change", "item", "text", "event", "turn", "step")  # the text before its where and when: at 1280
# px in this order it shows ~400 px of text (after turn, step and event it had ~170)
PARAMS = ("md_a", "md_b", "md_step")  # the Compare-runs memory diff's URL parameters (Replay's link sets them)


def show(d: MemoryDiff, key: str, static_rows: int = 0) -> None:
    """The diff: headline, notes, counts per kind, the changed items (pick one: its text diff and causes).

    `static_rows` (Replay's step diff, redrawn at every step): a diff of at most that many changed items is shown
    as static tables and the item to read is picked in a list (a data grid is drawn anew, ~300 ms after the rest,
    at every step); a larger one (steps far apart) in the data grid, where a row is picked."""
    st.markdown(f"**{md_escape(headline(d))}**")
    for note in d.notes:
        st.caption(md_escape(note))
    if not d.kinds:
        return
    flat = [c for items in d.changes.values() for c in items]
    static = 0 < len(flat) <= static_rows or (static_rows > 0 and d.empty)
    if static:
        widgets.text_table(counts_frame(d))
    else:
        st.dataframe(counts_frame(d), hide_index=True, key=f"{key}_counts")
    if d.empty:
        return
    first = next((i for i, x in enumerate(flat) if x.change == "changed"), 0)  # a text diff says the most
    if static:
        rows = changes_frame(d)
        widgets.text_table(rows[[c for c in _ORDER if c in rows.columns]])
        labels = [f"{i + 1}. {c.change} {c.kind} {c.item_id}" for i, c in enumerate(flat)]
        pick = st.selectbox("Text diff and causes of", labels, index=first, key=f"{key}_pick")
        at, note = labels.index(pick), ""
    else:
        sel = st.dataframe(changes_frame(d), hide_index=True, on_select="rerun", selection_mode="single-row",
                           key=f"{key}_rows", column_config=_COLUMNS, column_order=_ORDER)
        rows = sel.selection.rows if sel is not None else []
        at, note = (rows[0], "") if rows else (first, f" (row {first + 1}; pick a row above to see another)")
    c = flat[at]
    with st.container(border=True):
        st.markdown(f"**{md_escape(c.kind)} {md_escape(c.item_id)}** · {c.change}"
                    + (f" · also changed: {', '.join(c.fields)}" if c.fields else "") + note)
        st.html(word_diff_html(c))  # data escaped in memcore.viz.memory_diff
        for cause in c.causes:
            st.markdown(md_escape(cause_text(cause)))
            if cause.turn_text:
                st.caption(md_escape(f"{cause.turn_id}: {cause.turn_text}"))


STEP_DIFF_STATIC_ROWS = 25  # Replay's step diff: up to this many changed items in static tables (see `show`)


@st.cache_data(show_spinner=False, max_entries=32)
def _steps(_mem: MemoryView, _conv: Conversation, key: tuple, a: int, b: int) -> MemoryDiff:
    ck_step, done = key[-1]
    return step_diff(_mem, _conv, a, b, ck_step, done)


def step_diff(mem: MemoryView, conv: Conversation, a: int, b: int, ck_step: int, done: bool = True) -> MemoryDiff:
    """diff_steps from the memory's versions, events and items read once per checkpoint (ui.state's caches, shared
    with Replay's data and its Growth view): a step of Replay then reads nothing from the store (the same diff as
    reading everything, tests/app/test_app_step_cache). The first diff of a memory reads only its changed items."""
    stepping = (mem.key, ck_step) in _DIFFED  # the first diff of a memory reads its few changed items by id (a
    _DIFFED.add((mem.key, ck_step))  # page's first visit), the next ones load every version once and step on it
    # the steps between: their causes (the first diff reads only those from the store; the next ones slice the
    # stored rows, read once per memory and checkpoint by Replay's warm-up, and build only their own Events)
    events = (state.events_of(mem, ck_step, after=min(a, b), upto=max(a, b)) if stepping else
              mem.events(after=min(a, b), upto=max(a, b)))
    return diff_steps(mem, conv, a, b, versions=state.versions_of(mem, ck_step), events=events,
                      items_at=(lambda kind, step: state.items_held_at(mem, kind, step)) if stepping else None,
                      checkpoint={"step": ck_step, "done": done})


_DIFFED: set[tuple] = set()  # (memory, checkpoint step) whose step diff ran on this server


def replay_diff(wb: Workbench, conv: Conversation, data: dict[str, ReplayData]) -> None:
    """Replay's "what changed between step A and step B": a built system, two steps, the diff, and a link to
    compare this memory with another configuration's on Compare runs."""
    st.subheader("What changed between two steps")
    names = list(data)
    step = int(st.session_state.get(STEP, 0))
    if st.session_state.get("md_follow", True) or "md_system" not in st.session_state:
        _on_screen(data, step)  # untouched: the system and the step on screen (previous step -> current step)
    c = st.columns([2, 1, 1, 1], vertical_alignment="bottom")
    system = c[0].selectbox("Memory of", names, key="md_system", on_change=_unfollow)
    n = data[system].n_steps
    a = c[1].number_input("From step", 0, n, key="md_from", on_change=_unfollow)
    b = c[2].number_input("To step", 0, n, key="md_to", on_change=_unfollow)
    c[3].button("Step on screen", icon=":material/my_location:", key="md_here", on_click=_follow, args=(data,),
                help="The system and step shown above: from the previous step to the current one.")
    mem = state.memory_of(wb, system, conv)
    try:
        d = _steps(mem, conv, (*mem.key, state.checkpoint(mem)), int(a), int(b))
    except MemcoreError as e:
        st.error(md_escape(str(e)))
        return
    show(d, "md_replay", STEP_DIFF_STATIC_ROWS)
    st.page_link(nav.page(nav.COMPARE_RUNS).path, icon=":material/difference:",
                 label=f"Compare this memory with another configuration at step {max(a, b)}",
                 query_params={"md_a": system, "md_step": str(max(a, b))})


def _on_screen(data: dict[str, ReplayData], step: int) -> None:
    """Point the step diff at what Replay shows: the Growth view's system when it is open, else the first system
    with a memory event at the step, else the first with memory items of its own; from step - 1 to step."""
    names = list(data)
    own = [n for n in names if not data[n].counts.empty and len(data[n].counts.columns)]
    busy = [n for n in own if len(data[n].events_at(step))]
    grown = st.session_state.get("gr_system") if st.session_state.get("rp_view") == "Growth" else None
    system = grown if grown in names else (busy or own or names)[0]
    n = data[system].n_steps
    st.session_state["md_system"] = system
    st.session_state["md_to"] = max(0, min(step, n))
    st.session_state["md_from"] = max(0, st.session_state["md_to"] - 1)


def _follow(data: dict[str, ReplayData]) -> None:
    st.session_state["md_follow"] = True
    _on_screen(data, int(st.session_state.get(STEP, 0)))


def _unfollow() -> None:
    st.session_state["md_follow"] = False  # the user picked a system or a step: keep them


def _variant(label: str, key: str) -> Variant | None:
    text = st.session_state.get(key, "").strip()
    if not text:
        return None
    try:
        return parse_variant(text)
    except ValueError as e:
        st.error(md_escape(f"{label}: {e}"))
        return None


def _build(wb: Workbench, conv: Conversation, v: Variant) -> None:
    """Say that a variant's memory is not built (to the step), with a button building it in the background."""
    job_id = f"ingest-variant:{conv.id}:{v.name}"
    job = jobs.get(job_id)
    if job is not None and job.running:
        widgets.job_progress(job_id)
        return
    widgets.job_outcome(job)
    st.info(md_escape(f"{v.name} has no complete memory of {conv.id} yet."))
    if st.button(f"Build {v.name}", icon=":material/construction:", key=f"md_build_{v.name}"):
        def run(job: jobs.Job) -> Any:
            job.total = len(conv.turns)

            def progress(step: int, total: int, _evs: list) -> None:
                job.done = step
                job.report("building memory", step, total, "turns")

            rep = wb.ingest(v.system, conv, progress=progress, should_stop=job.stop.is_set, wait=False,
                            **v.settings)
            if rep.error:
                raise MemcoreError(rep.message)
            return rep

        jobs.start(job_id, f"Building memory of {conv.id} ({v.name})", run)
        st.rerun()


def _examples() -> tuple[str, str]:
    """Two variant names to show as examples: a system and one of its registered presets (from the registry, so
    the page names no system itself)."""
    load_all()
    found = presets()
    if not found:
        return "naive_rag", "naive_rag[k=10]"
    return found[0].system, f"{found[0].system}:{found[0].name}"


def compare_memories(wb: Workbench, conv: Conversation) -> None:
    """Two memories of the current conversation at one step: the same system under two configurations (variant
    names), each built on demand; the diff of B against A."""
    st.subheader("Memory diff")
    a_eg, b_eg = _examples()
    st.caption(md_escape(f"Two memories of {conv.id} at one step: one system under two configurations, written as "
                         f"variant names (e.g. {a_eg} and {b_eg}). Items added, changed and "
                         "removed in B against A, each with the turn and the event that caused it."))
    qp = st.query_params
    for p in PARAMS:  # a link (Replay's, or a run pair's below) opens its memories once
        if p in qp and st.session_state.get(f"_{p}_seen") != qp[p]:
            st.session_state[f"_{p}_seen"] = qp[p]
            st.session_state[p] = int(qp[p]) if p == "md_step" and qp[p].isdigit() else qp[p]
    n = len(conv.turns) + 1
    c = st.columns([2, 2, 1], vertical_alignment="bottom")
    c[0].text_input("Memory A (baseline)", key="md_a", placeholder=a_eg)
    c[1].text_input("Memory B (compared)", key="md_b", placeholder=b_eg)
    st.session_state.setdefault("md_step", n)
    st.session_state["md_step"] = min(int(st.session_state["md_step"]), n)
    step = c[2].number_input("At step", 0, n, key="md_step")
    va, vb = _variant("Memory A", "md_a"), _variant("Memory B", "md_b")
    if va is None or vb is None:
        st.caption("Name both memories to compare them.")
        return
    if va.system != vb.system:
        st.error(md_escape(f"{va.name} and {vb.name} are different systems: a memory diff compares two "
                           "configurations of one system."))
        return
    mems = [wb.memory(v.system, conv, **v.settings) for v in (va, vb)]
    missing = [v for v, m in zip((va, vb), mems, strict=True) if not m.status()[1]]
    for v in {v.name: v for v in missing}.values():
        _build(wb, conv, v)
    if missing:
        return
    try:
        show(diff_memories(*mems, conv, int(step), (va.name, vb.name)), "md_cmp")
    except MemcoreError as e:
        st.error(md_escape(str(e)))


def run_pair_links(wb: Workbench, report: dict[str, Any]) -> None:
    """Per system whose construction differs between the two compared runs: a link to the diff of the two
    memories behind them (their configs from the run records)."""
    recs = [get_run(wb.store, report[side]["run_id"]) if report[side].get("run_id") else None for side in "ab"]
    if None in recs:
        return
    for key, entry in report["systems"].items():
        sets = [entry.get("a_name", key), entry.get("b_name", key)]
        cfgs = [(r.get("payload") or {}).get("fingerprint", {}).get("configs", {}).get(n)
                for r, n in zip(recs, sets, strict=True)]
        try:
            names = [variant_name(system_of(n), c) for n, c in zip(sets, cfgs, strict=True)] if None not in cfgs else []
        except ValueError:
            continue
        if names and names[0] != names[1]:
            st.page_link(nav.page(nav.COMPARE_RUNS).path, icon=":material/compare_arrows:",
                         label=f"Memory diff: {names[0]} (run A) against {names[1]} (run B)",
                         query_params={"md_a": names[0], "md_b": names[1]})
