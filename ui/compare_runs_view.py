"""Compare runs: pick two stored evaluation runs, see per system and category the paired deltas with
their intervals and McNemar's test, and open each flipped question's two sides."""

from __future__ import annotations

from typing import Any

import streamlit as st

from memcore.errors import MemcoreError
from memcore.eval.compare import build_comparison
from memcore.eval.compare_export import comparison_html
from memcore.viz.run_diff import delta_frame, flip_sides, flips_frame
from memcore.viz.safe import md_escape
from memcore.workbench import Workbench
from ui.bench_live import store_runs

KEY = "cr_report"


def pick_runs(wb: Workbench) -> tuple[str, str, list[str]] | None:
    """Two run ids (A: baseline, B: compared) and the systems, from the store's run records."""
    runs = store_runs(wb)
    if len(runs) < 2:
        st.info("Compare runs needs two evaluation runs in this store: start them on Benchmark (or with "
                "`memcore eval`), then come back. From the command line: `memcore compare RUN_A RUN_B`.")
        return None
    ids = [r["run_id"] for r in runs]
    label = {r["run_id"]: f"{r['run_id']} · {r['dataset']} · {', '.join(r['systems'])} · {r['state']}" for r in runs}
    c1, c2 = st.columns(2)
    a = c1.selectbox("Run A (baseline)", ids, index=1, format_func=label.get, key="cr_a")
    b = c2.selectbox("Run B (compared)", ids, index=0, format_func=label.get, key="cr_b")
    shared = [s for s in next(r for r in runs if r["run_id"] == a)["systems"]
              if s in next(r for r in runs if r["run_id"] == b)["systems"]]
    systems = st.multiselect("Systems", shared, default=shared, key="cr_systems")
    return a, b, systems


def compare(wb: Workbench, a: str, b: str, systems: list[str]) -> dict[str, Any] | None:
    """The comparison of the picked runs (kept in the session until the picks change)."""
    key = (a, b, tuple(systems))
    if st.button("Compare", type="primary", key="cr_go", disabled=a == b or not systems):
        try:
            st.session_state[KEY] = (key, build_comparison(a, b, wb.store, systems))
        except MemcoreError as e:
            st.error(md_escape(str(e)))
    held = st.session_state.get(KEY)
    return held[1] if held and held[0] == key else None


def show(report: dict[str, Any]) -> None:
    """Per system: the deltas table, the flipped questions, and the picked flip's two sides."""
    st.download_button("Download HTML", comparison_html(report), "compare.html", "text/html", key="cr_html")
    st.caption("Deltas are B - A on the questions both runs answered, with 95% paired bootstrap intervals "
               "('*': the interval excludes 0). McNemar: exact test on the flipped verdicts.")
    for name, s in report["systems"].items():
        st.subheader(name)
        if s.get("judge_comparable") is False:  # different judge model or prompt version: never mixed silently
            st.warning(md_escape(f"Judges differ (A: {', '.join(s['judge_ids']['a']) or 'none'}; B: "
                                 f"{', '.join(s['judge_ids']['b']) or 'none'}): judge scores are not compared."))
        st.dataframe(delta_frame(s), hide_index=True)
        if s["only_a"] or s["only_b"]:
            st.caption(f"Not compared: {s['only_a']} question(s) only in A, {s['only_b']} only in B.")
        flips = flips_frame(s)
        if flips.empty:
            st.caption("No question flipped.")
            continue
        sel = st.dataframe(flips, hide_index=True, on_select="rerun", selection_mode="single-row",
                           key=f"cr_flips_{name}")
        picked = sel.selection.rows if sel is not None else []
        if picked:
            flip = s["flips"][picked[0]]
            st.markdown(f"**{md_escape(flip['question_id'])}** · {md_escape(flip['direction'].replace('_', ' '))}")
            c1, c2 = st.columns(2)
            for col, side in ((c1, "a"), (c2, "b")):
                col.text(f"{side.upper()}: {flip[side]['prediction']}\ncontext tokens: {flip[side]['context_tokens']}")
            st.dataframe(flip_sides(flip), hide_index=True)
