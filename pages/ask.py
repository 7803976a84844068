"""Ask: one question, each system's answer, context, structure, cost, and why evidence was missed."""

from __future__ import annotations

import streamlit as st

from memcore.eval.answer_rows import answer_summary
from memcore.viz.evidence import cost_bar
from memcore.viz.safe import md_escape
from memcore.viz.views import ASK
from ui import settings_panel, state, widgets
from ui.ask_view import answer_panel, build_cards, default_picks, gold_panel, judge_name, shown, verdict

st.title("Ask")
st.caption("Ask a question (or pick one of the dataset's) and see, per system, the answer with its verdict, the "
           "retrieved context with gold evidence marked hit or miss, the system's own retrieval structure, "
           "where each missed evidence turn was lost, and every LLM call behind the answer.")

wb = state.workbench_or_stop()
with st.sidebar:
    conv = widgets.conversation_picker(wb)
if conv is None:
    widgets.no_conversation()
q = widgets.question_picker(conv, key="ask_q")
if q is None:
    st.stop()
gold_panel(conv, q)
systems = settings_panel.variant_picker(wb, "Systems", default_picks(wb, conv, ASK), key="ask_systems")
retriever = widgets.retriever_picker("ask_retriever")
settings_panel.settings_panel(wb, "ask_systems", systems, conv)
built = build_cards(wb, conv, systems, key="ask") if systems else []
if not built:
    st.info("Choose at least one system whose memory is built (or build one above) to ask.")
    st.stop()
clicked = st.button("Ask", type="primary", icon=":material/send:")
if not shown("ask_active", (conv.id, q.id, q.text, retriever), clicked):
    st.stop()

answers = widgets.answers_for(wb, conv, q, built, retriever)
if not answers:
    st.stop()
verdicts = {s: verdict(wb, q, a) for s, a in answers.items()}
st.caption(f"Answers by: **{md_escape(wb.provider_label)}** · retriever: **{md_escape(retriever)}**"
           + (f" · verdicts by the **{md_escape(judge_name(wb))}**" if q.answer else ""))
st.dataframe([answer_summary(s, a, q.evidence, verdicts[s]) for s, a in answers.items()], hide_index=True)
st.plotly_chart(cost_bar({s: a.usage for s, a in answers.items()}), key="ask_cost")
st.caption("Tokens spent on this question per stage (retrieval-time LLM calls and the answer call). "
           "Construction cost is on the Replay page.")
# ?tab= follows the open system tab (no rerun on a switch), so a link reopens that tab
tabs = st.tabs(list(answers), key="tab", bind="query-params")
for tab, (name, ans) in zip(tabs, answers.items(), strict=True):
    with tab:
        answer_panel(wb, conv, q, name, ans)
