"""Replay's Growth tab: the chosen system's growth view (from its view, memcore.viz.views), then its memory table."""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import pandas as pd
import streamlit as st

from memcore.store.view import MemoryView
from memcore.systems import get_system
from memcore.types import Conversation
from memcore.viz.graph import (
    EDGE_LABELS_MAX,
    ego_subgraph,
    frame_height,
    graph_html,
    node_choices,
    relation_subgraph,
)
from memcore.viz.graph_focus import collapsed, communities, session_steps, window
from memcore.viz.html_table import html_table
from memcore.viz.parts import Block
from memcore.viz.replay import ReplayData
from memcore.viz.tables import turns_cell
from memcore.viz.views import SystemView, get_view
from memcore.workbench import Workbench
from ui import graph_assets, hierarchy_view, state, widgets
from ui.render import render

FOCUS = ["Entity neighbourhood", "Community", "Session"]
STATIC_ROWS = 25  # a growth view's table of at most this many rows is static: redrawn at every step, no grid
TABLE_ROWS = 25  # rows of the memory table a page (what a step re-sends when one of them changes)


def ego_graph(mem: MemoryView, step: int | None, changed: set[str], key: str, conv: Conversation | None = None,
              kinds: Collection[str] | None = None) -> None:
    """Focus on part of a memory's entity-relation graph, for any system that stores `entity` and `relation` items
    (nothing is drawn for the others): an entity's neighbourhood (1 or 2 hops), one community expanded into its
    entities, or the relations added in one session; relations labelled with their time. `kinds`: the kinds the
    memory holds when the caller knows them (Replay's per-step counts; else the store is asked, a read per call)."""
    if not {"entity", "relation"} <= set(mem.kind_counts() if kinds is None else kinds):
        return
    ents = state.items_at(mem, "entity", step) if step is not None else mem.items("entity", with_vectors=False)
    rels = state.items_at(mem, "relation", step) if step is not None else mem.items("relation", with_vectors=False)
    sub = relation_subgraph(ents, rels, changed, max_edges=100_000)
    choices = node_choices(sub)
    if not choices:
        return
    modes = FOCUS if conv is not None else FOCUS[:2]
    mode = widgets.segmented("Focus on", modes, f"{key}_focus", modes[0])
    if mode == FOCUS[1]:
        _community(sub, key, len(ents))
    elif mode == FOCUS[2] and conv is not None:
        _session(sub, conv, key)
    else:
        _neighbourhood(sub, choices, key)


def _neighbourhood(sub: dict, choices: dict[str, str], key: str) -> None:
    c1, c2 = st.columns([3, 1])
    pick = c1.selectbox("Entity neighbourhood (ego graph)", ["", *choices], key=f"{key}_ego",
                        format_func=lambda n: "pick an entity…" if not n else f"{choices[n]} ({n})",
                        help="The entity, everything within the chosen hops, and the relations among them.")
    hops = c2.segmented_control("Hops", [1, 2], default=1, key=f"{key}_hops") or 1
    if pick:
        ego = ego_subgraph(sub, pick, int(hops))
        ego["nodes"] = [{**n, "role": "focus" if str(n["id"]) == pick else n.get("role", "")} for n in ego["nodes"]]
        graph_assets.frame(graph_html(ego, height=440, edge_labels=True), height=frame_height(440))
        more = (f" · {ego['more']} more within {hops} hop(s) not drawn (the nearest and best-connected are)"
                if ego["more"] else "")
        labelled = ("every relation labelled with its name and time, where one is stored (a label that would overlap another is left "
                    "out: hover the edge)" if len(ego["edges"]) <= EDGE_LABELS_MAX else
                    f"more than {EDGE_LABELS_MAX} relations: hover an edge for its name and time")
        st.caption(f"{len(ego['nodes'])} entities and {len(ego['edges'])} relations within {hops} hop(s){more}; "
                   f"{labelled}.")
        table = edge_table(ego)
        st.dataframe(table, hide_index=True, height=min(38 + 35 * max(len(table), 1), 320), key=f"{key}_ego_edges")
        untimed = int((table["time"] == "").sum()) if len(table) else 0
        st.caption(f"Every relation drawn above ({len(table)}), newest first: the labels the graph leaves out where "
                   "they would overlap are here, with their times"
                   + ("." if not untimed else " (none of them has a time stored)." if untimed == len(table) else
                      f" ({untimed} of them have no time stored: their time cell is empty)."))


