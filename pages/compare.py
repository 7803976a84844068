"""Compare: the same question across systems, side by side."""

from __future__ import annotations

import streamlit as st

from memcore.eval.diagnostics import locate_missed_evidence
from memcore.viz.evidence import answer_summary, compare_bar, cost_bar
from memcore.viz.views import COMPARE, get_view
from ui import state, widgets

st.title("Compare")
st.caption("One question, every chosen system side by side: answer, context size, gold-evidence hits, cost.")

wb = state.workbench_or_stop()
with st.sidebar:
    conv = widgets.conversation_picker(wb)
if conv is None:
    st.stop()
q = widgets.question_picker(conv, key="cmp_q")
if q is None:
    st.stop()
if q.answer:
    st.markdown(f"**Gold answer:** {widgets.md_escape(q.answer)} · evidence: {', '.join(q.evidence) or 'none'}")
built = [s for s in widgets.systems() if get_view(s).pick_when_built and state.ingest_status(wb, s, conv)[1]]
systems = widgets.system_picker("Systems", built if len(built) > 1 else widgets.default_systems(COMPARE),
                                key="cmp_systems")
if not systems or not widgets.ingest_panel(wb, conv, systems):
    st.stop()
if st.button("Compare", type="primary", icon=":material/compare:"):
    st.session_state["cmp_active"] = (conv.id, q.id, q.text)
if st.session_state.get("cmp_active") != (conv.id, q.id, q.text):
    st.stop()

answers = widgets.answers_for(wb, conv, q, systems)
rows = [answer_summary(s, a, q.evidence) for s, a in answers.items()]
st.session_state["cmp_rows"] = rows
st.caption(f"Answers by: **{widgets.md_escape(wb.provider_label)}**")
st.dataframe(rows, hide_index=True)
c1, c2 = st.columns(2)
c1.plotly_chart(compare_bar(rows, "context tokens"), key="cmp_ctx")
c2.plotly_chart(cost_bar({s: a.usage for s, a in answers.items()}), key="cmp_cost")
st.caption("Left: size of the context each system handed to the reader. Right: tokens spent on this question "
           "by stage.")
cols = st.columns(len(answers))
for col, (name, ans) in zip(cols, answers.items(), strict=True):
    with col, st.container(border=True):
        st.markdown(f"#### {name}")
        st.text(ans.text or "(empty)")
        present = set(ans.trace.context_turn_ids())
        for t in q.evidence:
            st.markdown(f":green[:material/check_circle: hit] `{t}`" if t in present
                        else f":red[:material/cancel: miss] `{t}`")
        for m in locate_missed_evidence(ans.trace, q.evidence):
            st.caption(f"{m['turn_id']}: {m['status']}" + (f" at {m['stage']} (rank {m['rank']})" if m["stage"] else "")
                       + (f" · {widgets.md_escape(m['reason'])}" if m["reason"] else ""))
