"""MEMCORE_LEDGER_TEXT=0 means no LLM prompt or completion is written to disk: the ledger rows hold none
(tests/llm/test_ledger_no_text.py) and the on-disk LLM response cache is off, so no file under the store
holds one. With the text on (the default) the ledger rows keep the prompt and the cache the completion (the control:
the markers are findable; the cache is keyed by a hash of the request, so it holds no prompt).

The markers are in the question (a prompt the answer call sends) and in the model's reply (a completion),
through the openai provider against the mock OpenAI server (a real provider: the one the cache serves).
The conversation's own text is not a marker: the store keeps the conversation as memory by design."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.embed import HashingEmbedder
from memcore.llm.mock_server import MockOpenAIServer
from memcore.settings import Settings
from memcore.types import Question
from memcore.workbench import Workbench

PROMPT_MARK, REPLY_MARK = "QZXPROMPTMARK731", "QZXREPLYMARK958"


def _files_with(root: Path, marker: str) -> list[str]:
    needle = marker.encode()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes())


def _ask(tmp_path: Path, conv, text: bool) -> tuple[Workbench, Path]:
    store = tmp_path / "store"
    with MockOpenAIServer(responder=lambda req: f"It is under the {REPLY_MARK} flowerpot.") as srv:
        s = Settings(store_uri=str(store), embedder="hashing", llm_provider="openai", llm_model="mock-model",
                     openai_base_url=srv.base_url, openai_api_key="sk-test", ledger_text=text, llm_check=False)
        wb = Workbench(s, embedder=HashingEmbedder())
        q = Question(id="q-mark", conv_id=conv.id, text=f"Where is the {PROMPT_MARK} key kept?", answer="")
        ans = wb.ask("naive_rag", conv, q)
        wb.ledger.flush()
        assert srv.received >= 1 and REPLY_MARK in ans.text  # the reply came from the mock server
    return wb, store


@pytest.mark.parametrize("text", [True, False])
def test_no_prompt_or_completion_on_disk_without_ledger_text(tmp_path, tiny_conv, text):
    wb, store = _ask(tmp_path, tiny_conv, text)
    rows = wb.store.llm_calls(stage="answer")
    assert len(rows) and (rows["prompt_tokens"] > 0).all()  # the calls are recorded either way
    cache = store / "cache" / "llm_cache.sqlite"
    if text:  # the control: the cache holds both, so the search below would find them
        assert (wb.llm.cache is not None) and cache.is_file()
        assert any(f.startswith("llm_calls.lance/") for f in _files_with(store, PROMPT_MARK))  # the ledger
        assert any(f.startswith("cache/llm_cache.sqlite") for f in _files_with(store, REPLY_MARK))  # (or its -wal)
    else:
        assert wb.llm.cache is None and not cache.exists()
        assert _files_with(store, PROMPT_MARK) == [] and _files_with(store, REPLY_MARK) == []


def test_the_cli_help_says_the_cache_is_off_too():
    from typer.testing import CliRunner

    from memcore.cli import app

    res = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0
    text = " ".join(res.output.replace("│", " ").split())  # the help panel wraps lines inside a box
    assert "--no-ledger-text" in text and "cache off" in text and "asks the model again" in text