def edge_table(sub: dict) -> pd.DataFrame:
    """The relations of a drawn subgraph as rows (from, relation, to, time, step, id), newest step first: every
    edge's label readable, whatever the graph had room for."""
    names = {str(n["id"]): str(n.get("label") or n["id"]) for n in sub.get("nodes", [])}
    rows = [{"from": names.get(str(e["source"]), str(e["source"])), "relation": str(e.get("rel", e.get("label", ""))),
             "to": names.get(str(e["target"]), str(e["target"])), "time": str(e.get("time", "")),
             "step": e.get("step"), "id": str(e.get("id", ""))} for e in sub.get("edges", [])]
    df = pd.DataFrame(rows, columns=["from", "relation", "to", "time", "step", "id"])
    return df.sort_values("step", ascending=False, kind="stable", na_position="last") if len(df) else df


def _community(sub: dict, key: str, entities: int) -> None:
    comms = communities(sub)
    listing = collapsed(sub, comms)["communities"]
    pick = st.selectbox("Expand a community", ["", *[cid for cid, _, _ in listing]], key=f"{key}_comm",
                        format_func=lambda c: "pick a community…" if not c else next(
                            f"{lab} ({size} entities)" for cid, lab, size in listing if cid == c))
    if not pick:  # the overview: every community one node with its counts, the relations between them counted
        view = collapsed(sub, comms)
        graph_assets.frame(graph_html(view, height=480, edge_labels=len(view["edges"]) <= EDGE_LABELS_MAX),
                           height=frame_height(480))
        rest = f" (the {view['rest']} smallest share one node)" if view["rest"] else ""
        st.caption(f"{len(comms)} communities (Louvain, seeded) in {len(sub['nodes'])} of the {entities} entities "
                   f"(those in a relation, and any new at this step){rest}, each one node "
                   "labelled with its entity count and first members; an edge counts the relations between two "
                   "communities. Pick one above to expand it into its entities and their relations.")
        return
    idx = int(pick.split(":")[1]) - 1
    view = collapsed(sub, comms, expand=idx)
    graph_assets.frame(graph_html(view, height=480, edge_labels=True), height=frame_height(480))
    st.caption(f"{len(comms[idx])} entities of this community with their relations (labelled, with time); every "
               "other community is one node, an edge to it counts the relations.")


def _session(sub: dict, conv: Conversation, key: str) -> None:
    spans = session_steps(t.session for t in conv.turns)
    pick = st.selectbox("Relations added in session", list(spans), key=f"{key}_sess",
                        format_func=lambda s: f"session {s} (steps {spans[s][0]}-{spans[s][1]})")
    first, last = spans[pick]
    part = window(sub, first, last)
    if not part["edges"]:
        st.caption(f"No relation was added in session {pick} (steps {first}-{last}) that is still in memory here.")
        return
    if len(part["edges"]) > EDGE_LABELS_MAX:
        comms = communities(part)
        part = collapsed(part, comms)
        note = f"{len(comms)} communities, collapsed (more than {EDGE_LABELS_MAX} relations)"
    else:
        note = "every relation labelled with its name and time"
    graph_assets.frame(graph_html(part, height=480, edge_labels=True), height=frame_height(480))
    st.caption(f"Relations added in session {pick} (steps {first}-{last}): {note}.")


