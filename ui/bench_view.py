"""Benchmark helpers: load a results JSON, find its per-question rows, drill into one question's trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import streamlit as st

from memcore.types import Trace
from memcore.viz.evidence import context_table, missed_table
from memcore.workbench import Workbench


def load_results() -> dict[str, Any] | None:
    """A results JSON from an upload or a server path (kept in the session)."""
    c1, c2 = st.columns(2)
    up = c1.file_uploader("Results JSON", type=["json"], key="bm_upload")
    path = c2.text_input("…or a path on the server", key="bm_path", placeholder="runs/demo/results.json")
    try:
        if up is not None:
            st.session_state["bm_results"] = json.loads(up.getvalue())
        elif c2.button("Load", key="bm_load") and path.strip():
            st.session_state["bm_results"] = json.loads(Path(path.strip()).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        st.error(f"Cannot read the results: {e}. Fix: choose a results JSON written by `memcore eval`.")
    return st.session_state.get("bm_results")


def question_rows(wb: Workbench, results: dict[str, Any]) -> list[dict[str, Any]]:
    """Per-question rows: embedded in the file, else from the store by run id."""
    if isinstance(results.get("rows"), list):
        return results["rows"]
    run_id = results.get("run_id")
    if not run_id:
        return []
    try:
        return wb.store.results(str(run_id))
    except Exception:  # noqa: BLE001 - the store may not hold this run
        return []


def question_detail(row: dict[str, Any]) -> None:
    """One question of a run: answer vs gold, and its trace's context and missed evidence."""
    st.markdown(f"**{row.get('system')} · {row.get('question_id')}**")
    st.text(f"Q: {row.get('question', '')}\nGold: {row.get('gold', row.get('gold_answer', ''))}\n"
            f"Answer: {row.get('answer', row.get('prediction', ''))}")
    tr = row.get("trace")
    if not isinstance(tr, dict):
        st.caption("This row carries no trace.")
        return
    trace = Trace.from_dict(tr)
    ev = row.get("evidence") or []
    missed = missed_table(trace, ev)
    if len(missed):
        st.markdown("**Why was it missed?**")
        st.dataframe(missed, hide_index=True)
    st.dataframe(context_table(trace, ev), hide_index=True, height=280)
