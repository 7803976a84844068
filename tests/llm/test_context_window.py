"""Context windows (memcore.llm.windows): no prompt over the window is ever sent, and full_context cuts its
context by its named rule instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcore.embed import HashingEmbedder
from memcore.eval.fallbacks import answer_fallbacks, answer_marks
from memcore.llm import make_provider
from memcore.llm.mock_server import MockOpenAIServer, OfflineResponder, observe
from memcore.llm.windows import DOES_NOT_FIT, PromptDoesNotFit, context_window
from memcore.settings import Settings
from memcore.text.tokens import count_messages
from memcore.workbench import Workbench

WINDOW = 1200  # tokens: the demo conversation's full context needs several times this


def _bench(path: Path, url: str, responder: OfflineResponder, window: int) -> Workbench:
    s = Settings(store_uri=str(path), embedder="hashing", llm_provider="openai", llm_model="mock-model",
                 openai_base_url=url, openai_api_key="sk-test", llm_context_window=window, llm_check=False)
    return Workbench(s, provider=observe(make_provider(s), responder), embedder=HashingEmbedder())


def _sent_tokens(req: dict) -> int:
    """What a request asks of the model's window: its messages (OpenAI's count) and its reply budget."""
    return count_messages(req["messages"]) + int(req.get("max_tokens") or req.get("max_completion_tokens") or 0)


def test_table_setting_and_unknown() -> None:
    assert context_window("openai", "gpt-4o-mini") == (128_000, "table")
    assert context_window("openai", "openai/gpt-4o-2024-08-06") == (128_000, "table")
    assert context_window("openai", "gpt-4")[0] == 8_192 and context_window("openai", "gpt-4.1-mini")[0] > 10**6
    assert context_window("openai", "my-finetune") == (None, "unknown")
    assert context_window("offline", "rules") == (None, "unknown")
    assert context_window("offline", "rules", 4096) == (4096, "setting")


def test_no_request_to_the_server_exceeds_the_window(tmp_path: Path) -> None:
    responder = OfflineResponder(HashingEmbedder())
    with MockOpenAIServer(responder=responder) as srv:
        wb = _bench(tmp_path / "s", srv.base_url, responder, WINDOW)
        conv = wb.load_demo()
        q = conv.questions[0]
        full = wb.ask("full_context", conv, q)
        rag = wb.ask("naive_rag", conv, q)
        sent = [_sent_tokens(r) for r in srv.requests]
    assert sent and max(sent) <= WINDOW, sent
    cut = full.trace.structure["context_cut"]
    assert 0 < cut["kept"] < cut["of"] == len(conv.turns) and cut["window"] == WINDOW
    kept = [it.id for it in full.trace.items]
    assert kept == [t.turn_id for t in conv.turns[-cut["kept"]:]]  # the turns nearest the question
    assert "context_cut" in answer_fallbacks(full.trace)
    assert any(f"holds {cut['kept']} of the {cut['of']} turns" in m for m in answer_marks(full.trace))
    assert "context_cut" not in answer_fallbacks(rag.trace)


def test_a_prompt_that_cannot_fit_is_not_sent(tmp_path: Path) -> None:
    responder = OfflineResponder(HashingEmbedder())
    with MockOpenAIServer(responder=responder) as srv:
        wb = _bench(tmp_path / "s", srv.base_url, responder, 300)  # less than the reader's reply budget + prompt
        conv = wb.load_demo()
        with pytest.raises(PromptDoesNotFit, match=DOES_NOT_FIT) as e:
            wb.ask("naive_rag", conv, conv.questions[0])
        assert srv.received == 0
    assert e.value.window == 300 and e.value.tokens > 300 and not e.value.rerun_fixes
    answers = [r for r in wb.ledger.records if r.stage == "answer"]
    assert [(r.outcome, r.ok, r.completion) for r in answers] == [("does_not_fit", False, "")]


def test_the_offline_engine_simulates_a_window(tmp_path: Path) -> None:
    s = Settings(store_uri=str(tmp_path / "s"), embedder="hashing", llm_provider="offline", llm_context_window=WINDOW)
    wb = Workbench(s, embedder=HashingEmbedder())
    conv = wb.load_demo()
    ans = wb.ask("full_context", conv, conv.questions[0])
    assert ans.text and 0 < ans.trace.structure["context_cut"]["kept"] < len(conv.turns)
    assert f"context_window={WINDOW}" in wb.llm.options()  # a set window joins the memory space and run id
    whole = Workbench(Settings(store_uri=str(tmp_path / "w"), embedder="hashing", llm_provider="offline"),
                      embedder=HashingEmbedder())
    assert "context_cut" not in whole.ask("full_context", conv, conv.questions[0]).trace.structure
