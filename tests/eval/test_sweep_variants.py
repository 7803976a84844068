"""Sweeps (issue 37): each point runs under its own variant name (its run record and rows say which
configuration answered) and reports the construction cost of the memory it actually answered from."""

from __future__ import annotations

from memcore.eval.run_record import list_runs
from memcore.eval.sweep import run_sweep
from memcore.settings import Settings
from memcore.store import LanceStore
from memcore.systems.variants import parse_variant


def test_points_name_their_variant_and_count_their_own_memory(tmp_path) -> None:
    s = Settings(store_uri=str(tmp_path / "store"), llm_provider="offline", embedder="hashing")
    res = run_sweep(s, "xmemory", ["max_theme=4,12"], dataset="demo", limit=1, out=None)
    assert res["complete"] and len(res["points"]) == 2
    store = LanceStore(s.store_uri)
    records = {r["run_id"]: r for r in list_runs(store)}
    for p in res["points"]:
        assert records[p["run_id"]]["systems"] == [p["name"]]  # the record names the point, not just "xmemory"
        assert {r["variant"] for r in store.results(p["run_id"], None, traces=False)} == {p["name"]}
        memory = parse_variant(p["name"]).memory_name
        ledger = store.llm_calls(stage="construction", system="xmemory", variant=memory)
        assert len(ledger) > 0
        assert p["summary"]["construction_calls"] == len(ledger)  # the cost of the memory it used
