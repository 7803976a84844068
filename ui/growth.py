"""System-specific growth views on the Replay page (generic memory table for every system)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memcore.systems import get_system
from memcore.types import Conversation
from memcore.viz.graph import graph_html, relation_subgraph
from memcore.viz.hierarchy import hierarchy_sunburst
from memcore.viz.recmem import promotions_frame
from memcore.viz.replay import ReplayData
from memcore.workbench import Workbench
from ui import state


def _changed(rd: ReplayData, step: int) -> set[str]:
    ev = rd.events_at(step)
    return {i.strip() for s in ev["items"] for i in s.split(",") if i.strip()}


def memory_table(wb: Workbench, conv: Conversation, rd: ReplayData, step: int) -> None:
    """Items of one kind alive at this step; those touched at this step come first."""
    kinds = [k for k in rd.counts.columns if rd.counts[k].max() > 0]
    if not kinds:
        st.caption(f"{rd.system} keeps no memory items of its own (it indexes raw turns).")
        return
    kind = st.selectbox("Kind", kinds, key=f"gr_kind_{rd.system}")
    space = state.space_of(wb, rd.system, conv)
    items = state.items_at(wb, wb.store.uri, space, conv.id, kind, step)
    changed = _changed(rd, step)
    df = pd.DataFrame([{"changed now": it.id in changed, "id": it.id, "text": it.text,
                        "turns": ", ".join(it.turn_ids[:10]), "since step": it.created_step,
                        "version from": it.updated_step} for it in items],
                      columns=["changed now", "id", "text", "turns", "since step", "version from"])
    df = df.sort_values(["changed now", "version from"], ascending=False)
    st.dataframe(df, hide_index=True, height=min(38 + 35 * max(len(df), 1), 300))
    st.caption(f"{len(df)} {kind} item(s) in memory at step {step}; ticked rows changed at this step.")


def xmemory_view(wb: Workbench, conv: Conversation, rd: ReplayData, step: int) -> None:
    """Themes -> semantics -> episodes at this step; items split, merged or moved now are outlined."""
    space = state.space_of(wb, rd.system, conv)
    items = [it for k in ("theme", "semantic", "episode")
             for it in state.items_at(wb, wb.store.uri, space, conv.id, k, step)]
    ev = rd.events_at(step)
    restructured = ev[ev["event"].isin(["split", "merged", "moved"])]
    hl = {i.strip() for s in restructured["items"] for i in s.split(",")}
    if not any(it.kind == "theme" for it in items):
        st.caption("No theme yet at this step (themes appear once episodes close and yield semantic facts).")
        return
    st.plotly_chart(hierarchy_sunburst(items, hl), key=f"gr_xm_{rd.system}")
    st.caption("Inner ring: themes; middle: semantic facts; outer: the episodes they came from. "
               "Red outlines: split / merged / moved at this step. Click a theme to zoom in.")
    if len(restructured):
        st.dataframe(restructured[["event", "items", "reason"]], hide_index=True)


def recmem_view(wb: Workbench, conv: Conversation, rd: ReplayData, step: int) -> None:
    """Consolidations so far: which recurring cluster was promoted into which episodes."""
    df = promotions_frame(rd, step)
    now = df[df["step"] == step]
    if len(now):
        st.success(f"Step {step}: a topic recurred {now.iloc[0]['cluster size']} times "
                   f"(theta_count {now.iloc[0]['theta_count']}) and was consolidated into {now.iloc[0]['episodes']}.")
        space = state.space_of(wb, rd.system, conv)
        units = {u.id: u for u in state.items_at(wb, wb.store.uri, space, conv.id, "unit", step - 1)}
        cluster = [units[u] for u in str(now.iloc[0]["neighbours"]).split(", ") if u in units]
        if cluster:
            st.dataframe(pd.DataFrame([{"unit": u.id, "turns": ", ".join(u.turn_ids), "text": u.text}
                                       for u in cluster]), hide_index=True)
            st.caption("The recurrence cluster that triggered it (subconscious units, now promoted).")
    st.dataframe(df, hide_index=True, height=min(38 + 35 * max(len(df), 1), 260))
    st.caption(f"{len(df)} consolidation(s) up to step {step}: subconscious exchanges -> episodes -> "
               "semantic facts, only when a topic recurs.")


@st.cache_data(show_spinner=False, max_entries=64)
def _graph_at(_wb: Workbench, store_uri: str, space: str, conv_id: str, step: int,
              changed: frozenset[str]) -> tuple[str, int, int]:
    ents = state.items_at(_wb, store_uri, space, conv_id, "entity", step)
    rels = sorted(state.items_at(_wb, store_uri, space, conv_id, "relation", step), key=lambda r: r.updated_step)
    html = graph_html(relation_subgraph(ents, rels, changed), height=480) if rels else ""
    return html, len(ents), len(rels)


def memweaver_view(wb: Workbench, conv: Conversation, rd: ReplayData, step: int) -> None:
    """The temporal knowledge graph at this step (last 150 relations); new nodes/edges outlined."""
    space = state.space_of(wb, rd.system, conv)
    html, n_ents, n_rels = _graph_at(wb, wb.store.uri, space, conv.id, step, frozenset(_changed(rd, step)))
    if not html:
        st.caption("No relation in the graph yet at this step.")
        return
    st.iframe(html, height=500)
    st.caption(f"{n_ents} entities, {n_rels} relations (the latest 150 drawn). Orange: added at this step. "
               "Drag nodes; hover for the relation text and its time.")


VIEWS: dict[str, object] = {"xmemory": xmemory_view, "recmem": recmem_view, "memweaver": memweaver_view}


def growth_views(wb: Workbench, conv: Conversation, data: dict[str, ReplayData], step: int) -> None:
    """The chosen system's dedicated growth view when it has one, then its memory table."""
    names = list(data)
    default = next((n for n in ("xmemory", "memweaver", "recmem") if n in names), names[0])
    name = st.segmented_control("System", names, default=default, key="gr_system",
                                format_func=lambda n: get_system(n).title or n) or default
    rd = data[name]
    view = VIEWS.get(name)
    if view is not None:
        view(wb, conv, rd, step)  # type: ignore[operator]
    memory_table(wb, conv, rd, step)
