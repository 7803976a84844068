"""Benchmark helpers: load or start a run, find its per-question rows, drill into one question's trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import streamlit as st

from memcore.eval.diagnostics import evidence_hits, locate_missed_evidence
from memcore.eval.report import row_trace
from memcore.types import Trace
from memcore.viz.evidence import context_table, missed_table
from memcore.viz.safe import md_escape
from memcore.viz.views import BENCHMARK
from memcore.workbench import Workbench
from ui import cost_view, jobs, settings_panel, state, widgets
from ui.ask_view import default_picks

RUN_JOB = "benchmark-run"
LOADED = "__loaded__"  # the Dataset choice "the file loaded on Home"


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
        st.error(md_escape(f"Cannot read the results: {e}.") + " Fix: choose a results JSON written by `memcore eval`.")
    return st.session_state.get("bm_results")


def run_panel(wb: Workbench) -> None:
    """Start (or resume) an evaluation run in the background on the demo or a dataset file."""
    job = jobs.get(RUN_JOB)
    if job is not None and job.running:
        widgets.job_progress(RUN_JOB)
        return
    # the jobs registry is per process: only the session that started a run adopts its results as the
    # loaded ones (any other session, e.g. another tab or store, finds the run in the store's runs list)
    mine = job is not None and st.session_state.get("bm_started") == job.started
    if mine and job.status == jobs.DONE and job.result and st.session_state.get("bm_job") != job.started:
        st.session_state["bm_results"], st.session_state["bm_job"] = job.result, job.started
    widgets.job_outcome(job)
    with st.expander("Start a run", expanded=job is None and not st.session_state.get("bm_results")):
        c1, c2 = st.columns(2)
        loaded = state.loaded_file()  # the file loaded on Home (an upload too): offered first, and the default
        choices = ([LOADED] if loaded else []) + ["demo", "auto", "locomo", "longmemeval", "jsonl", "beam",
                                                  "locomo-plus"]
        if st.session_state.get("bm_ds") not in choices or st.session_state.get("bm_ds_for") != (loaded or {}).get("path"):
            st.session_state["bm_ds"] = choices[0]  # a newly loaded file (or the demo) is what a run starts on
        st.session_state["bm_ds_for"] = (loaded or {}).get("path")
        picked = c1.selectbox("Dataset", choices, key="bm_ds",
                              format_func=lambda d: f"the file loaded on Home: {loaded['name']}" if d == LOADED else d,
                              help="The file loaded on Home (uploaded or from the server), the demo, or a file on the "
                                   "server in a format (auto detects it from the content; beam takes a chat.json, a "
                                   "chat folder or a folder of chats)")
        if picked == LOADED:
            dataset, lenient = str(loaded["format"]), bool(loaded.get("lenient"))
            c2.text_input("Dataset file", str(loaded["name"]), key="bm_file_loaded", disabled=True,
                          help="The file loaded on Home; load another there to change it.")
            file = str(loaded["path"])
        else:
            dataset, lenient = picked, False
            file = c2.text_input("Dataset file", key="bm_file", disabled=dataset == "demo",
                                 placeholder="../shared/datasets/locomo/locomo10.json",
                                 help="A path on the server; to run on a file from your computer, upload it on Home "
                                      "(Load a dataset file): it is then offered above.")
        missing_file = dataset != "demo" and not file.strip()
        conv = state.current_conversation(wb)  # default: every system whose memory of it is built
        systems = settings_panel.variant_picker(  # systems, presets, saved and edited variants (issue 26)
            wb, "Systems", default_picks(wb, conv, BENCHMARK) if conv else widgets.default_systems(BENCHMARK),
            key="bm_run_systems", url=None)
        settings_panel.settings_panel(wb, "bm_run_systems", systems, None, nested=True)  # the run builds
        retriever = widgets.retriever_picker("bm_retriever")
        c3, c4 = st.columns(2)
        limit = c3.number_input("Questions per conversation (0 = all)", 0, 10_000, 0, key="bm_limit")
        judge = c4.toggle("Judge answers", True, key="bm_judge",
                          help=f"With {wb.provider_label} the judge is the lexical judge (labelled so in results).")
        adv = [q for q in conv.questions if str(q.category) == "5"] if conv else []
        with_adv = st.checkbox("Include adversarial questions", False, key="bm_adversarial", disabled=dataset == "longmemeval",
                               help="Category 5 (LoCoMo adversarial: the answer is not in the conversation; the right "
                                    "reply abstains) is left out by default, as in the papers' protocol"
                                    + (f" ({len(adv)} of {len(conv.questions)} questions of the current "
                                       "conversation)." if conv else "."))
        if missing_file:
            st.info(md_escape(f'Dataset "{dataset}" needs a file: type its path on the server in "Dataset file", or '
                              "upload it on Home (Load a dataset file), or choose the demo."))
        elif systems:
            cost_view.eval_estimate(wb, "bm", dataset=dataset, file=file.strip() or None, systems=list(systems),
                                    limit=int(limit) or None, judge=judge, retriever=retriever,
                                    categories=["1", "2", "3", "4", "5"] if with_adv else None)
        if st.button("Start run", type="primary", disabled=not systems or missing_file, key="bm_start"):
            st.session_state["bm_started"] = start_run(wb, dataset, file.strip() or None, systems, int(limit) or None,
                                                       judge, retriever,
                                                       ["1", "2", "3", "4", "5"] if with_adv else None,
                                                       lenient=lenient).started
            st.rerun()


def start_run(wb: Workbench, dataset: str, file: str | None, systems: list[str], limit: int | None,
              judge: bool, retriever: str = "dense", categories: list[str] | None = None,
              lenient: bool = False) -> jobs.Job:
    """Run memcore.eval.runner.run_eval in the background (resumable; cancel stops after saving); `lenient` as the
    file was loaded on Home (format problems accepted with a warning)."""
    from memcore.eval.runner import run_eval

    def run(job: jobs.Job) -> dict[str, Any]:
        def progress(done: int, total: int, info: dict) -> None:
            job.done, job.total = done, total
            job.message = f"{done}/{total} questions answered"
            where = f"{info.get('system') or 'every system (shared)'} on {info.get('conv_id', '')}"
            if info.get("turns"):  # a memory being built (its turns embedded, then ingested), as memcore reports it
                what = "building memory" if info.get("phase") == "ingest" else str(info.get("phase"))
                job.report(f"{what} of {where}", int(info["turn"]), int(info["turns"]), "turns")
            elif info.get("phase") in ("answer", "error"):
                job.report("answering and judging", done, total, "questions")

        res = run_eval(wb.settings, dataset, file, systems, limit=limit, judge=judge, retriever=retriever,
                       categories=categories, lenient=lenient,
                       progress=progress,
                       should_stop=job.stop.is_set, workbench=wb)
        job.message = "cancelled: saved answers are kept; starting again resumes" if job.stop.is_set() else "done"
        return res

    where = Path(file).name if file else dataset
    return jobs.start(RUN_JOB, f"Evaluation on {where}", run)


@st.cache_data(show_spinner=False, max_entries=8)
def _rows(_wb: Workbench, store_uri: str, run_id: str, systems: tuple[str, ...], n: int) -> list[dict]:
    from memcore.eval.runner import load_rows

    return load_rows(_wb.store, run_id, list(systems))


def question_rows(wb: Workbench, results: dict[str, Any]) -> list[dict[str, Any]]:
    """Per-question rows (without traces): embedded in the file, else from the store by run id."""
    if isinstance(results.get("rows"), list):
        return results["rows"]
    run_id = results.get("run_id")
    if not run_id:
        return []
    try:
        return _rows(wb, wb.store.uri, str(run_id), tuple(results.get("systems") or ()),
                     int(results.get("questions_done") or 0))
    except Exception:
        return []


def full_row(wb: Workbench, run_id: str, row: dict[str, Any]) -> dict[str, Any]:
    """The stored row with its trace (one lookup by key), or the row as given."""
    if "trace" in row or not run_id:
        return row
    try:
        stored = wb.store.result(run_id, row["system"], row["question_id"])
    except Exception:
        return row
    return stored or row


def question_detail(row: dict[str, Any]) -> None:
    """One question of a run: answer vs gold, and its trace's context and missed evidence."""
    st.markdown(f"**{md_escape(row.get('system'))} · {md_escape(row.get('question_id'))}**")
    st.text(f"Q: {row.get('question', '')}\nGold: {row.get('gold', '')}\n"
            f"Answer: {row.get('prediction', row.get('answer', ''))}")
    tr = row_trace(row)
    if tr is None:
        st.caption("This row carries no trace.")
        return
    trace = Trace.from_dict(tr)
    ev = row.get("evidence") or []
    missed = missed_table(locate_missed_evidence(trace, ev))
    if len(missed):
        st.markdown("**Why was it missed?**")
        st.dataframe(missed, hide_index=True)
    st.dataframe(context_table(trace, evidence_hits(trace, ev).gold), hide_index=True, height=280)


def _stat(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items()) or "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return "-" if value is None else str(value)


def mechanism_section(results: dict[str, Any]) -> None:
    """Each system's mechanism statistics (results["systems"][name]["mechanism"]), one small table per system."""
    blocks = {name: s.get("mechanism") for name, s in (results.get("systems") or {}).items()
              if isinstance(s, dict) and s.get("mechanism")}
    st.subheader("Mechanism statistics")
    if not blocks:
        st.caption("This results file has no mechanism statistics (written before they existed, or baselines only).")
        return
    st.caption("What each system's own mechanism did over the run (memcore.eval.mechanism), one table per "
               "system: e.g. how long its retrieval chains grew, or how often it fell back to the whole "
               "conversation.")
    cols = st.columns(min(len(blocks), 3))
    for i, (name, block) in enumerate(blocks.items()):
        col = cols[i % len(cols)]
        col.markdown(f"**{md_escape(name)}**")
        col.dataframe([{"statistic": k, "value": _stat(v)} for k, v in block.items()], hide_index=True,
                      key=f"bm_mech_{name}")

