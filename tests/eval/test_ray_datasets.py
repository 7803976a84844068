"""`memcore eval --engine ray` on multi-conversation datasets (issue 38, item 6): a BEAM scale folder (one
conversation per chat) and LoCoMo-Plus (one stitched conversation per item) give the local engine's results,
result rows (retrieval included) and stored memories; a task that fails for one conversation leaves the others
complete and its own resumable, and a rerun completes it.

Small hand-written fixtures (the writers of tests/datasets/test_beam_locomo_plus.py): two BEAM chats in the
chat.json + probing_questions.json layout, and LoCoMo-Plus items stitched into a tiny locomo10-layout file.
One local Ray (2 CPUs) for the module; skipped when Ray is not installed.
"""

from __future__ import annotations

import csv
import json
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from memcore.datasets import DatasetWarning, load_dataset
from memcore.eval.report import TIMING_KEYS, diff_results
from memcore.eval.runner import run_eval
from memcore.settings import Settings
from memcore.workbench import Workbench
from tests.datasets.test_beam_locomo_plus import CHAT, QUESTIONS, write_beam, write_plus

ray = pytest.importorskip("ray")

SYSTEMS = ["naive_rag", "com", "memweaver"]
FAILING_CONV = "beam-100K-8"  # the conversation whose task fails in the failure test


@pytest.fixture(scope="module", autouse=True)
def cluster():
    """One local Ray for the module, started as the engine starts one (its workers at niceness 0); the runs join it
    instead of starting their own."""
    from memcore.eval.ray_engine import connect

    assert connect(None, 2)
    yield
    ray.shutdown()


def settings(root: Path, name: str) -> Settings:
    return Settings(store_uri=str(root / name), llm_provider="offline", embedder="hashing")


def write_two_chats(root: Path) -> Path:
    """A BEAM scale folder root/100K with chats 7 (the loader test's chat) and 8 (another project, its own
    questions); returns the scale folder."""
    write_beam(root)
    swap = {"weather app": "recipe site", "vanilla JavaScript": "Django", "API quota": "upload limit",
            "1,000 calls": "500 files", "1,200 calls": "800 files", "debounce": "cache", "search box": "image list"}

    def other(x: Any) -> Any:
        text = json.dumps(x)
        for a, b in swap.items():
            text = text.replace(a, b)
        return json.loads(text)

    folder = root / "100K" / "8"
    (folder / "probing_questions").mkdir(parents=True)
    (folder / "chat.json").write_text(json.dumps(other(CHAT)), encoding="utf-8")
    (folder / "probing_questions" / "probing_questions.json").write_text(json.dumps(other(QUESTIONS)),
                                                                         encoding="utf-8")
    return root / "100K"


def _strip(x: Any) -> Any:
    """A value without its wall-clock fields (TIMING_KEYS), at any depth."""
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k not in TIMING_KEYS}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


