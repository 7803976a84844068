"""Live: watch a live conversation while another process writes it (an agent through `memcore mcp`, or `memcore
ingest --follow`), and chat with a memory yourself."""

from __future__ import annotations

import streamlit as st

from memcore.viz.safe import md_escape
from ui import live_view as lv
from ui import settings_panel, state

st.title("Live")
st.caption("A conversation as it is written: turns arriving, the memory events each caused, items per kind, every "
           "tool call's latency, and each recall's trace (context, the system's structure, LLM calls). Redraws every "
           "second without a reload. Connect an agent with `memcore mcp` (README, 'Connect your agent'), follow a "
           "growing chat log with `memcore ingest --follow FILE`, or type below.")

wb = state.workbench_or_stop()
live = lv.live_conversations(wb)
new_id = st.session_state.setdefault("live_new_id", lv.new_chat_id())
options = [*live, *([new_id] if new_id not in live else [])]
linked = st.query_params.get("conv")
if "live_conv" not in st.session_state:
    st.session_state["live_conv"] = linked if linked in options else options[0]
with st.sidebar:
    conv_id = st.selectbox("Live conversation", options, key="live_conv",
                           format_func=lambda c: c if c in live else f"{c} (new chat)")
    if st.button("New chat", icon=":material/add_comment:", key="live_new"):
        st.session_state.pop("live_new_id")
        st.session_state.pop("live_conv")
        st.rerun()
state.url_set(conv=conv_id)
built = list(lv.memories(wb, conv_id))
if built:
    systems = built
    st.caption("Remembered by: " + ", ".join(f"**{md_escape(s)}**" for s in systems))
else:
    systems = settings_panel.variant_picker(wb, "Systems remembering this chat", ["naive_rag"], key="live_systems",
                                            url=None)
if systems:
    lv.chat_box(wb, conv_id, systems)
else:
    st.info("Pick at least one system to chat with.")
lv.last_chat()
if conv_id in live:
    st.markdown(lv.page_links(conv_id))
lv.live_panel(wb, conv_id)
if conv_id in live:
    lv.save_button(wb.conversation(conv_id))