def memory_table(wb: Workbench, conv: Conversation, rd: ReplayData, step: int) -> None:
    """Items of one kind alive at this step, those touched at this step first, then the most recently changed: a
    page of `TABLE_ROWS` at a time (a page picker beside the kind when there are more; the caption says which rows
    of how many). A step that changes a row re-sends only the page on screen (100 rows were 68 KB at BEAM 1M)."""
    kinds = [k for k in rd.counts.columns if rd.counts[k].max() > 0]
    if not kinds:
        st.caption(f"{rd.system} keeps no memory items of its own (it indexes raw turns).")
        return
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    kind = c1.selectbox("Kind", kinds, key=f"gr_kind_{rd.system}")
    items = state.items_at(state.memory_of(wb, rd.system, conv), kind, step)
    changed = rd.changed_at(step)
    df = pd.DataFrame([{"changed now": it.id in changed, "id": it.id, "text": it.text,
                        "turns": turns_cell(it.turn_ids), "since step": it.created_step,
                        "version from": it.updated_step} for it in items],
                      columns=["changed now", "id", "text", "turns", "since step", "version from"])
    df = df.sort_values(["changed now", "version from"], ascending=False, kind="stable")
    pages = max(1, -(-len(df) // TABLE_ROWS))
    page_key = f"gr_page_{rd.system}_{kind}"
    if st.session_state.get(page_key, 1) > pages:  # a step back can hold fewer items than the page shown
        st.session_state[page_key] = pages
    page = int(c2.number_input(f"Page (of {pages:,})", 1, pages, key=page_key, disabled=pages == 1,
                               help=f"{TABLE_ROWS} rows a page, the most recently changed first"))
    first = (page - 1) * TABLE_ROWS
    shown = df.iloc[first:first + TABLE_ROWS]
    st.html(html_table(shown, marked="changed now", wide=["text"], max_height=300))  # static: no grid redraw per step
    st.caption(f"{len(df)} {kind} item(s) in memory at step {step}; ticked rows changed at this step. A text cut "
               "with \"…\" is shown whole while the pointer is on its row."
               + (f" Rows {first + 1:,}-{first + len(shown):,} of {len(df):,} (page {page} of {pages}: the page "
                  "picker above lists the others, the most recently changed first); Explore also searches them."
                  if pages > 1 else ""))


_BOUNDS: dict[tuple, np.ndarray] = {}


def same_since(mem: MemoryView, step: int) -> int:
    """The first step of the run of steps whose items (every kind) are those at `step`: the last step at or before it
    where a version began or ended (from the memory's versions, read once per checkpoint). A view built from the
    items alone is the same over the run (the hierarchy is built once per run of steps, not per step)."""
    ck = state.checkpoint(mem)
    key = (mem.key, ck)
    if key not in _BOUNDS:
        if len(_BOUNDS) > 32:
            _BOUNDS.clear()
        v = state.versions_of(mem, ck[0])
        _BOUNDS[key] = np.unique(np.concatenate([v["valid_from"].to_numpy(dtype=np.int64),
                                                 v["valid_to"].to_numpy(dtype=np.int64), [0]]))
    bounds = _BOUNDS[key]
    return int(bounds[np.searchsorted(bounds, step, side="right") - 1]) if step >= 0 else step


@st.cache_resource(show_spinner=False, max_entries=64)
def _growth(_mem: MemoryView, _rd: ReplayData, _view: SystemView, view_id: int, key: tuple[str, str, str],
            step: int, memory: tuple[int, int]) -> list[Block]:
    """A growth view's blocks, built once per memory state and step (graphs take a while to lay out)."""
    return _view.growth(_rd, step, lambda kind, at: state.items_at(_mem, kind, at))


def growth_blocks(wb: Workbench, conv: Conversation, rd: ReplayData, step: int) -> list[Block]:
    """The system's growth view at a step ([] when its view has none)."""
    view = get_view(rd.system)
    if view.growth is None:
        return []
    mem = state.memory_of(wb, rd.system, conv)
    return _growth(mem, rd, view, id(view), mem.key, step, (rd.n_steps, rd.n_events))  # n_events: no read


def growth_views(wb: Workbench, conv: Conversation, data: dict[str, ReplayData], step: int) -> None:
    """The chosen system's dedicated growth view when it has one, then its memory table."""
    names = list(data)
    with_growth = [n for n in names if get_view(n).growth is not None]
    default = min(with_growth, key=lambda n: get_view(n).growth_rank) if with_growth else names[0]
    state.url_seed("gr_system", "gsystem", names)
    name = widgets.segmented("System", names, "gr_system", default,  # a variant is shown by its name
                             format_func=lambda n: (get_system(n).title or n) if n in widgets.systems() else n)
    state.url_set(gsystem=name)
    rd = data[name]
    view = get_view(name)
    if view.levels is None:
        state.url_set(hpath=None)
    else:
        mem = state.memory_of(wb, name, conv)
        title = (get_system(name).title or name) if name in widgets.systems() else name
        hierarchy_view.drill(view, title, lambda kind, at: state.items_at(mem, kind, at), step,
                             rd.events[rd.events["step"] <= step], f"gr_{name}",
                             memory=(*mem.key, rd.n_steps, rd.n_events), url="hpath", since=same_since(mem, step))
    render(growth_blocks(wb, conv, rd, step), f"gr_{name}", static_rows=STATIC_ROWS)
    held = [k for k in rd.counts.columns if rd.counts[k].max() > 0]  # from the step's data: no store read per step
    ego_graph(state.memory_of(wb, name, conv), step, rd.changed_at(step), f"gr_{name}", conv, held)
    memory_table(wb, conv, rd, step)
