"""Compare: the same question across systems, side by side."""

from __future__ import annotations

import streamlit as st

from memcore.eval.answer_rows import answer_summary
from memcore.eval.diagnostics import locate_missed_evidence
from memcore.viz.evidence import STATUS_TEXT
from memcore.viz.safe import md_escape
from memcore.viz.vega import compare_bar_spec, cost_bar_spec
from memcore.viz.views import COMPARE
from ui import state, widgets
from ui.ask_view import answer_marks, ask_link, evidence_line, question_flow, summary_table, verdict_line
from ui.variant_names import label as variant_label

st.title("Compare")
st.caption("One question, every chosen system side by side: evidence hit or miss, the answer with its verdict, "
           "context size, cost. Each card opens the system's full trace on Ask.")

wb = state.workbench_or_stop()
with st.sidebar:
    conv = widgets.conversation_picker(wb)
if conv is None:
    widgets.no_conversation()
q = widgets.question_picker(conv, key="cmp_q")
if q is None:
    st.stop()
if q.answer:
    st.markdown(f"**Gold answer:** {md_escape(q.answer)} · evidence: {md_escape(', '.join(q.evidence) or 'none')}")
answers, verdicts, retriever = question_flow(wb, conv, q, key="cmp", page_name=COMPARE, verb="Compare",
                                             icon=":material/compare:", at_least=2)
rows = [answer_summary(s, a, q.evidence, verdicts[s]) for s, a in answers.items()]
st.session_state["cmp_rows"] = rows
summary_table(rows, "cmp")
c1, c2 = st.columns(2)
c1.vega_lite_chart(compare_bar_spec(rows, "context tokens"), width="stretch")
c2.vega_lite_chart(cost_bar_spec({s: a.usage for s, a in answers.items()}), width="stretch")
st.caption("Left: size of the context each system handed to the reader. Right: tokens spent on this question "
           "by stage.")
cols = widgets.grid(len(answers), widgets.CARDS_PER_ROW)  # several rows: names and badges stay whole
for col, (name, ans) in zip(cols, answers.items(), strict=True):
    with col, st.container(border=True, key=f"cmp_card_{name}"):
        # what answered is in the caption above (one provider for all cards); the retriever stays on each card
        st.markdown(f"**{md_escape(variant_label(wb, name))}** · retriever "
                    f"**{md_escape(ans.trace.retriever)}**")
        if q.evidence:
            st.markdown(evidence_line(ans.trace, q.evidence))
        st.markdown(verdict_line(verdicts[name]) or "(free-text question: no verdict)")
        st.text(ans.text or "(empty)")
        answer_marks(ans)  # fallback / gold-label marks in plain words
        for m in locate_missed_evidence(ans.trace, q.evidence):
            st.caption(md_escape(f"{m['turn_id']}: {STATUS_TEXT.get(m['status'], m['status'])}"
                                 + (f" at {m['stage']} (rank {m['rank']})" if m["stage"] else "")
                                 + (f" · {m['reason']}" if m["reason"] else "")))
        st.link_button("Full trace", ask_link(conv, q, name, retriever), icon=":material/open_in_new:")
