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
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_systems_lists_the_registry():
    res = runner.invoke(app, ["systems"])
    assert res.exit_code == 0
    assert "naive_rag " in res.output and "naive_rag_session" in res.output and "full_context" in res.output


def test_ingest_twice_is_a_no_op_the_second_time():
    first = runner.invoke(app, ["ingest", "demo", "-s", "naive_rag_session"])
    assert first.exit_code == 0, first.output
    assert "naive_rag_session on demo" in first.output and "session" in first.output
    second = runner.invoke(app, ["ingest", "demo", "-s", "naive_rag_session"])
    assert "already complete" in second.output


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
