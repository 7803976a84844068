"""Ask page sections: the question with its gold evidence, one answer panel per system."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memcore.types import Answer, Conversation, Question
from memcore.viz.evidence import context_table, evidence_table, missed_table
from memcore.viz.safe import md_escape
from memcore.workbench import Workbench
from ui.structure_view import structure_view, turn_texts


def gold_panel(conv: Conversation, q: Question) -> None:
    """The dataset's gold answer and evidence turns."""
    if not q.answer and not q.evidence:
        return
    st.markdown(f"**Gold answer:** {md_escape(q.answer)} · category {md_escape(q.category_name)}")
    texts = turn_texts(conv)
    if q.evidence:
        st.dataframe(pd.DataFrame([{"evidence turn": t, "text": texts.get(t, "(not in this conversation)")}
                                   for t in q.evidence]), hide_index=True)


def _style_hits(df: pd.DataFrame):  # noqa: ANN202 - pandas Styler
    def color(v: object) -> str:
        return "background-color: #D4EFE4" if str(v).startswith(("✔", "hit")) else (
            "background-color: #F8DCCB" if v == "miss" else "")
    return df.style.map(color, subset=[c for c in ("evidence", "result") if c in df.columns])


def answer_panel(wb: Workbench, conv: Conversation, q: Question, system: str, ans: Answer) -> None:
    """Answer, the why-was-it-missed table, evidence hits, context and the system's structure."""
    key = f"ask_{system}"
    c = st.columns([3, 1, 1, 1])
    with c[0]:
        st.markdown(f"**Answer** ({md_escape(wb.provider_label)})")
        st.text(ans.text or "(empty)")
    tokens = sum(u.total_tokens for u in ans.usage.values())
    c[1].metric("Context items", len(ans.trace.items))
    c[2].metric("Tokens", tokens)
    c[3].metric("Latency", f"{ans.latency_ms:.0f} ms")
    if ans.error:
        st.warning(ans.error)
    for note in ans.trace.notes:
        st.caption(f"Note: {note}")
    texts = turn_texts(conv)
    if q.evidence:
        missed = missed_table(ans.trace, q.evidence, texts)
        if len(missed):
            st.markdown(f"**Why was it missed?** {len(missed)} of {len(q.evidence)} evidence turn(s) "
                        "did not reach the context:")
            st.dataframe(missed, hide_index=True)
            st.caption("For each missing gold turn: the stage that dropped it, its rank and score among that "
                       "stage's candidates, and the system's own reason.")
        else:
            st.success(f"All {len(q.evidence)} gold evidence turn(s) reached the context.")
        st.dataframe(_style_hits(evidence_table(ans.trace, q.evidence, texts)), hide_index=True)
    t1, t2 = st.tabs(["Retrieved context", "System structure"])
    with t1:
        st.dataframe(_style_hits(context_table(ans.trace, q.evidence)), hide_index=True, height=320)
    with t2:
        structure_view(system, ans, texts, key)
