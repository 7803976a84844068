"""Ask: one question, each system's answer, context, structure, cost, and why evidence was missed."""

from __future__ import annotations

import streamlit as st

from memcore.viz.evidence import answer_summary, cost_bar
from memcore.viz.views import ASK
from ui import state, widgets
from ui.ask_view import answer_panel, gold_panel

st.title("Ask")
st.caption("Ask a question (or pick one of the dataset's) and see, per system, the answer, the retrieved "
           "context with gold evidence marked hit or miss, the system's own retrieval structure, "
           "and where each missed evidence turn was lost.")

wb = state.workbench_or_stop()
with st.sidebar:
    conv = widgets.conversation_picker(wb)
if conv is None:
    st.stop()
q = widgets.question_picker(conv, key="ask_q")
if q is None:
    st.stop()
gold_panel(conv, q)
systems = widgets.system_picker("Systems", widgets.default_systems(ASK), key="ask_systems")
if not systems or not widgets.ingest_panel(wb, conv, systems):
    st.stop()
if st.button("Ask", type="primary", icon=":material/send:"):
    st.session_state["ask_active"] = (conv.id, q.id, q.text)
if st.session_state.get("ask_active") != (conv.id, q.id, q.text):
    st.stop()

answers = widgets.answers_for(wb, conv, q, systems)
if not answers:
    st.stop()
st.caption(f"Answers by: **{widgets.md_escape(wb.provider_label)}**")
st.dataframe([answer_summary(s, a, q.evidence) for s, a in answers.items()], hide_index=True)
st.plotly_chart(cost_bar({s: a.usage for s, a in answers.items()}), key="ask_cost")
st.caption("Tokens spent on this question per stage (retrieval-time LLM calls and the answer call). "
           "Construction cost is on the Replay page.")
for tab, (name, ans) in zip(st.tabs(list(answers)), answers.items(), strict=True):
    with tab:
        answer_panel(wb, conv, q, name, ans)
