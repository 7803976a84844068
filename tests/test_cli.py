"""The memcore CLI on the demo: systems, ingest (idempotent), ask, doctor, clear errors."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from memcore.cli import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCORE_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("MEMCORE_EMBEDDER", "hashing")
    monkeypatch.setenv("MEMCORE_LLM_PROVIDER", "offline")


def test_systems_lists_the_registry():
    res = runner.invoke(app, ["systems"])
    assert res.exit_code == 0
    assert "naive_rag " in res.output and "naive_rag_session" in res.output and "full_context" in res.output


def test_ingest_twice_is_a_no_op_the_second_time():
    first = runner.invoke(app, ["ingest", "demo", "-s", "naive_rag_session"])
    assert first.exit_code == 0, first.output
    assert "naive_rag_session on demo" in first.output and "session" in first.output
    assert "shared work on demo: model load" in first.output and "turn embedding" in first.output  # own line
    second = runner.invoke(app, ["ingest", "demo", "-s", "naive_rag_session"])
    assert "already complete" in second.output and "shared work" not in second.output


def test_ask_a_dataset_question_shows_gold_and_evidence():
    res = runner.invoke(app, ["ask", "demo:q0", "-s", "naive_rag", "-r", "lexical"])
    assert res.exit_code == 0, res.output
    assert "gold:" in res.output and "recall:" in res.output
    assert "offline engine" in res.output


def test_unknown_system_names_the_choices():
    res = runner.invoke(app, ["ingest", "demo", "-s", "nope"])
    assert res.exit_code != 0
    assert "available:" in res.output


def test_doctor_reports_each_component():
    res = runner.invoke(app, ["doctor"])
    assert "[ok] embedder: hashing-256" in res.output
    assert "[ok] store:" in res.output
    assert "[ok] llm: offline engine" in res.output
    assert "llm context window: unknown for" in res.output  # the offline engine has none unless given one


# ---- memcore eval: datasets held to their format, no silent empty runs, K judge runs ----------


def _cut_demo(tmp_path):
    import json

    from memcore.datasets import DEMO_PATH

    data = json.loads(DEMO_PATH.read_text(encoding="utf-8"))
    del data["session_2"]
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_eval_refuses_a_file_with_a_missing_session_unless_lenient(tmp_path):
    from memcore.cli import main

    path = _cut_demo(tmp_path)
    out = tmp_path / "r.json"
    args = ["eval", "-d", "locomo", "-f", str(path), "-s", "naive_rag", "--limit", "1", "--no-judge", "-o", str(out)]
    strict = runner.invoke(app, args)
    assert strict.exit_code != 0 and not out.exists()
    assert "session 2 is missing" in str(strict.exception) and "--lenient" in str(strict.exception)
    import sys

    code, argv = None, sys.argv
    sys.argv = ["memcore", *args]
    try:
        main()
    except SystemExit as e:
        code = e.code
    finally:
        sys.argv = argv
    assert code == 2  # main(): one clear line, exit 2
    lenient = runner.invoke(app, [*args, "--lenient"])
    assert lenient.exit_code == 0, lenient.output
    assert "warning:" in lenient.output and "session 2 is missing" in lenient.output and out.exists()
    assert "shared work (charged to no system): model load" in lenient.output  # issue 28: its own line
    assert "naive_rag: ingest" in lenient.output


def test_ingest_and_ask_refuse_a_file_with_a_missing_session_unless_lenient(tmp_path):
    path = _cut_demo(tmp_path)
    store = str(tmp_path / "store")
    strict = runner.invoke(app, ["ingest", str(path), "-s", "naive_rag", "--store", store])
    assert strict.exit_code != 0 and "session 2 is missing" in str(strict.exception)
    from memcore.store import LanceStore

    assert LanceStore(store).conversations().empty  # nothing stored from a refused file
    lenient = runner.invoke(app, ["ingest", str(path), "-s", "naive_rag", "--store", store, "--lenient"])
    assert lenient.exit_code == 0, lenient.output
    assert "warning:" in lenient.output and "session 2 is missing" in lenient.output
    asked = runner.invoke(app, ["ask", "Where does Maya work?", "--source", str(path), "--store", store, "--lenient"])
    assert asked.exit_code == 0, asked.output


def test_eval_that_selects_no_question_exits_non_zero(tmp_path):
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["eval", "-d", "demo", "-s", "naive_rag", "--categories", "9", "-o", str(out)])
    assert res.exit_code == 2, res.output
    assert "no question selected" in res.output and "categories 9" in res.output and "Fix:" in res.output


def test_eval_judge_runs_reports_mean_and_std(tmp_path):
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["eval", "-d", "demo", "-s", "naive_rag", "--limit", "2", "--judge-runs", "2",
                              "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "2 runs" in res.output and "+-" in res.output and "rouge2" in res.output


def test_optimize_builds_scope_indexes_and_compacts(tmp_path):
    store = str(tmp_path / "store")
    assert runner.invoke(app, ["ingest", "demo", "-s", "naive_rag", "--store", store]).exit_code == 0
    import lancedb

    def fragments() -> int:
        return lancedb.connect(store).open_table("events").stats()["fragment_stats"]["num_fragments"]

    before = fragments()
    res = runner.invoke(app, ["optimize", "--store", store])
    assert res.exit_code == 0, res.output
    assert "turns.conv_id" in res.output and "compacted" in res.output
    assert before > 1 and fragments() == 1
