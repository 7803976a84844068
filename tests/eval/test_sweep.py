"""`memcore sweep`: points as canonical variant names, memory built once per construction point, the table,
JSON/CSV, resume after kill -9 (a real SIGKILL of the command), and the Ray engine giving the same results."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memcore.errors import ConfigError
from memcore.eval.report import strip_timing
from memcore.eval.sweep import paper_grid, parse_grid, preset_names, run_sweep, sweep_points
from memcore.eval.sweep_report import format_sweep, memory_line
from memcore.settings import Settings
from memcore.systems.variants import register_preset, register_sweep, unregister_preset, unregister_sweep

ROOT = Path(__file__).resolve().parents[2]
GRID = ["beta=0.3,0.8", "max_len=4,8"]
RUN_ONLY = {"memory_built", "memory_builds", "store"}  # what one invocation did, not what the sweep found


def settings(tmp_path, name: str = "store") -> Settings:
    return Settings(store_uri=str(tmp_path / name), llm_provider="offline", embedder="hashing")


def comparable(res: dict) -> dict:
    return {k: v for k, v in strip_timing(res).items() if k not in RUN_ONLY}


@pytest.fixture
def short_preset():
    """A test preset of CoM (the papers' presets land with their systems)."""
    register_preset("com", "test-short", {"max_len": 1}, "test: chains of one turn", "anchors only")
    yield "test-short"
    unregister_preset("com", "test-short")


@pytest.fixture(scope="module")
def com_sweep(tmp_path_factory) -> tuple[dict, Path]:
    tmp = tmp_path_factory.mktemp("sweep")
    return run_sweep(settings(tmp), "com", GRID, dataset="demo", out=tmp / "sweep.json"), tmp


def test_grid_values_are_typed_and_checked() -> None:
    assert parse_grid("com", ["beta=0.3,0.8", "max_len=4"]) == {"beta": [0.3, 0.8], "max_len": [4]}
    for bad, said in [(["betta=0.3"], "no field 'betta'"), (["beta=1.5"], "beta"), (["max_len=4.5"], "whole number"),
                      (["beta"], "FIELD=v1,v2"), (["beta=0.3", "beta=0.5"], "twice"), (["beta=0.3,0.3"], "distinct")]:
        with pytest.raises(ConfigError, match=said) as err:
            parse_grid("com", bad)
        assert "\n" not in str(err.value)
    with pytest.raises(ConfigError, match="unknown memory system"):
        parse_grid("nope", [])


def test_points_are_the_product_with_canonical_names(short_preset) -> None:
    pts = sweep_points("com", parse_grid("com", GRID), ["dense", "lexical"])
    assert len(pts) == 8 and pts[0].name == "com[beta=0.3,max_len=4]"
    assert "com[retriever=lexical]" not in {p.name for p in pts}  # beta, max_len are always set in this grid
    plain = sweep_points("com", parse_grid("com", ["beta=0.5,0.8"]))
    assert [p.name for p in plain] == ["com", "com[beta=0.8]"]  # the paper default's name is the system's
    with_presets = sweep_points("com", parse_grid("com", ["beta=0.5,0.8"]), None, [short_preset])
    assert [p.name for p in with_presets] == ["com", "com[beta=0.8]", "com:test-short", "com:test-short[beta=0.8]"]
    assert with_presets[3].settings == {"max_len": 1, "beta": 0.8}
    held = sweep_points("com", parse_grid("com", ["max_len=4,8"]), None, [short_preset])
    assert [p.name for p in held] == ["com[max_len=4]", "com", "com:test-short"]  # the preset keeps max_len=1
    assert held[2].held == ("max_len",) and held[2].params == {"max_len": 1}
    assert short_preset in preset_names("com", "ablations")
    with pytest.raises(ConfigError, match="no preset 'nope'"):
        preset_names("com", "nope")


def test_sweep_table_json_csv_and_one_memory(com_sweep) -> None:
    res, tmp = com_sweep
    assert res["complete"] and res["points_total"] == 4 and res["points_done"] == 4
    assert [p["name"] for p in res["points"]] == ["com[beta=0.3,max_len=4]", "com[beta=0.3]", "com[beta=0.8,max_len=4]",
                                                  "com[beta=0.8]"]
    # CoM's fields are query-time: one memory for the four points, built once
    assert res["construction_points"] == 1 and res["memory_built"] == 1
    assert len({p["memory_space"] for p in res["points"]}) == 1
    assert len({p["run_id"] for p in res["points"]}) == 4
    n = res["points"][0]["n"]
    assert n > 0 and all(p["n"] == n and p["complete"] for p in res["points"])
    hist = [p["summary"]["mechanism"]["chain_length_hist"] for p in res["points"]]
    assert max(int(k) for k in hist[0]) == 4 and max(int(k) for k in hist[1]) == 8  # each point used its max_len
    table = format_sweep(res)
    assert all(p["name"] in table for p in res["points"]) and "f1 [95% CI]" in table
    assert "1 construction point(s)" in memory_line(res) and "built 1 time(s)" in memory_line(res)
    on_disk = json.loads((tmp / "sweep.json").read_text())
    assert on_disk["sweep_id"] == res["sweep_id"] and on_disk["kind"] == "memcore-sweep"
    with open(tmp / "sweep.csv") as f:
        rows = list(csv.DictReader(f))
    overall = [r for r in rows if r["category"] == "overall"]
    assert [r["point"] for r in overall] == [p["name"] for p in res["points"]]
    assert [(r["beta"], r["max_len"]) for r in overall] == [("0.3", "4"), ("0.3", "8"), ("0.8", "4"), ("0.8", "8")]
    assert {"f1", "f1_lo", "f1_hi", "n"} <= set(overall[0])


def test_rerun_builds_nothing_and_matches(com_sweep) -> None:
    res, tmp = com_sweep
    again = run_sweep(settings(tmp), "com", GRID, dataset="demo")
    assert again["memory_built"] == 0 and comparable(again) == comparable(res)


def test_construction_points_each_build_once(tmp_path) -> None:
    """xMemory's gap_minutes keys its memory; the retriever does not: 4 points, 2 memories, 2 builds."""
    res = run_sweep(settings(tmp_path), "xmemory", ["gap_minutes=30,60"], retrievers=["dense", "lexical"],
                    dataset="demo", limit=3)
    assert res["complete"] and res["construction_points"] == 2 and res["memory_built"] == 2
    spaces = [p["memory_space"] for p in res["points"]]
    assert spaces[0] == spaces[1] != spaces[2] == spaces[3]
    assert [b["point"] for b in res["memory_builds"]] == [res["points"][0]["name"], res["points"][2]["name"]]


def test_presets_run_beside_the_full_system(tmp_path, short_preset) -> None:
    res = run_sweep(settings(tmp_path), "com", presets=[short_preset], dataset="demo", limit=4)
    assert [p["name"] for p in res["points"]] == ["com", "com:test-short"]
    assert res["preset_sources"] == {short_preset: "test: chains of one turn"}
    assert res["points"][1]["summary"]["mechanism"]["chain_length_hist"].keys() == {"1"}


def _sweep_cmd(tmp_path) -> list[str]:
    return [sys.executable, "-m", "memcore.cli", "sweep", "com", "--dataset", "demo", *sum((["--grid", g] for g in GRID), []),
            "--store", str(tmp_path / "store"), "--embedder", "hashing", "--provider", "offline",
            "--out", str(tmp_path / "out.json")]


def test_killed_with_sigkill_and_rerun_equals_uninterrupted(com_sweep, tmp_path) -> None:
    res, _ = com_sweep
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.Popen(_sweep_cmd(tmp_path), cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    seen = ""
    deadline = time.monotonic() + 240
    while "point 3/4" not in seen and time.monotonic() < deadline:  # kill while the third point runs
        line = proc.stderr.readline()
        if not line:
            break
        seen += line
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL and "point 3/4" in seen, seen
    assert not (tmp_path / "out.json").exists()
    done = subprocess.run(_sweep_cmd(tmp_path), cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "built 0 time(s)" in done.stdout and "point 1/4 com[beta=0.3,max_len=4] (memory stored)" in done.stderr
    final = json.loads((tmp_path / "out.json").read_text())
    assert comparable(final) == comparable(json.loads(json.dumps(res, default=str)))
    assert format_sweep(final) in done.stdout


def test_ray_engine_gives_the_same_table(com_sweep, tmp_path) -> None:
    pytest.importorskip("ray")
    res, _ = com_sweep
    remote = run_sweep(settings(tmp_path), "com", GRID, dataset="demo", engine="ray", workers=2)
    assert remote["complete"] and remote["memory_built"] == 1
    assert comparable(remote) == comparable(res)
    assert format_sweep(strip_timing(remote)) == format_sweep(strip_timing(res))  # the table without timings


def test_a_papers_registered_sweep_gives_the_grid() -> None:
    register_sweep("com", "test-k", {"K": [5, 10]}, "test: Fig. 0", "pool sizes")
    try:
        texts, paper = paper_grid("com", "test-k", ["beta=0.3,0.8"])
        assert texts == {"K": ["5", "10"], "beta": ["0.3", "0.8"]} and paper["source"] == "test: Fig. 0"
        assert len(sweep_points("com", parse_grid("com", texts))) == 4
        with pytest.raises(ConfigError, match="already sweeps K"):
            paper_grid("com", "test-k", ["K=1,2"])
        with pytest.raises(ConfigError, match="--sweep nope"):
            paper_grid("com", "nope", None)
    finally:
        unregister_sweep("com", "test-k")


def test_query_time_points_answer_from_the_memory_loaded_once(tmp_path, monkeypatch) -> None:
    """Every point runs its own eval, which calls ingest (a no-op on a complete memory): that must not drop the
    memory the workbench holds, so four query-time points restore it once, not four times."""
    from memcore.systems.base import BaseSystem

    restores: list[str] = []
    real = BaseSystem.restore

    def counting(self, *a, **kw) -> None:
        restores.append(self.space)
        real(self, *a, **kw)

    monkeypatch.setattr(BaseSystem, "restore", counting)
    res = run_sweep(settings(tmp_path), "com", GRID, dataset="demo", limit=2)
    assert res["complete"] and res["memory_built"] == 1
    assert restores == [res["points"][0]["memory_space"]]
