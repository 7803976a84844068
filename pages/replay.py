"""Replay: build memories once, then scrub through the conversation and watch them grow."""

from __future__ import annotations

import streamlit as st

from memcore.viz.views import REPLAY
from ui import settings_panel, state, widgets
from ui.memory_diff_view import replay_diff
from ui.replay_view import replay_viewer

st.title("Replay")
st.caption("Each step is one turn. Memory is built once (resumable, cancellable); scrubbing and "
           "playing only read the stored events, so stepping is instant.")

wb = state.workbench_or_stop()
with st.sidebar:
    conv = widgets.conversation_picker(wb)
if conv is None:
    widgets.no_conversation()
systems = settings_panel.variant_picker(wb, "Systems", widgets.default_systems(REPLAY), key="replay_systems")
if not systems:
    st.stop()
settings_panel.settings_panel(wb, "replay_systems", systems, conv)
built = [s for s in systems if state.ingest_status(wb, s, conv)[1]]
widgets.ingest_panel(wb, conv, systems)
if not built:
    st.stop()
data = {s: state.replay_data(wb, s, conv) for s in built}
replay_viewer(wb, conv, data, below=lambda: replay_diff(wb, conv, data))  # in the step's fragment: it follows the step
