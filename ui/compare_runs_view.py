"""Compare runs: pick two stored evaluation runs, see per system and category the paired deltas with
their intervals and McNemar's test, and open each flipped question's two sides."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from memcore.errors import MemcoreError
from memcore.eval.compare import build_comparison
from memcore.eval.compare_export import comparison_html, delta_frame, mcnemar_text
from memcore.eval.run_labels import run_label, run_variants
from memcore.systems.variants import system_of
from memcore.viz.run_diff import flip_sides, flips_frame
from memcore.viz.safe import md_escape
from memcore.workbench import Workbench
from ui.bench_live import store_runs

KEY = "cr_report"


def _pairs(rec_a: dict, rec_b: dict) -> list[tuple[str, str]]:
    """The result sets the two runs can be compared on: same name, or the same system under another variant
    (A's `SYSTEM` against B's `SYSTEM[field=value]`)."""
    a, b = list(rec_a["systems"]), list(rec_b["systems"])
    return [(x, y) for x in a for y in b if x == y or (system_of(x) == system_of(y) and x not in b and y not in a)]


def _pair_label(ran_a: dict[str, str], ran_b: dict[str, str]) -> Callable[[tuple[str, str]], str]:
    def fmt(pair: tuple[str, str]) -> str:
        a, b = ran_a.get(pair[0], pair[0]), ran_b.get(pair[1], pair[1])
        return f"{a} (A) against {b} (B)" if a != b else f"{a} (A and B)"
    return fmt


def pick_runs(wb: Workbench) -> tuple[str, str, list[tuple[str, str]]] | None:
    """Two run ids (A: baseline, B: compared) and the pairs of result sets to compare, from the store's run
    records; each run is listed with its variants as they ran, dataset, retriever, model and date."""
    runs = store_runs(wb)
    if len(runs) < 2:
        st.info("Compare runs needs two evaluation runs in this store: start them on Benchmark (or with "
                "`memcore eval`), then come back. From the command line: `memcore compare RUN_A RUN_B`.")
        return None
    ids = [r["run_id"] for r in runs]
    by_id = {r["run_id"]: r for r in runs}
    label = {i: run_label(by_id[i]) for i in ids}
    a = st.selectbox("Run A (baseline)", ids, index=1, format_func=label.get, key="cr_a")
    b = st.selectbox("Run B (compared)", ids, index=0, format_func=label.get, key="cr_b")
    options = _pairs(by_id[a], by_id[b])
    same = [p for p in options if p[0] == p[1]]
    by_system: dict[str, list[tuple[str, str]]] = {}
    for p in options:
        by_system.setdefault(system_of(p[0]), []).append(p)
    default = same or [ps[0] for ps in by_system.values() if len(ps) == 1]
    pairs = st.multiselect("Result sets (A against B)", options, default=default,
                           format_func=_pair_label(run_variants(by_id[a]), run_variants(by_id[b])),
                           key=f"cr_pairs_{a}_{b}")
    return a, b, pairs


def compare(wb: Workbench, a: str, b: str, pairs: list[tuple[str, str]]) -> dict[str, Any] | None:
    """The comparison of the picked runs (kept in the session until the picks change); each side keeps its
    run's line (what ran) and each compared pair the configurations it ran as."""
    key = (a, b, tuple(pairs))
    if st.button("Compare", type="primary", key="cr_go", disabled=a == b or not pairs):
        try:
            report = build_comparison(a, b, wb.store, pairs=pairs)
            recs = {r["run_id"]: r for r in store_runs(wb)}
            for side, rid in (("a", a), ("b", b)):
                if rid in recs:
                    report[side]["description"] = run_label(recs[rid])
                    report[side]["ran_as"] = run_variants(recs[rid])
            st.session_state[KEY] = (key, report)
        except MemcoreError as e:
            st.error(md_escape(str(e)))
    held = st.session_state.get(KEY)
    return held[1] if held and held[0] == key else None


def show(report: dict[str, Any]) -> None:
    """Both runs named, then per compared pair: its heading (A's and B's configuration), McNemar on the verdicts,
    the deltas table, the flipped questions, and the picked flip's two sides."""
    st.download_button("Download HTML", comparison_html(report), "compare.html", "text/html", key="cr_html")
    for side in ("a", "b"):
        st.markdown(f"**Run {side.upper()}**: {md_escape(report[side].get('description') or report[side]['label'])}")
    st.caption("Deltas are B - A on the questions both runs answered, with 95% paired bootstrap intervals "
               "('*': the interval excludes 0). McNemar: exact test on the flipped verdicts.")
    for name, s in report["systems"].items():
        ran_a = (report["a"].get("ran_as") or {}).get(s.get("a_name", name), s.get("a_name", name))
        ran_b = (report["b"].get("ran_as") or {}).get(s.get("b_name", name), s.get("b_name", name))
        st.subheader(md_escape(f"{ran_a} (A) against {ran_b} (B)"), anchor=False)
        st.markdown(f"McNemar (overall, n={s['overall']['n']}): {md_escape(mcnemar_text(s['overall']['mcnemar']))}")
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
