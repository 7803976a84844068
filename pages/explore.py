"""Explore: browse every memory kind, search, and walk any item's provenance and versions."""

from __future__ import annotations

import streamlit as st

from memcore.systems import get_system
from memcore.viz.views import get_view
from ui import hierarchy_view, state, widgets
from ui.embedding_map_view import map_panel
from ui.explore_view import TEXT_PREVIEW, current_items, history, id_kinds, item_columns, preview, provenance
from ui.growth import ego_graph

st.title("Explore")
st.caption("Browse what each system stored. Select a row to walk its provenance down to the raw turns "
           "and up to everything built on it, and to see its version history.")

wb = state.workbench_or_stop()
with st.sidebar:
    conv = widgets.conversation_picker(wb)
if conv is None:
    widgets.no_conversation()
built = [s for s in widgets.systems() if state.ingest_status(wb, s, conv)[1]]
built = [s for s in built if get_system(s).kinds] + [s for s in built if not get_system(s).kinds]
if not built:
    st.info("No memory built yet for this conversation: build one on the Replay or Ask page.")
    st.stop()
opened = st.session_state.pop("_ex_map_open", None)  # a point clicked on the embedding map: show that item
if opened is not None:
    st.session_state["ex_linked"], st.session_state["ex_kind"] = opened
    st.session_state.pop("ex_table", None)
    st.session_state.pop("ex_query", None)
c1, c2, c3 = st.columns([1, 1, 2])
state.url_seed("ex_system", "system", built)  # a link reopens the system, kind and item it shows
system = c1.selectbox("System", built, key="ex_system", format_func=widgets.system_label)
mem = state.memory_of(wb, system, conv)
ck = mem.status()[0]
declared = get_system(system).kinds
# the reads the first paint shows, at once (each once per memory and step, for every session): the kinds' counts,
# the items of the kind the table will show, and the entity graph's entities and relations
shown_kind = next((k for k in (st.session_state.get("ex_kind"), st.query_params.get("kind")) if k in declared),
                  declared[0] if declared else None)
state.read_together(lambda: state.kind_counts(mem, ck), *[
    lambda k=k: state.as_of_checkpoint(mem, ck).items(k, with_vectors=False)
    for k in dict.fromkeys([shown_kind, *[g for g in ("entity", "relation") if g in declared]]) if k])
counts = state.kind_counts(mem, ck)  # read once per memory and step, shared with Ask
kinds = [k for k in get_system(system).kinds if k in counts] + [k for k in counts if k not in get_system(system).kinds]
if not kinds:
    st.info(f"{widgets.md_escape(system)} stores no memory items of its own: it searches the raw turns directly.")
    st.stop()
state.url_seed("ex_kind", "kind", kinds)
kind = c2.selectbox("Kind", kinds, format_func=lambda k: f"{k} ({counts.get(k, 0)})", key="ex_kind")
query = c3.text_input("Search text or turn id", key="ex_query")
leveled = get_view(system).levels is not None
if leveled:  # a link with a drill path (?hpath=) opens the hierarchy
    state.url_seed("ex_hierarchy", "hpath", parse=lambda _: True)
# a toggle, not an expander: a chart drawn inside a closed expander stays blank when it opens
if leveled and st.toggle("Hierarchy (drill down, search, history)", key="ex_hierarchy"):
    hierarchy_view.drill(get_view(system), get_system(system).title or system,
                         lambda k, at: state.items_at(mem, k, at), ck,
                         state.replay_data(wb, system, conv).events, "ex", memory=(*mem.key, "explore"), url="hpath")
else:
    state.url_set(hpath=None)  # closed, or a system without levels: no drill path to share
# its current entities and relations read once per memory and step for every session, its kinds from the counts above
ego_graph(state.as_of_checkpoint(mem, ck), None, set(), "ex", conv, kinds=counts)
if st.toggle("Embedding map of this memory", key="ex_map", help="Every item of every kind in 2-D (PCA of the "
             "stored vectors); click a point to open the item."):
    map_panel(mem, conv, "ex")  # a click reruns the page with that item (above)
df = current_items(mem, kind, ck)
if query.strip():
    ql = query.strip().lower()
    df = df[df["text"].str.lower().str.contains(ql, regex=False) | df["turns"].str.lower().str.contains(ql, regex=False)]
cut = bool(df["text"].str.len().gt(TEXT_PREVIEW).any())
st.caption(f"{len(df)} {widgets.md_escape(kind)} item(s) shown"
           + (f" · texts cut to their first {TEXT_PREVIEW} characters (marked …): select a row to read it whole"
              if cut else ""))
# the table shows a preview of each text (a BEAM 1M chat's session items, 3.6M characters whole, made a 3.7 MB table
# the browser took ~2 s to receive and draw); search above and the selected item below use the whole text
sel = st.dataframe(preview(df, TEXT_PREVIEW) if cut else df, hide_index=True, height=320, on_select="rerun", selection_mode="single-row", key="ex_table",
                   column_config=item_columns())
rows = sel.selection.rows if sel is not None else []
state.url_seed("ex_linked", "item", list(df["id"]))  # the item a link names, shown until a row is picked
if rows:
    st.session_state.pop("ex_linked", None)
want = st.session_state.get("ex_linked")  # read once, not once per row (2,849 session-state reads on the 10M chat)
linked = [] if want is None else [i for i, v in enumerate(df["id"]) if v == want]
if not rows and not linked:
    state.url_set(system=system, kind=kind, item=None)
    st.caption("Select a row to see its provenance and history.")
    st.stop()
row = df.iloc[rows[0] if rows else linked[0]]
item_id = row["id"]
state.url_set(system=system, kind=kind, item=item_id)
st.subheader(widgets.md_escape(item_id))
with st.container(border=True):
    widgets.text(row["text"])
provenance(conv, mem, item_id, id_kinds(mem, ck))
history(mem, kind, item_id)