def _load(file: Path) -> list:
    """The fixture's conversations (the LoCoMo-Plus fixture's skipped items are asserted on where a run loads it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DatasetWarning)
        return load_dataset(file)


def stored(s: Settings, file: Path, run_id: str, systems: list[str], conv_ids: list[str] | None = None) -> dict:
    """What a run left in its store, per conversation: the turns, every system's memory (status, item versions,
    current items, events) and the result rows with their traces (retrieval included), timings left out."""
    wb = Workbench(s)
    out: dict = {}
    for conv in _load(file):
        if conv_ids and conv.id not in conv_ids:
            continue
        out[("turns", conv.id)] = wb.store.has_turns(conv.id)
        for name in systems:
            view = wb.memory(name, conv)
            versions = sorted(map(tuple, view.versions()[["kind", "id", "valid_from", "valid_to"]].values.tolist()))
            items = {kind: sorted((i.id, i.text, tuple(i.sources), tuple(i.turn_ids))
                                  for i in view.items(kind, with_vectors=False)) for kind in view.kind_counts()}
            out[(name, conv.id)] = (view.status(), versions, items,
                                    [(e.step, e.kind, tuple(e.item_ids)) for e in view.events()])
    rows = wb.store.results(run_id)
    out["rows"] = sorted(json.dumps(_strip(r), sort_keys=True, default=str) for r in rows)
    out["row_count"] = wb.store.results_table().count_rows(f"run_id = '{run_id}'")  # each (system, question) once
    return out


def csv_rows(path: Path) -> list[dict]:
    with open(path) as f:
        return [{k: v for k, v in r.items() if k not in TIMING_KEYS} for r in csv.DictReader(f)]


def assert_equal_runs(local: dict, remote: dict, stores: tuple[Settings, Settings], file: Path,
                      systems: list[str], conv_ids: list[str] | None = None) -> None:
    """Results, stored rows and memories of the Ray run (store `stores[1]`) equal the local run's (`stores[0]`);
    nothing is stored twice."""
    assert remote["complete"], (remote["errors"][:3], remote["questions_done"])
    assert remote["questions_done"] == local["questions_done"] == local["questions_total"] > 0
    assert diff_results(local, remote) == []
    mine = stored(stores[0], file, local["run_id"], systems, conv_ids)
    theirs = stored(stores[1], file, remote["run_id"], systems, conv_ids)
    assert mine == theirs
    assert theirs["row_count"] == len(theirs["rows"]) == remote["questions_total"]
    for conv in _load(file):
        if conv_ids and conv.id not in conv_ids:
            continue
        assert theirs[("turns", conv.id)] == len(conv.turns)
        for name in systems:
            status, versions, _, _ = theirs[(name, conv.id)]
            assert status[1] and len(set(versions)) == len(versions)


# ------------------------------------------------------------------------------------------------- BEAM


@pytest.fixture(scope="module")
def beam(tmp_path_factory) -> tuple[Path, Path, dict, dict]:
    """A two-chat BEAM folder evaluated by each engine (Ray: TASK_UNIT auto, here one task per chat)."""
    root = tmp_path_factory.mktemp("beam")
    folder = write_two_chats(root / "data")
    local = run_eval(settings(root, "local"), "auto", folder, SYSTEMS, out=root / "local.json")
    calls: list = []
    remote = run_eval(settings(root, "ray"), "auto", folder, SYSTEMS, out=root / "ray.json", engine="ray",
                      progress=lambda d, t, info: calls.append((d, t, info)))
    remote["_calls"] = calls
    return root, folder, local, remote


def test_beam_folder_on_ray_equals_the_local_engine(beam) -> None:
    root, folder, local, remote = beam
    calls = remote.pop("_calls")
    assert local["conversations"] == ["beam-100K-7", "beam-100K-8"] and local["dataset"]["format"] == "beam"
    assert remote["engine"] == local["engine"] and local["questions_total"] == 2 * 4 * len(SYSTEMS)
    assert_equal_runs(local, remote, (settings(root, "local"), settings(root, "ray")), folder, SYSTEMS)
    assert csv_rows(root / "local.csv") == csv_rows(root / "ray.csv")
    answered = [c for c in calls if c[2].get("phase") == "answer"]
    assert len(answered) == remote["questions_total"]  # every question reported once, from both chats' tasks
    assert {c[2]["conv_id"] for c in answered} == {"beam-100K-7", "beam-100K-8"}


def test_beam_rubric_scores_survive_the_trip_to_the_workers(beam) -> None:
    _, _, local, remote = beam
    for name in SYSTEMS:  # the rubric questions are scored by the offline rubric rule, named, on both engines
        prompts = (remote["systems"][name].get("overall") or {}).get("judge_prompts") or {}
        assert prompts.get("offline rubric rule", 0) > 0
        assert prompts == (local["systems"][name].get("overall") or {}).get("judge_prompts")


# ------------------------------------------------------------------------------------------------- LoCoMo-Plus


def _cli(argv: list[str], monkeypatch, capsys) -> tuple[int, str, str]:
    from memcore import cli

    monkeypatch.setattr(sys, "argv", ["memcore", "eval", *argv])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    out = capsys.readouterr()
    return exit_.value.code, out.out, out.err


def test_locomo_plus_through_the_cli_equals_the_local_engine(tmp_path, monkeypatch, capsys) -> None:
    """`memcore eval -f locomo_plus.json --engine ray` with no --dataset: one stitched conversation per item, one
    task per (conversation, system), so two tasks of a conversation run at once and share its turns."""
    from memcore.eval import ray_engine

    monkeypatch.delenv("MEMCORE_LOCOMO_FILE", raising=False)
    monkeypatch.setattr(ray_engine, "TASK_UNIT", "system")
    (tmp_path / "data").mkdir()
    plus, _ = write_plus(tmp_path / "data")
    items = ["conv-26+plus0", "conv-26+plus10"]  # items 0 and 10, both stitched into conv-26: the same turns
    common = ["-f", str(plus), "-c", ",".join(items), "-s", ",".join(SYSTEMS), "--provider", "offline",
              "--embedder", "hashing"]
    code, out, err = _cli([*common, "--store", str(tmp_path / "local"), "-o", str(tmp_path / "local.json")],
                          monkeypatch, capsys)
    assert code == 0, err
    code, out, err = _cli([*common, "--engine", "ray", "--store", str(tmp_path / "ray"), "-o",
                           str(tmp_path / "ray.json")], monkeypatch, capsys)
    assert code == 0, err
    assert "8 of 11 LoCoMo-Plus items skipped" in err  # the fixture's locomo10.json holds 2 of the 10 conversations
    assert "2 LoCoMo-Plus question(s) not judged" in out and f"({2 * len(SYSTEMS)}/{2 * len(SYSTEMS)} questions" in out
    local, remote = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("local", "ray"))
    assert local["conversations"] == items and local["dataset"]["format"] == "locomo-plus"
    assert_equal_runs(local, remote, (settings(tmp_path, "local"), settings(tmp_path, "ray")), plus, SYSTEMS, items)
    assert csv_rows(tmp_path / "local.csv") == csv_rows(tmp_path / "ray.csv")


# ------------------------------------------------------------------------------------------------- failures


def failing_task(settings: Settings, conv_json: str, todo_ids: dict, job: dict, queue: Any, flag: Any) -> int:
    """ray_engine._task, except for FAILING_CONV: its first system is evaluated (memory built, rows saved), its
    second system's memory is left half built (the ingest stops after two turns), then the task raises."""
    from memcore.eval import ray_engine
    from memcore.serialize import conversation_from_json

    conv = conversation_from_json(conv_json)
    if conv.id != FAILING_CONV:
        return ray_engine._task(settings, conv_json, todo_ids, job, queue, flag)
    first, second = list(todo_ids)[:2]
    ray_engine._task(settings, conv_json, {first: todo_ids[first]}, job, queue, flag)
    wb = next(iter(ray_engine._CACHE.values()))  # the worker's Workbench, made by _task
    turns = iter(range(2))
    wb.ingest(job["variants"][second], conv, should_stop=lambda: next(turns, None) is None, **job["configs"][second])
    raise RuntimeError(f"simulated failure on {conv.id}")


