"""The Benchmark page's view of a sweep result (`memcore sweep ... --out sweep.json`): the per-point table, a
metric against one swept parameter (one line per value of a second), and the ablation chart."""

from __future__ import annotations

from typing import Any

import streamlit as st

from memcore.eval.bench_data import metric_choices
from memcore.eval.sweep_report import memory_line, param_columns
from memcore.viz.bench import category_names, rounded
from memcore.viz.safe import md_escape
from memcore.viz.sweep import FULL, ablation_chart, param_chart, sweep_frame
from ui import render


def _values(results: dict[str, Any], key: str) -> list[Any]:
    return list(dict.fromkeys(p.get("params", {}).get(key) for p in results.get("points", [])))


def _default(results: dict[str, Any], key: str) -> int:
    """The index of the paper default's value of a swept field (the plain system's point), else 0."""
    plain = next((p for p in results.get("points", []) if p["name"] == results.get("system")), None)
    values = _values(results, key)
    return values.index(plain["params"][key]) if plain and plain["params"].get(key) in values else 0


def show(results: dict[str, Any]) -> None:
    """Draw a sweep: what ran, the table per point (metric with its interval and n), the parameter chart, the
    ablation chart when the sweep ran presets."""
    judge = (results.get("judge") or {}).get("label", "off")
    dataset = (results.get("dataset") or {}).get("file", "")
    st.subheader(f"Sweep of {md_escape(results.get('system', ''))}: {results.get('points_total', 0)} points")
    st.caption(f"Answered by **{md_escape(results.get('engine') or results.get('provider') or '')}** · dataset "
               f"{md_escape(dataset)} · conversations {md_escape(', '.join(results.get('conversations') or []))} · "
               f"judge: {md_escape(judge)} · {md_escape(memory_line(results))}")
    if results.get("paper_sweep"):
        st.caption(f"The paper's sweep **{md_escape(results['paper_sweep']['name'])}** "
                   f"({md_escape(results['paper_sweep']['source'])}): "
                   f"{md_escape(results['paper_sweep'].get('description', ''))}")
    if not results.get("complete"):
        st.warning(f"Incomplete sweep: {results.get('points_done', 0)} of {results.get('points_total', 0)} points "
                   "finished. Run the same `memcore sweep` command again to resume.")
    c1, c2 = st.columns(2)
    metric = c1.selectbox("Metric", metric_choices()[:-1], key="sw_metric")
    cats = category_names({"systems": {p["name"]: p.get("summary") or {} for p in results.get("points", [])}})
    category = c2.selectbox("Questions", ["overall", *cats], format_func=lambda k: cats.get(k, k), key="sw_cat")
    params = param_columns(results)
    render.table(rounded(sweep_frame(results, metric, category, params=params)))
    st.caption("One row per point (a variant name: paper defaults are dropped from it); lo-hi: the 95% bootstrap "
               "interval over questions, ci_n the questions that have the score; memory: the memory space the "
               "point answered from (points sharing one were built once).")
    if params:
        c1, c2 = st.columns(2)
        x = c1.selectbox("Against", params, key="sw_x")
        others = [p for p in params if p != x]
        line = c2.selectbox("One line per", ["(none)", *others], index=1 if others else 0, key="sw_line")
        line = None if line == "(none)" else line
        rest = [p for p in others if p != line]
        fixed = {k: st.selectbox(f"{k} at", _values(results, k), index=_default(results, k), key=f"sw_fix_{k}")
                 for k in rest}
        presets = [FULL, *results.get("presets", [])]
        preset = st.selectbox("Preset", presets, key="sw_preset") if len(presets) > 1 else FULL
        st.plotly_chart(param_chart(results, metric, x, line, fixed, category, preset, params=params), key="sw_param_chart")
    if results.get("presets"):
        st.subheader("Ablations")
        fixed = {k: st.selectbox(f"ablations at {k}", _values(results, k), index=_default(results, k),
                                 key=f"sw_abl_{k}") for k in params}
        st.plotly_chart(ablation_chart(results, metric, fixed or None, category, params=params), key="sw_ablation_chart")
        st.caption("Each preset beside the full system, with its source (the paper's figure or table) under its "
                   "name; error bars: 95% bootstrap intervals over questions.")
