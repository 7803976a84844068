"""Ask: one question, each system's answer, context, structure, cost, and why evidence was missed."""

from __future__ import annotations

import streamlit as st

from memcore.eval.answer_rows import answer_summary
from memcore.viz.vega import cost_bar_spec
from memcore.viz.views import ASK
from ui import state, widgets
from ui.ask_view import answer_panel, gold_panel, question_flow, summary_table

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
answers, verdicts, _ = question_flow(wb, conv, q, key="ask", page_name=ASK, verb="Ask", icon=":material/send:",
                                     overview=True)
summary_table([answer_summary(s, a, q.evidence, verdicts[s]) for s, a in answers.items()], "ask")
st.vega_lite_chart(cost_bar_spec({s: a.usage for s, a in answers.items()}), width="stretch")
st.caption("Tokens spent on this question per stage (retrieval-time LLM calls and the answer call). "
           "Construction cost is on the Replay page.")
# ?tab= follows the open system tab, so a link reopens that tab; a switch reruns the page, which draws only the
# open tab's panel (six systems' panels drawn at once made Ask slow)
tabs = st.tabs(list(answers), key="tab", bind="query-params")
for tab, (name, ans) in zip(tabs, answers.items(), strict=True):
    if tab.open is not False:
        with tab:
            answer_panel(wb, conv, q, name, ans)
