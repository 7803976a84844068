"""`memcore eval --engine ray`: the same results and CSV as the local engine, resume, progress, failures.

One local Ray (2 CPUs) for the whole module; the tests skip when Ray is not installed
(`pip install -r requirements-ray.txt`, which `./run.sh test` does).
"""

from __future__ import annotations

import csv
import json
import sys

import pytest

from memcore.errors import ConfigError
from memcore.eval.report import TIMING_KEYS, diff_results
from memcore.eval.runner import run_eval
from memcore.settings import Settings

ray = pytest.importorskip("ray")

SYSTEMS = ["naive_rag", "com"]


@pytest.fixture(scope="module", autouse=True)
def cluster():
    """One local Ray for the module (the engine joins it instead of starting its own)."""
    import logging

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    yield
    ray.shutdown()


def settings(tmp_path, name: str) -> Settings:
    return Settings(store_uri=str(tmp_path / name), llm_provider="offline", embedder="hashing")


def csv_rows(path) -> list[dict]:
    with open(path) as f:
        return [{k: v for k, v in r.items() if k not in TIMING_KEYS} for r in csv.DictReader(f)]


def assert_same(local: dict, remote: dict, tmp_path) -> None:
    assert diff_results(local, remote) == []
    assert csv_rows(tmp_path / "local.csv") == csv_rows(tmp_path / "ray.csv")
    assert json.loads((tmp_path / "ray.json").read_text())["run_id"] == local["run_id"]


@pytest.fixture(scope="module")
def demo_pair(tmp_path_factory) -> tuple[dict, dict, list, object]:
    tmp = tmp_path_factory.mktemp("demo")
    local = run_eval(settings(tmp, "local"), "demo", systems=SYSTEMS, out=tmp / "local.json")
    calls: list = []
    remote = run_eval(settings(tmp, "ray"), "demo", systems=SYSTEMS, out=tmp / "ray.json", engine="ray",
                      progress=lambda d, t, info: calls.append((d, t, info)))
    return local, remote, calls, tmp


def test_demo_results_and_csv_equal_the_local_engine(demo_pair) -> None:
    local, remote, _, tmp = demo_pair
    assert remote["complete"], remote["errors"][:3]
    assert remote["questions_done"] == local["questions_done"] > 0
    assert_same(local, remote, tmp)


def test_progress_counts_every_question_across_the_cluster(demo_pair) -> None:
    _, remote, calls, _ = demo_pair
    answered = [c for c in calls if c[2].get("phase") == "answer"]
    assert len(answered) == remote["questions_total"]
    assert calls[-1][0] == calls[-1][1] == remote["questions_total"]
    assert {c[2]["system"] for c in answered} == set(SYSTEMS)


def test_locomo_conversation_equals_the_local_engine(shared_dir, tmp_path) -> None:
    file = shared_dir / "datasets" / "locomo" / "conv-26.json"
    kw = {"systems": SYSTEMS, "limit": 12, "categories": [1, 2, 3, 4]}
    local = run_eval(settings(tmp_path, "local"), "locomo", file, out=tmp_path / "local.json", **kw)
    remote = run_eval(settings(tmp_path, "ray"), "locomo", file, out=tmp_path / "ray.json", engine="ray", **kw)
    assert remote["complete"], (remote["errors"][:3], remote["questions_done"])
    assert remote["questions_done"] == 24
    assert_same(local, remote, tmp_path)


def test_resume_skips_what_is_stored(tmp_path) -> None:
    s = settings(tmp_path, "store")
    first = run_eval(s, "demo", systems=["naive_rag"], limit=4)  # 4 rows stored under the same run id
    calls: list = []
    again = run_eval(s, "demo", systems=["naive_rag"], engine="ray", progress=lambda d, t, i: calls.append((d, t)))
    assert again["run_id"] == first["run_id"] and again["complete"]
    assert calls[-1][1] == again["questions_total"] - 4  # only the pending questions were sent to the cluster
    calls.clear()
    third = run_eval(s, "demo", systems=["naive_rag"], engine="ray", progress=lambda d, t, i: calls.append((d, t)))
    assert calls == [] and diff_results(again, third) == []


def test_a_failed_task_leaves_its_questions_missing_and_the_rest_goes_on(tmp_path, monkeypatch) -> None:
    from memcore.eval import ray_engine

    real = ray_engine.run_ray

    def broken_first(settings, convs, todo, job, on_msg, stop, *a):
        # a question id the conversation does not hold: the task for naive_rag raises in its worker
        todo = {cid: {n: list(qs) for n, qs in t.items()} for cid, t in todo.items()}
        todo["demo"]["naive_rag"] = [*todo["demo"]["naive_rag"], _Ghost()]
        return real(settings, convs, todo, job, on_msg, stop, *a)

    monkeypatch.setattr("memcore.eval.runner.run_ray", broken_first)
    s = settings(tmp_path, "store")
    res = run_eval(s, "demo", systems=SYSTEMS, engine="ray")
    assert not res["complete"] and res["missing_by_system"]["com"] == 0
    assert res["missing_by_system"]["naive_rag"] == res["questions_total"] // 2
    err = [e for e in res["errors"] if e["system"] == "naive_rag"]
    assert err and "Ray task failed: KeyError" in err[0]["error"]
    monkeypatch.setattr("memcore.eval.runner.run_ray", real)
    fixed = run_eval(s, "demo", systems=SYSTEMS, engine="ray")  # the rerun fills them in
    assert fixed["complete"] and fixed["questions_missing"] == 0


class _Ghost:
    id = "no-such-question"


def test_without_ray_a_clear_message_and_exit_2(tmp_path, monkeypatch, capsys) -> None:
    from memcore import cli

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.raises(ConfigError, match="pip install -r requirements-ray.txt"):
        run_eval(settings(tmp_path, "store"), "demo", systems=["naive_rag"], engine="ray")
    monkeypatch.setattr(sys, "argv", ["memcore", "eval", "--dataset", "demo", "--systems", "naive_rag", "--engine",
                                      "ray", "--store", str(tmp_path / "s"), "--out", str(tmp_path / "r.json")])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    assert exit_.value.code == 2 and "requirements-ray.txt" in capsys.readouterr().err


def test_unknown_engine_is_refused(tmp_path) -> None:
    with pytest.raises(ConfigError, match="choose one of local, ray"):
        run_eval(settings(tmp_path, "store"), "demo", systems=["naive_rag"], engine="spark")


def test_workers_that_do_not_share_the_store_fail_with_the_fix(tmp_path, monkeypatch) -> None:
    from memcore.eval import ray_engine

    real = ray_engine.run_ray

    def elsewhere(settings, *a):
        return real(settings.with_(store_uri=str(tmp_path / "node-local")), *a)

    monkeypatch.setattr("memcore.eval.runner.run_ray", elsewhere)
    res = run_eval(settings(tmp_path, "store"), "demo", systems=["naive_rag"], engine="ray")
    assert not res["complete"] and res["questions_done"] == 0
    assert "do not share the driver's store" in res["errors"][0]["error"] and "--store" in res["errors"][0]["error"]


def test_one_task_per_conversation_gives_the_same_results(demo_pair, tmp_path, monkeypatch) -> None:
    from memcore.eval import ray_engine

    monkeypatch.setattr(ray_engine, "TASK_UNIT", "conversation")  # "auto" picks it with many conversations
    local, _, _, tmp = demo_pair
    remote = run_eval(settings(tmp_path, "ray"), "demo", systems=SYSTEMS, engine="ray")
    assert remote["complete"] and diff_results(local, remote) == []
