"""The Benchmark page lists the runs in the store and follows one still running elsewhere (AppTest)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memcore.eval import run_record
from memcore.eval.run_record import get_run, save_run
from memcore.eval.runner import run_eval
from memcore.settings import Settings
from memcore.store import LanceStore

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
sys.path.insert(0, str(ROOT))

from ui import bench_view  # noqa: E402
from ui.bench_live import runs_frame  # noqa: E402


@pytest.fixture
def env(tmp_path, monkeypatch) -> Settings:
    monkeypatch.setenv("MEMCORE_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("MEMCORE_EMBEDDER", "hashing")
    monkeypatch.setenv("MEMCORE_LLM_PROVIDER", "offline")
    monkeypatch.chdir(tmp_path)
    return Settings(store_uri=str(tmp_path / "store"), llm_provider="offline", embedder="hashing")


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.exception] + [e.value for e in at.error]


def running_elsewhere(s: Settings, system: str, answered: int) -> str:
    """A run that answered `answered` questions and whose record says it is still running (as a process
    on another machine would leave it between two heartbeats)."""
    seen = {"n": 0}

    def progress(done: int, total: int, info: dict) -> None:
        seen["n"] = done

    run_eval(s, "demo", systems=[system], progress=progress, should_stop=lambda: seen["n"] >= answered)
    store = LanceStore(s.store_uri, dim=256)
    rec = next(r for r in run_record.list_runs(store) if r["systems"] == [system])
    save_run(store, {**rec, "status": "running", "heartbeat": time.time(), "finished": 0.0})
    return rec["run_id"]


def page(at: AppTest | None = None) -> AppTest:
    at = at or AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("pages/benchmark.py").run()
    assert not errors(at), errors(at)
    return at


def test_lists_runs_and_follows_the_running_one_as_rows_arrive(env) -> None:
    finished = run_eval(env, "demo", systems=["naive_rag"], limit=3)
    live = running_elsewhere(env, "naive_rag_session", 5)
    at = page()
    assert at.selectbox(key="bm_store_run").value == live  # the running run is shown first
    listed = at.table[0].value
    assert set(listed["run"]) == {live, finished["run_id"]}
    assert dict(zip(listed["run"], listed["state"], strict=True)) == {live: "running", finished["run_id"]: "done"}
    total = get_run(LanceStore(env.store_uri, dim=256), live)["total"]
    assert dict(zip(listed["run"], listed["progress"], strict=True))[live] == f"5/{total}"
    summary = at.dataframe[0].value
    assert list(summary["system"]) == ["naive_rag_session"] and list(summary["n"]) == [5]

    run_eval(env, "demo", systems=["naive_rag_session"])  # the rest of the rows arrive; the run ends
    at.run()  # what the fragment's timer does every few seconds
    assert not errors(at), errors(at)
    listed = at.table[0].value
    assert dict(zip(listed["run"], listed["state"], strict=True))[live] == "done"
    assert list(at.dataframe[0].value["n"]) == [total]

    at.selectbox(key="bm_store_run").set_value(finished["run_id"]).run()
    assert not errors(at), errors(at)
    assert list(at.dataframe[0].value["system"]) == ["naive_rag"] and list(at.dataframe[0].value["n"]) == [3]


def test_a_run_without_heartbeat_shows_as_lost_with_the_fix(env) -> None:
    live = running_elsewhere(env, "naive_rag", 3)
    store = LanceStore(env.store_uri, dim=256)
    save_run(store, {**get_run(store, live), "heartbeat": time.time() - run_record.STALE_AFTER - 5})
    at = page()
    assert at.table[0].value["state"].tolist() == ["lost"]
    assert any("Rerunning the same" in w.value for w in at.warning)
    assert list(at.dataframe[0].value["n"]) == [3]


def test_runs_frame_ages_and_progress() -> None:
    df = runs_frame([{"run_id": "eval-1", "state": "running", "done": 4, "total": 10, "engine": "ray",
                      "dataset": "locomo x.json", "systems": ["com", "naive_rag"], "started": 1000.0,
                      "heartbeat": 1290.0, "host": "h"}], now=1300.0)
    assert df.to_dict("records") == [{"run": "eval-1", "state": "running", "progress": "4/10", "engine": "ray",
                                      "dataset": "locomo x.json", "systems": "com, naive_rag",
                                      "started": "5m ago", "heartbeat": "10s ago", "host": "h"}]


def test_a_run_finished_in_another_session_is_not_taken_as_this_sessions_results(env) -> None:
    """Regression: the jobs registry is per process, so a benchmark job finished by another session (another
    tab, or another test's store) must not become this session's 'loaded results' and hide the store's runs."""
    from ui import jobs

    other = jobs.Job(bench_view.RUN_JOB, "Evaluation on demo", status=jobs.DONE,
                     result={"run_id": "eval-elsewhere", "systems": {}})
    jobs.JOBS[bench_view.RUN_JOB] = other
    try:
        live = running_elsewhere(env, "naive_rag", 3)
        at = page()
        assert at.selectbox(key="bm_store_run").value == live
        assert "bm_results" not in at.session_state
    finally:
        jobs.JOBS.pop(bench_view.RUN_JOB, None)
