"""Runs in the store on the Benchmark page: list them, follow one while its rows arrive (never blocking).

A run started anywhere (`memcore eval` on this machine or on a Ray cluster, or this page) keeps a
record in the store (memcore.eval.run_record). The page lists those records; the chosen run's tables
are drawn inside a fragment that re-runs every REFRESH_SECONDS while the run is running, reading
its record and the rows stored so far; each read is short, so the page stays responsive.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from memcore.eval.run_record import LOST, RUNNING, get_run, list_runs, results_so_far
from memcore.viz.safe import md_escape
from memcore.workbench import Workbench

REFRESH_SECONDS = 3.0  # a running run's tables
WATCH_SECONDS = 10.0  # the runs list, for a run that starts elsewhere
FILE = "__file__"
Body = Callable[[dict[str, Any]], None]


def store_runs(wb: Workbench) -> list[dict]:
    """The run records of the workbench's store (newest first); none when the store cannot be read."""
    try:
        return list_runs(wb.store)
    except Exception:
        return []


def _age(seconds: float) -> str:
    s = max(0, int(seconds))
    return f"{s}s" if s < 120 else f"{s // 60}m" if s < 7200 else f"{s // 3600}h"


def runs_frame(runs: list[dict], now: float | None = None) -> pd.DataFrame:
    """One row per run: id, state, progress, engine, dataset, systems, started and heartbeat ages, host."""
    now = time.time() if now is None else now
    return pd.DataFrame([{
        "run": r["run_id"], "state": r["state"], "progress": f"{r['done']}/{r['total']}",
        "engine": r["engine"], "dataset": r["dataset"], "systems": ", ".join(r["systems"]),
        "started": f"{_age(now - float(r['started'] or now))} ago",
        "heartbeat": f"{_age(now - float(r['heartbeat'] or now))} ago", "host": r["host"],
    } for r in runs], columns=["run", "state", "progress", "engine", "dataset", "systems", "started", "heartbeat",
                               "host"])


@st.cache_data(show_spinner=False, max_entries=16)
def _results(_wb: Workbench, store_uri: str, run_id: str, done: int, state: str) -> dict[str, Any] | None:
    rec = get_run(_wb.store, run_id)
    return results_so_far(_wb.store, rec) if rec else None


def _label(runs: dict[str, dict], has_file: bool) -> Callable[[str], str]:
    def fmt(key: str) -> str:
        if key == FILE:
            return "the results loaded above" if has_file else "—"
        r = runs[key]  # no state or progress here: the picker is outside the refreshing fragment
        return f"{key} · {r['dataset'].split(' ')[0]} · {', '.join(r['systems'])} · {r['engine']}"
    return fmt


def show(wb: Workbench, file_results: dict[str, Any] | None, body: Body) -> bool:
    """Draw the runs in the store and the chosen run (or the loaded results) with `body`; False when there
    is nothing to show. The chosen run's view refreshes itself while the run is running."""
    runs = store_runs(wb)
    _watch(wb, {r["run_id"] for r in runs if r["state"] == RUNNING})
    if not runs:
        if file_results:
            body(file_results)
        return bool(file_results)
    by_id = {r["run_id"]: r for r in runs}
    options = ([FILE] if file_results else []) + list(by_id)
    running = [r["run_id"] for r in runs if r["state"] == RUNNING]
    default = FILE if file_results else (running or list(by_id))[0]
    seen = (file_results or {}).get("run_id"), (file_results or {}).get("created")
    if st.session_state.get("bm_store_run") not in options or (file_results and st.session_state.get("bm_seen") != seen):
        st.session_state["bm_store_run"] = default  # newly loaded or finished results are shown first
    st.session_state["bm_seen"] = seen
    pick = st.selectbox("Show", options, key="bm_store_run", format_func=_label(by_id, bool(file_results)),
                        help="Runs recorded in the store (by `memcore eval`, here or on a cluster), or a results "
                             "file loaded above. A running run's tables refresh as its rows arrive.")
    if pick == FILE:
        _runs_table(runs)
        body(file_results or {})
        return True
    _follow(wb, pick, body, by_id[pick]["state"] == RUNNING)
    return True


def _runs_table(runs: list[dict]) -> None:
    with st.expander(f"Runs in this store ({len(runs)})", expanded=any(r["state"] == RUNNING for r in runs)):
        st.table(runs_frame(runs))


def _follow(wb: Workbench, run_id: str, body: Body, running: bool) -> None:
    @st.fragment(run_every=REFRESH_SECONDS if running else None)
    def view() -> None:
        runs = store_runs(wb)
        rec = next((r for r in runs if r["run_id"] == run_id), None)
        if rec is None:
            st.warning(md_escape(f"Run {run_id} is no longer in the store."))
            return
        if running and rec["state"] != RUNNING:
            st.rerun(scope="app")  # the run ended: draw the page once more, without the refresh timer
        _runs_table(runs)
        _status(rec)
        try:
            results = _results(wb, wb.store.uri, run_id, int(rec["done"]), rec["state"])
        except Exception as e:
            st.error(md_escape(f"Cannot read the results of {run_id}: {type(e).__name__}: {e}"))
            return
        if results is not None and results["questions_done"]:
            body(results)
        else:
            st.caption("No question answered yet: the tables appear as rows arrive.")

    view()


def _status(rec: dict) -> None:
    done, total = int(rec["done"]), max(int(rec["total"]), 1)
    text = f"{rec['run_id']}: {rec['state']} · {done}/{rec['total']} questions · {rec['engine']} on {rec['host']}"
    if rec["state"] == RUNNING:
        st.progress(min(done / total, 1.0), text=md_escape(text))
    elif rec["state"] == LOST:
        st.warning(md_escape(f"{text}. No heartbeat for a while: its process may have died. Rerunning the same "
                             "`memcore eval` command resumes it."))
    else:
        st.caption(md_escape(text + (f" · {rec['message']}" if rec.get("message") else "")))


def _watch(wb: Workbench, running: set[str]) -> None:
    """Re-run the page when the set of running runs changes (a run started or ended elsewhere)."""
    st.session_state["bm_running"] = running

    @st.fragment(run_every=WATCH_SECONDS)
    def watch() -> None:
        now = {r["run_id"] for r in store_runs(wb) if r["state"] == RUNNING}
        if now != st.session_state.get("bm_running"):
            st.rerun()

    watch()
