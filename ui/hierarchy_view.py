"""The navigable hierarchy of a memory whose view declares levels (memcore.viz.hierarchy): search, the drill-down
icicle, the matches, and a top-level node's split / merge history one pick away. Used by Replay's Growth tab and
Explore."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd
import streamlit as st

from memcore.viz.hierarchy import HNode, drill_figure, search
from memcore.viz.views import ItemsAt, SystemView
from ui import widgets
from ui.render import Prebuilt

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
_FIGS: dict[tuple, dict] = {}


def _cached(store: dict, key: tuple, make):
    if key not in store:
        if len(store) > 64:
            store.clear()
        store[key] = make()
    return store[key]


def drill(view: SystemView, system: str, items_at: ItemsAt, step: int, events: pd.DataFrame | None, key: str,
          highlight: Iterable[str] = (), memory: tuple = ()) -> None:
    """Search box, drill-down icicle (matches outlined, `highlight` in colour), the matches as a table, and the
    history of a top-level node picked below. `memory` identifies the memory: with it, the hierarchy and its figure
    are built once per memory, step and search (a step of Replay then only redraws them)."""
    if view.levels is None:
        return
    levels = view.levels
    nodes = _cached(_NODES, (memory, step), lambda: levels(items_at, step)) if memory else levels(items_at, step)
    if not nodes:
        return
    query = st.text_input("Search the hierarchy", key=f"{key}_hq", placeholder="words of a theme, fact or episode, "
                          "or an id", help="Keeps the nodes that match, what is above them and what is below them.")
    shown, hits = search(nodes, query)
    if query.strip() and not hits:
        st.info(f"Nothing in this hierarchy matches {widgets.md_escape(query.strip())!s}.")
        shown = nodes
    hl = tuple(sorted(highlight))

    def figure() -> dict:
        return drill_figure(shown, _title(system, nodes), highlight=hl, hits=hits,
                            root_label="matches" if hits else "all", as_dict=True)

    fig = _cached(_FIGS, (memory, step, query.strip().lower(), hl, system), figure) if memory else figure()
    st.plotly_chart(Prebuilt(fig), key=f"{key}_drill")  # built once per step: sent without validating it again
    st.caption("Two levels at a time: click a region to drill into it (themes → facts → episodes → turns), the "
               "bar above climbs back. The number after a label counts its children (e.g. 4 facts); at most 18 regions per "
               "level, the rest in \"N more\" (click it); hover for the full text."
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
