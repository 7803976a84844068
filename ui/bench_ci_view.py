"""Benchmark sections for uncertainty and content: scores with intervals and ties, error-bar chart, and
where citation and content measures disagree, each example one click from its question's trace."""

from __future__ import annotations

from typing import Any

import streamlit as st

from memcore.eval.bench_data import headline_looks, interval_metrics
from memcore.viz.bench_ci import (
    citation_content_table,
    disagreement_examples,
    interval_chart,
    interval_table,
)
from memcore.workbench import Workbench
from ui import render
from ui.bench_view import full_row, question_detail


def intervals_section(results: dict[str, Any], metric: str) -> None:
    """The ranking table with 95% intervals and n, and the per-category error-bar chart of `metric`."""
    render.table(interval_table(results, headline_looks()))
    st.caption("Scores with their 95% bootstrap interval over questions and n (questions that have the score). "
               "'tied with ...': the paired interval of the difference to the best system holds 0, so the "
               "ranking between them is not settled by these questions. 'GOLD': the system's reader picked its "
               "prompt by the question's gold category, an oracle no real question carries (config "
               "category_source; docs/fidelity.md).")
    shown = metric if metric in interval_metrics() else "f1"
    st.plotly_chart(interval_chart(results, shown), key="bm_ci_chart")


def content_section(wb: Workbench, results: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """Citation vs content per system; the examples of one system, each opening its question's trace."""
    st.subheader("Citation vs content")
    table = citation_content_table(results)
    if table["gold turns judged"].isna().all():
        st.caption("This run has no content measures (rows stored before they existed): rerun to get them.")
        return
    render.table(table)
    st.caption("Citation recall counts a gold turn when a context item cites it; content recall when its words "
               "are in the context the reader got (>= 55% of its content stems within one passage). They "
               "disagree when a system cites turns whose words it dropped, or carries words without citing.")
    busiest = (table["cited, content absent"].fillna(0) + table["content present, not cited"].fillna(0)).idxmax()
    system = st.selectbox("Examples for", list(table["system"]), index=int(busiest), key="bm_cc_sys")
    ex = disagreement_examples(results, system)
    if ex.empty:
        st.caption("No disagreement for this system.")
        return
    sel = st.dataframe(ex, hide_index=True, on_select="rerun", selection_mode="single-row", key="bm_cc_rows")
    picked = sel.selection.rows if sel is not None else []
    if picked:
        qid = ex.iloc[picked[0]]["question_id"]
        row = next((r for r in rows if r.get("system") == system and r.get("question_id") == qid), None)
        if row is not None:
            question_detail(full_row(wb, str(results.get("run_id", "")), row))
