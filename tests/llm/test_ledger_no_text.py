"""MEMCORE_LEDGER_TEXT=0 / `memcore --no-ledger-text`: LLM calls are recorded without their prompt and completion
text (role, stage, tokens, latency, cache hit kept), in memory, in collectors and in the store; the call
inspector says so. Credentials are never in the ledger, with the text or without."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from memcore.cli import app
from memcore.embed import HashingEmbedder
from memcore.errors import ConfigError, LLMError
from memcore.llm import FakeLLM, LLMClient, OfflineEngine, UsageLedger
from memcore.settings import Settings
from memcore.store import LanceStore
from memcore.workbench import Workbench
from tests.llm.test_ledger_text import ROLE

KEPT = ["role", "stage", "prompt_tokens", "completion_tokens", "latency_ms", "cache_hit", "ok"]


def test_a_ledger_without_text_empties_prompt_and_completion_and_keeps_the_rest():
    on, off = LLMClient(OfflineEngine(), UsageLedger()), LLMClient(OfflineEngine(), UsageLedger(keep_text=False))
    with UsageLedger.collect() as got:
        for client in (on, off):
            client.run(ROLE.name, {"a": "pepper", "b": "maya"}, stage="answer")
    a, b = on.ledger.records[-1], off.ledger.records[-1]
    assert a.prompt and a.completion  # the default keeps the text
    assert b.prompt == "" and b.completion == ""
    assert {k: getattr(b, k) for k in KEPT if k != "latency_ms"} == {k: getattr(a, k) for k in KEPT if k != "latency_ms"}
    assert b.prompt_tokens > 0 and b.latency_ms >= 0
    assert got[-1] is b and got[-1].prompt == ""  # what a collector (the app's call inspector) sees


@pytest.mark.parametrize(("raw", "want"), [("0", False), ("off", False), ("false", False), ("1", True), ("", True)])
def test_the_switch_reads_the_environment(monkeypatch, raw, want):
    monkeypatch.setenv("MEMCORE_LEDGER_TEXT", raw)
    assert Settings().ledger_text is want


def test_an_unreadable_switch_is_refused_with_the_fix(monkeypatch):
    monkeypatch.setenv("MEMCORE_LEDGER_TEXT", "sometimes")
    with pytest.raises(ConfigError, match="MEMCORE_LEDGER_TEXT.*Fix: set it to 0"):
        Settings()


def _wb(tmp_path, text: bool, provider=None) -> Workbench:
    s = Settings(store_uri=str(tmp_path / "store"), llm_provider="offline", embedder="hashing", ledger_text=text)
    return Workbench(s, embedder=HashingEmbedder(), provider=provider)


def test_workbench_rows_in_the_store_have_no_text(tmp_path, tiny_conv):
    wb = _wb(tmp_path, text=False)
    wb.ask("naive_rag", tiny_conv, tiny_conv.questions[0])
    wb.ledger.flush()
    rows = LanceStore(str(tmp_path / "store"), dim=wb.embedder.dim).llm_calls()
    assert len(rows) and set(rows["prompt"]) == {""} and set(rows["completion"]) == {""}
    assert (rows["prompt_tokens"] > 0).all() and set(rows["stage"]) >= {"answer"}


def test_cli_no_ledger_text_reaches_the_store(tmp_path, monkeypatch):
    store = tmp_path / "store"
    monkeypatch.setenv("MEMCORE_STORE", str(store))
    monkeypatch.setenv("MEMCORE_EMBEDDER", "hashing")
    monkeypatch.setenv("MEMCORE_LLM_PROVIDER", "offline")
    monkeypatch.setenv("MEMCORE_LEDGER_TEXT", "1")  # restored after the test (the flag sets it to 0)
    res = CliRunner().invoke(app, ["--no-ledger-text", "ask", "demo:q0", "-s", "naive_rag"])
    assert res.exit_code == 0, res.output
    rows = LanceStore(str(store), dim=256).llm_calls(stage="answer")
    assert len(rows) and set(rows["prompt"]) == {""} and set(rows["completion"]) == {""}


@pytest.mark.parametrize("text", [True, False])
def test_credentials_are_never_in_the_ledger(tmp_path, tiny_conv, text):
    key, password = "sk-test-LEDGERSECRET99", "ledgerpass42"
    boom = LLMError(f"HTTP 401 from http://user:{password}@llm.example/v1: bad key {key}")
    fake = FakeLLM(by_role={"answer": [boom] * 5})
    wb = _wb(tmp_path, text=text, provider=fake)
    with pytest.raises(LLMError):
        wb.ask("naive_rag", tiny_conv, tiny_conv.questions[0])
    wb.ledger.flush()
    rows = wb.store.llm_calls()
    assert len(rows) and not rows["ok"].all()
    blob = rows.astype(str).to_csv()
    assert key not in blob and "LEDGERSECRET99" not in blob and password not in blob
    assert "***" in blob  # the error is kept, redacted
