"""Benchmark: load (or start) an evaluation run; per-system x per-category tables, cost, failures, drill-down."""

from __future__ import annotations

import streamlit as st

from memcore.eval.bench_data import metric_choices, metric_look, rows_frame, summary_scores
from memcore.eval.limits import limit_lines
from memcore.eval.sweep_report import is_sweep
from memcore.viz.bench import (
    accuracy_tokens_scatter,
    category_names,
    category_table,
    count_table,
    excluded_note,
    failure_bars,
    metric_heatmap,
    rounded,
    summary_table,
)
from memcore.viz.safe import md_escape
from ui import bench_live, render, state, sweep_view
from ui.bench_ci_view import content_section, intervals_section
from ui.bench_paper_view import paper_section
from ui.bench_view import full_row, load_results, mechanism_section, question_detail, question_rows, run_panel

st.title("Benchmark")
st.caption("Scores per system and question category, accuracy against token cost, and whether wrong "
           "answers come from retrieval (evidence missing) or reasoning (evidence present).")

wb = state.workbench_or_stop()
run_panel(wb)
loaded = load_results()
if is_sweep(loaded):  # a `memcore sweep` result: its own view
    sweep_view.show(loaded)
    st.stop()


def draw(results: dict) -> None:
    """One run's tables, charts and drill-down (a run in the store is redrawn while its rows arrive)."""
    if results.get("engine") or results.get("provider") or results.get("llm"):
        st.caption(f"Run answered by: **{md_escape(results.get('engine') or results.get('llm') or results.get('provider'))}**"
                   + (f" · retriever: **{results['retriever']}**" if results.get("retriever") else "")
                   + (f" · judge: {results['judge'].get('label', '')}" if isinstance(results.get("judge"), dict) else ""))

    render.table(rounded(summary_table(results, summary_scores())))
    for line in limit_lines(results):  # long turns, the context window, prompts that did not fit
        st.caption(md_escape(line))
    metric = st.selectbox("Metric", metric_choices(), key="bm_metric")
    intervals_section(results, metric)
    table = category_table(results, metric)
    st.session_state["bm_table"] = table
    st.plotly_chart(metric_heatmap(table, metric, count_table(results), metric_look(metric)), key="bm_heat")
    st.caption("Rows: systems; columns: question categories and overall; n = questions behind each score. "
               + excluded_note(results))
    c1, c2 = st.columns(2)
    accuracy = "judge" if metric == "judge" else "f1"
    c1.plotly_chart(accuracy_tokens_scatter(results, accuracy, look=metric_look(accuracy)), key="bm_scatter")
    cats = category_names(results)
    cat = c2.selectbox("Failures for", ["overall", *cats], format_func=lambda k: cats.get(k, k), key="bm_fcat")
    c2.plotly_chart(failure_bars(results, None if cat == "overall" else cat), key="bm_fail")
    mechanism_section(results)
    paper_section(results)  # footprint, retrieval latency, evidence density

    rows = question_rows(wb, results)
    content_section(wb, results, rows)
    st.subheader("Drill down")
    if not rows:
        st.caption("No per-question rows: this results file has no `rows` and its run is not in the store.")
        return
    d1, d2 = st.columns(2)
    system = d1.selectbox("System", sorted({r["system"] for r in rows}), key="bm_sys")
    dcat = d2.selectbox("Category", ["all", *cats], format_func=lambda k: cats.get(k, k), key="bm_dcat")
    df = rows_frame(rows, system, None if dcat == "all" else dcat)
    sel = render.table(rounded(df), on_select="rerun", selection_mode="single-row", key="bm_rows", height=300)
    picked = sel.selection.rows if sel is not None else []
    if picked:
        qid = df.iloc[picked[0]]["question_id"]
        row = next(r for r in rows if r.get("system") == system and r.get("question_id") == qid)
        question_detail(full_row(wb, str(results.get("run_id", "")), row))


if not bench_live.show(wb, loaded, draw):
    st.info("Start a run above, or load a results JSON written by `memcore eval` (or the Export page).")
