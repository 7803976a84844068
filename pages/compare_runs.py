"""Compare runs: two evaluation runs side by side: paired deltas, McNemar, flipped questions."""

from __future__ import annotations

import streamlit as st

from ui import state
from ui.compare_runs_view import compare, pick_runs, show
from ui.memory_diff_view import compare_memories, run_pair_links

st.title("Compare runs")
st.caption("Two evaluation runs of the same questions: per system and category what changed, whether the "
           "intervals separate it from noise, and which questions flipped, with the evidence each run kept or lost.")

wb = state.workbench_or_stop()
picks = pick_runs(wb)
if picks is not None:
    report = compare(wb, *picks)
    if report is not None:
        show(report)
        run_pair_links(wb, report)
conv = state.current_conversation(wb)
if conv is not None:
    compare_memories(wb, conv)
