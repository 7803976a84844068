"""The navigable hierarchy of a memory whose view declares levels (memcore.viz.hierarchy): search, the drill-down
icicle, the matches, and a top-level node's split / merge history one pick away. Used by Replay's Growth tab and
Explore."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd
import streamlit as st

from memcore.viz.hierarchy import FOCUS_ROWS, FocusView, HNode, focus_figure, focus_view, search
from memcore.viz.safe import shorten
from memcore.viz.views import ItemsAt, SystemView
from ui import state, widgets
from ui.render import Prebuilt, built_once

HISTORY_EVENTS = ("created", "split", "merged", "moved", "updated", "superseded", "promoted", "deleted")
MAX_MATCHES = 50


def _title(system: str, nodes: list[HNode]) -> str:
    counts: dict[str, int] = {}
    for n in nodes:
        counts[n.level] = counts.get(n.level, 0) + 1
    levels = list(dict.fromkeys(n.level for n in nodes))[:2]
    return f"{system} hierarchy: " + ", ".join(f"{counts[lv]} {lv}s" for lv in levels)


def history_table(events: pd.DataFrame, node_id: str) -> pd.DataFrame:
    """The events that name one item (created, split, merged, moved ...) in step order."""
    if events is None or events.empty:
        return pd.DataFrame(columns=["step", "event", "items", "reason"])
    names = events["items"].str.split(", ").map(lambda ids: node_id in ids)
    hit = events[names & events["event"].isin(HISTORY_EVENTS)]
    return hit[["step", "event", "items", "reason"]].sort_values("step", kind="stable")


_NODES: dict[tuple, list[HNode]] = {}
_VIEWS: dict[tuple, FocusView] = {}
_FIGS: dict[tuple, dict] = {}


CRUMB_CHARS = 36


def _go(key: str, path: tuple[str, ...]) -> None:
    st.session_state[f"{key}_hpath"] = list(path)
    st.session_state[f"{key}_hnonce"] = st.session_state.get(f"{key}_hnonce", 0) + 1


def _clicked(chart: str, view: FocusView, key: str) -> None:
    """A click on a region: drill to the path it opens (the server then draws that part alone)."""
    points = (st.session_state.get(chart) or {}).get("selection", {}).get("points", [])
    if not points:
        return
    i = points[0].get("point_index", points[0].get("point_number"))
    if isinstance(i, int) and 0 <= i < len(view.regions):
        _go(key, view.regions[i].action)


def breadcrumb(view: FocusView, key: str) -> None:
    """The drill path above the chart: each node above the one shown a button that climbs back to it."""
    with st.container(horizontal=True, gap="small", vertical_alignment="center", key=f"{key}_crumbs"):
        for i, (path, label) in enumerate(view.crumbs):
            text = widgets.md_escape(shorten(label, CRUMB_CHARS))
            if i == len(view.crumbs) - 1:
                st.markdown(f"**{text}**", width="content")
            else:
                st.button(text, key=f"{key}_crumb{i}", type="tertiary", on_click=_go, args=(key, path),
                          help=widgets.md_escape(label) if len(label) > CRUMB_CHARS else None, width="content")
                st.markdown("›", width="content")


def drill(view: SystemView, system: str, items_at: ItemsAt, step: int, events: pd.DataFrame | None, key: str,
          highlight: Iterable[str] = (), memory: tuple = (), url: str = "", since: int | None = None) -> None:
    """Search box, the drill path, the part of the hierarchy under the node drilled to (memcore.viz.hierarchy's
    focus view: its children and a preview of theirs, matches outlined, `highlight` in colour; a click drills on
    the server, the path kept in session state under `{key}_hpath`), the matches as a table, and the history of a
    top-level node picked below. `memory` identifies the memory: with it, the hierarchy and what is on screen are
    built once per memory, step, search and path (a step of Replay then only redraws them). `url`: the URL
    parameter that holds the drill path (node ids, comma-separated), so a shared link reopens the same node.
    `since`: the first step of the run of steps whose items equal those at `step` (Replay: the last version
    boundary at or before it); the hierarchy, the part on screen and its figure are then built once per run of
    unchanged steps, not per step (the view's `levels` reads its items through `items_at` only)."""
    if view.levels is None:
        return
    levels = view.levels
    same = step if since is None else since  # what the caches key on: the items are those of step `same`
    nodes = built_once(_NODES, (memory, same), lambda: levels(items_at, step)) if memory else levels(items_at, step)
    if not nodes:
        return
    query = st.text_input("Search the hierarchy", key=f"{key}_hq", placeholder="words of a theme, fact or episode, "
                          "or an id", help="Keeps the nodes that match, what is above them and what is below them.")
    shown, hits = search(nodes, query)
    if query.strip() and not hits:
        st.info(f"Nothing in this hierarchy matches {widgets.md_escape(query.strip())!s}.")
        shown = nodes
    hl = tuple(sorted(highlight))
    if url:
        state.url_seed(f"{key}_hpath", url, many=True)
    path = tuple(st.session_state.get(f"{key}_hpath", ()))  # kept when its node is gone at a step: back, it shows
    if url:  # an id with a comma cannot be written: the link then opens the top
        state.url_set(**{url: list(path) if not any("," in p for p in path) else None})
    q = query.strip().lower()
    view_ = built_once(_VIEWS, (memory, same, q, hl, path), lambda: focus_view(shown, path, highlight=hl, hits=hits)) \
        if memory else focus_view(shown, path, highlight=hl, hits=hits)
    breadcrumb(view_, key)
    if view_.missing:
        st.caption(f"{widgets.md_escape(view_.missing)} is not in this hierarchy"
                   + (" (the search leaves it out)" if hits else f" at step {step} (merged, split or not made yet)")
                   + ": showing the nearest node above it that is.")
    chart = f"{key}_drill_{st.session_state.get(f'{key}_hnonce', 0)}"  # a new chart per drill: its click state fresh
    # the title (the hierarchy's counts) above the chart, not in it: a changed figure is a new chart, sent and drawn
    # from scratch, and the counts change at every step that adds a fact; the regions on screen change less often
    st.markdown(f"**{widgets.md_escape(_title(system, nodes))}**")
    with st.container(key=f"{key}_drill"):
        st.plotly_chart(Prebuilt(built_once(_FIGS, (memory, same, q, hl, path), lambda: focus_figure(view_))
                                 if memory else focus_figure(view_)), key=chart,
                        on_select=lambda: _clicked(chart, view_, key), selection_mode="points",
                        config={"displayModeBar": False})
    st.caption("Click a region to drill into it (themes → facts → episodes → turns): its children fill the left "
               "column, a preview of theirs the right one; the path above climbs back. The number after a label "
               f"counts its children; at most {FOCUS_ROWS} rows, the rest in \"N more\" (click it for the next "
               "ones). A label shared by siblings is cut to what tells them apart (\"…\"); hover for the full text."
               + (" Outlined: the matches." if hits else ""))
    if hits:
        rows = [{"level": n.level, "id": n.id, "label": n.label} for n in nodes if n.id in hits]
        uniq = pd.DataFrame(rows).drop_duplicates("id")
        st.caption(f"{len(uniq)} match(es)" + (f", the first {MAX_MATCHES} listed" if len(uniq) > MAX_MATCHES else ""))
        st.dataframe(uniq.head(MAX_MATCHES), hide_index=True, height=min(38 + 35 * len(uniq), 250))
    tops = [n for n in shown if not n.parent]
    if events is not None and tops:
        restructured = events[events["event"].isin(["split", "merged", "moved"])]["items"].str.split(", ").explode()
        moves = restructured.value_counts().to_dict() if len(restructured) else {}
        tops = sorted(tops, key=lambda n: -moves.get(n.id, 0))  # the most restructured first
        labels = {n.id: n.label + (f" · {moves[n.id]} split/merge/move" if moves.get(n.id) else "") for n in tops}
        pick = st.selectbox(f"History of a {tops[0].level} (split / merge / move)", ["", *labels], key=f"{key}_hist",
                            format_func=lambda i: f"pick a {tops[0].level}…" if not i else f"{labels[i]} ({i})")
        if pick:
            hist = history_table(events, pick)
            st.dataframe(hist, hide_index=True, height=min(38 + 35 * max(len(hist), 1), 280))
            st.caption(f"{len(hist)} event(s) name {pick} up to this step"
                       + (": it was never split, merged or moved." if hist["event"].isin(["split", "merged", "moved"])
                          .sum() == 0 else "."))
