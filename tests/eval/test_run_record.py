"""Run records: a run's status, progress and heartbeat in the store, seen from another store handle."""

from __future__ import annotations

import threading
import time

import pytest

from memcore.eval import run_record
from memcore.eval.report import diff_results
from memcore.eval.run_record import get_run, list_runs, results_so_far, run_state
from memcore.eval.runner import run_eval
from memcore.settings import Settings
from memcore.store import LanceStore

SYSTEMS = ["naive_rag", "naive_rag_session"]


def settings(tmp_path) -> Settings:
    return Settings(store_uri=str(tmp_path / "store"), llm_provider="offline", embedder="hashing")


def test_a_finished_run_is_recorded_with_its_results(tmp_path) -> None:
    res = run_eval(settings(tmp_path), "demo", systems=SYSTEMS)
    other = LanceStore(str(tmp_path / "store"), dim=256)  # another handle, as the app would open it
    [rec] = list_runs(other)
    assert rec["run_id"] == res["run_id"] and rec["state"] == rec["status"] == "done"
    assert rec["done"] == rec["total"] == res["questions_total"] and rec["systems"] == SYSTEMS
    assert rec["engine"] == "local x1" and rec["dataset"].startswith("demo ") and rec["finished"] >= rec["started"]
    assert diff_results(res, results_so_far(other, rec), ignore=frozenset({"configs", "limit", "errors",
                                                                          "status"})) == []


def test_a_running_run_shows_its_progress_to_another_handle(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(run_record, "WRITE_EVERY", 0.05)
    halfway, release = threading.Event(), threading.Event()

    def progress(done: int, total: int, info: dict) -> None:
        if done == total // 2 + 1 and info.get("phase") == "answer":  # the first system's rows are saved
            halfway.set()
            release.wait(30)

    box: dict = {}
    worker = threading.Thread(target=lambda: box.update(res=run_eval(settings(tmp_path), "demo", systems=SYSTEMS,
                                                                     progress=progress)))
    worker.start()
    try:
        assert halfway.wait(60)
        other = LanceStore(str(tmp_path / "store"), dim=256)
        deadline = time.time() + 20
        while (rec := get_run(other, next(iter(r["run_id"] for r in list_runs(other))))) and \
                rec["done"] < rec["total"] // 2 and time.time() < deadline:
            time.sleep(0.1)
        assert rec["state"] == "running" and 0 < rec["done"] < rec["total"]
        partial = results_so_far(other, rec)
        assert not partial["complete"] and 0 < partial["questions_done"] < partial["questions_total"]
    finally:
        release.set()
        worker.join(60)
    assert get_run(other, box["res"]["run_id"])["state"] == "done"


def test_a_run_without_heartbeat_is_lost_and_a_failed_run_says_why(tmp_path) -> None:
    rec = {"status": "running", "heartbeat": 1000.0}
    assert run_state(rec, 1000.0 + run_record.STALE_AFTER - 1) == "running"
    assert run_state(rec, 1000.0 + run_record.STALE_AFTER + 1) == "lost"

    def boom(done: int, total: int, info: dict) -> None:
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        run_eval(settings(tmp_path), "demo", systems=["naive_rag"], progress=boom)
    [failed] = list_runs(LanceStore(str(tmp_path / "store"), dim=256))
    assert failed["state"] == "failed" and "RuntimeError: disk full" in failed["message"]


def test_a_stopped_run_is_recorded_as_stopped(tmp_path) -> None:
    res = run_eval(settings(tmp_path), "demo", systems=["naive_rag"], should_stop=lambda: True)
    [rec] = list_runs(LanceStore(str(tmp_path / "store"), dim=256))
    assert not res["complete"] and rec["state"] == "stopped" and rec["done"] == res["questions_done"]
