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


def test_a_sweep_counts_its_points_and_refuses_a_big_one_without_yes(tmp_path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from memcore.cli import app
    from memcore.errors import ConfigError

    monkeypatch.setenv("MEMCORE_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("MEMCORE_EMBEDDER", "hashing")
    monkeypatch.chdir(tmp_path)
    grid = "K=" + ",".join(str(k) for k in range(1, 61))
    dry = CliRunner().invoke(app, ["sweep", "com", "-d", "demo", "--grid", grid, "--limit", "2", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "sweep plan: 60 point(s) of com (1 construction point(s)) x 1 conversation(s), 2 question(s)" in dry.output
    assert "estimate 120 answer(s)" in dry.output and "com[K=60]" in dry.output
    assert not (tmp_path / "store").exists() and not (tmp_path / "sweep.json").exists()  # nothing run or written
    big = CliRunner().invoke(app, ["sweep", "com", "-d", "demo", "--grid", grid, "--limit", "2"])
    assert isinstance(big.exception, ConfigError) and "60 points, more than --max-points 50" in str(big.exception)
    assert not (tmp_path / "store").exists()
    monkeypatch.setenv("MEMCORE_SWEEP_MAX_POINTS", "10")
    small = CliRunner().invoke(app, ["sweep", "com", "-d", "demo", "--grid", "K=5,10,15,20,25,30,35,40,45,50,55",
                                     "--limit", "1"])
    assert isinstance(small.exception, ConfigError) and "more than --max-points 10" in str(small.exception)
