"""Waiting is visible (issue 24 item 5): an ingest that waits for another writer says so at once and again
while it waits (whose lease, since when, how long it waited and will wait); a row lease of a killed holder
says when it lapses."""

from __future__ import annotations

import os
import time

import pytest
from typer.testing import CliRunner

from memcore.cli import app
from memcore.embed import HashingEmbedder
from memcore.errors import MemoryBusy
from memcore.settings import Settings
from memcore.store import LanceStore
from memcore.store.lease import Lease, set_wait_reporter
from memcore.workbench import Workbench


@pytest.fixture
def env(tmp_path, monkeypatch):
    for k, v in {"MEMCORE_EMBEDDER": "hashing", "MEMCORE_LLM_PROVIDER": "offline", "MEMCORE_LEASE_REPORT_S": "0.5",
                 "MEMCORE_STORE": str(tmp_path / "s")}.items():
        monkeypatch.setenv(k, v)
    return tmp_path / "s"


def test_an_ingest_waiting_for_another_writer_says_whose_lease_since_when_and_how_long(env, monkeypatch):
    wb = Workbench(Settings(store_uri=str(env)))
    conv = wb.load_demo()
    monkeypatch.setenv("MEMCORE_LEASE_WAIT_S", "2")
    other = LanceStore(str(env), dim=HashingEmbedder().dim)
    with other.lease(wb.space("naive_rag", conv), conv.id, "memory naive_rag/demo"):
        res = CliRunner().invoke(app, ["ingest", "demo", "-s", "naive_rag"])
    assert isinstance(res.exception, MemoryBusy) and "gave up after waiting 2 s" in str(res.exception)
    lines = [ln for ln in res.output.splitlines() if ln.startswith("waiting: ")]
    assert len(lines) >= 3, res.output  # at once, then every 0.5 s
    assert all(f"memory naive_rag/demo is being built by another process (pid {os.getpid()}" in ln for ln in lines)
    assert "since 20" in lines[0] and "waited 0 s, will wait up to 2 s more" in lines[0]
    assert "will wait up to 1 s more" in lines[-1] or "will wait up to 0 s more" in lines[-1]
    res = CliRunner().invoke(app, ["ingest", "demo", "-s", "naive_rag"])  # free again: no waiting line
    assert res.exit_code == 0 and "waiting:" not in res.output


def test_a_stale_row_lease_says_when_it_lapses_and_is_taken_over(tmp_path):
    dead = Lease(str(tmp_path / "s"), "sp|c", "memory s/c", mode="row", ttl=3, renew=False).acquire()  # never renews
    lines: list[str] = []
    t0 = time.monotonic()
    with Lease(str(tmp_path / "s"), "sp|c", "memory s/c", mode="row", ttl=3, timeout=30, report_every=0.5,
               on_wait=lines.append):
        waited = time.monotonic() - t0
    assert 1.5 < waited < 15 and len(lines) >= 2
    assert "lapses in" in lines[0] and "unless renewed" in lines[0] and f"pid {os.getpid()}" in lines[0]
    assert dead.held  # the dead holder's row was taken over, not released


def test_the_reporter_can_be_replaced_by_a_ui(tmp_path):
    got: list[str] = []
    old = set_wait_reporter(got.append)
    try:
        with Lease(str(tmp_path), "k", "memory k", wait=False), pytest.raises(MemoryBusy):
            Lease(str(tmp_path), "k", "memory k", timeout=0.3, report_every=0.1).acquire()
    finally:
        set_wait_reporter(old)
    assert got and got[0].startswith("waiting: memory k is being built")


def test_a_run_whose_lease_was_lost_writes_no_result(tmp_path):
    st = LanceStore(str(tmp_path / "s"), dim=8)
    st.lease_mode = "row"  # as on object storage
    row = {"system": "naive_rag", "question_id": "q1", "conv_id": "c"}
    with st.run_lease("r1") as lease:
        st.save_results("r1", [row])
        st.db.open_table("leases").delete("true")  # the row vanished (expired and taken over, then released)
        assert not lease.renew_now() and lease.lost
        with pytest.raises(MemoryBusy, match="lost the write lease of eval run r1"):
            st.save_results("r1", [{**row, "question_id": "q2"}])
    assert sorted(st.result_keys("r1")) == [("naive_rag", "q1")]
