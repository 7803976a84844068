"""A store written before some columns existed (issue 37): opened read-only (compare, diff, doctor) it is never
migrated (no column added, no new table version); its reads compute the missing columns as the migration would
fill them, filters on them included; opened for writing it is migrated as before."""

from __future__ import annotations

import lancedb
import pytest

from memcore.llm.ledger import CallRecord
from memcore.store import LanceStore
from memcore.store.schema import ADDED_COLUMNS
from tests.eval.test_compare import A, B
from tests.test_cli_walk37 import run

DROPPED = ["variant", "outcome", "attempt"]  # the ledger's columns added after the first stores


def _old_store(path) -> None:
    """A store with a demo-like ledger, two runs' results, and an llm_calls table without DROPPED."""
    store = LanceStore(str(path))
    store.add_llm_calls([CallRecord(role="answer", stage="query", system="com", conv_id="c1", outcome="ok",
                                    step=0),
                         CallRecord(role="extract", stage="construction", system="naive_rag", conv_id="c1",
                                    outcome="ok", step=3, attempt=2)])
    store.save_results("run-a", A)
    store.save_results("run-b", B)
    lancedb.connect(str(path)).open_table("llm_calls").drop_columns(DROPPED)


def _state(path) -> dict[str, tuple[int, list[str]]]:
    db = lancedb.connect(str(path))
    return {n: (db.open_table(n).version, db.open_table(n).schema.names) for n in db.table_names()}


def test_a_read_only_store_reads_an_older_table_without_migrating_it(tmp_path) -> None:
    _old_store(tmp_path / "s")
    before = _state(tmp_path / "s")
    assert not set(DROPPED) & set(before["llm_calls"][1])
    ro = LanceStore(str(tmp_path / "s"), read_only=True)
    calls = ro.llm_calls()
    assert list(calls.columns[-len(DROPPED):]) == [c for c in ADDED_COLUMNS["llm_calls"] if c in DROPPED]
    assert sorted(calls["variant"]) == ["com", "naive_rag"]  # what the migration stores: the plain system
    assert set(calls["outcome"]) == {""} and set(calls["attempt"]) == {1}  # dropped: the migration's defaults
    assert list(ro.llm_calls(variant="naive_rag")["system"]) == ["naive_rag"]  # a filter on a computed column
    assert list(ro.llm_calls(variant=["com"], stage="query")["role"]) == ["answer"]
    assert len(ro.llm_calls(system="com", variant="naive_rag")) == 0
    assert _state(tmp_path / "s") == before  # no column added, no version written
    # the same reads on a store opened for writing: it is migrated, and reads the same rows
    rw = LanceStore(str(tmp_path / "s"))
    migrated = rw.llm_calls()
    assert set(DROPPED) <= set(_state(tmp_path / "s")["llm_calls"][1])
    cols = ["system", "variant", "outcome", "attempt"]
    assert migrated[cols].sort_values("system").values.tolist() == calls[cols].sort_values("system").values.tolist()


@pytest.mark.slow
def test_read_only_commands_leave_an_older_store_as_it_was(tmp_path) -> None:
    from memcore.embed import HashingEmbedder
    from memcore.settings import Settings
    from memcore.workbench import Workbench

    wb = Workbench(Settings(store_uri=str(tmp_path / "store"), llm_provider="offline", embedder="hashing"),
                   embedder=HashingEmbedder())
    wb.ingest("naive_rag", wb.load_demo())  # a memory for diff to read
    _old_store(tmp_path / "store")
    before = _state(tmp_path / "store")
    res = run("compare", "run-a", "run-b", "-o", "", "--html", "", cwd=tmp_path)
    assert res.returncode == 0 and "8 R->W, 2 W->R" in res.stdout, res.stderr
    res = run("doctor", cwd=tmp_path)
    assert "[ok] store:" in res.stdout, res.stdout
    res = run("diff", "naive_rag", "demo", cwd=tmp_path)
    assert res.returncode == 0 and "naive_rag on demo from step 0" in res.stdout, res.stderr
    assert _state(tmp_path / "store") == before