def test_the_local_ray_workers_run_at_the_local_engines_priority(monkeypatch) -> None:
    """A local Ray started by the engine gets worker_niceness 0 (Ray's default 15 starves its workers behind every
    other process of a shared machine); $RAY_worker_niceness, or a cluster joined by address, keeps its own."""
    from memcore.eval import ray_engine

    seen: list[dict] = []
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda address=None, **kw: seen.append(kw))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.delenv(ray_engine.NICENESS_ENV, raising=False)
    assert ray_engine.connect(None, 2) is True
    assert seen[-1]["_system_config"] == {"worker_niceness": 0} and seen[-1]["num_cpus"] == 2
    ray_engine.connect("head:6379")
    assert "_system_config" not in seen[-1]
    monkeypatch.setenv(ray_engine.NICENESS_ENV, "10")
    ray_engine.connect(None)
    assert "_system_config" not in seen[-1]


def test_a_failed_conversation_leaves_the_others_complete_and_a_rerun_completes_it(beam, tmp_path,
                                                                                      monkeypatch) -> None:
    from ray import cloudpickle

    from memcore.eval import ray_engine

    root, folder, local, _ = beam
    real = ray_engine._task
    monkeypatch.setattr(ray_engine, "TASK_UNIT", "conversation")
    monkeypatch.setattr(ray_engine, "_task", failing_task)
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers need not import this test module
    try:
        s = settings(tmp_path, "ray")
        res = run_eval(s, "auto", folder, SYSTEMS, engine="ray")
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    first, second, third = SYSTEMS
    assert not res["complete"] and res["questions_missing"] == 2 * 4, res["errors"]
    assert res["missing_by_system"] == {first: 0, second: 4, third: 4}, res["errors"]
    [err] = res["errors"]
    assert err["conv_id"] == FAILING_CONV and err["phase"] == "error"
    assert "Ray task failed: RuntimeError: simulated failure on beam-100K-8" in err["error"]
    wb = Workbench(s)
    convs = {c.id: c for c in _load(folder)}
    for name in SYSTEMS:  # the other chat is complete; the failed one keeps what it finished, half a memory
        assert wb.memory(name, convs["beam-100K-7"]).status()[1]
    assert wb.memory(first, convs[FAILING_CONV]).status()[1]
    step, done = wb.memory(second, convs[FAILING_CONV]).status()
    assert not done and 0 < step < len(convs[FAILING_CONV].turns)
    assert wb.memory(third, convs[FAILING_CONV]).status() == (0, False)

    monkeypatch.setattr(ray_engine, "_task", real)  # the rerun, with the engine's own task
    calls: list = []
    fixed = run_eval(s, "auto", folder, SYSTEMS, engine="ray", progress=lambda d, t, info: calls.append(info))
    assert fixed["run_id"] == res["run_id"] and fixed["errors"] == []
    # only the failed chat's missing questions were sent again; the half-built memory resumed
    assert {i["conv_id"] for i in calls if i.get("phase") == "answer"} == {FAILING_CONV}
    assert len([i for i in calls if i.get("phase") == "answer"]) == 8
    assert_equal_runs(local, fixed, (settings(root, "local"), s), folder, SYSTEMS)

