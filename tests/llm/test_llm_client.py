"""LLM client: roles, offline engine, fake, ledger totals, cache hits, and the openai provider
over real HTTP (usage from the response, malformed JSON repaired or reported, 500 retried)."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from memcore.errors import LLMCallFailed
from memcore.llm import (
    CallScheduler,
    FakeLLM,
    LLMClient,
    OfflineEngine,
    OpenAIProvider,
    SchedulerConfig,
    UsageLedger,
)
from memcore.llm.cache import CallCache
from memcore.llm.mock_server import MockOpenAIServer
from memcore.llm.roles import Role, TextOutput, register


class Verdict(BaseModel):
    merge: bool = False
    why: str = ""


TEST_ROLE = register(Role(
    name="test_merge", system="Decide.", user="A: {a}\nB: {b}", output=Verdict,
    offline=lambda inp: Verdict(merge=inp["a"] == inp["b"], why="equal" if inp["a"] == inp["b"] else "differ"),
    fallback=lambda inp: Verdict(merge=False, why="fallback"),
))


def test_offline_engine_counts_tokens_and_records_ledger():
    client = LLMClient(OfflineEngine(), UsageLedger())
    res = client.run("test_merge", {"a": "x", "b": "x"}, stage="construction")
    assert res.ok and res.output.merge is True
    assert res.prompt_tokens > 5 and res.completion_tokens > 3
    rec = client.ledger.records[-1]
    assert (rec.role, rec.stage, rec.provider) == ("test_merge", "construction", "offline")


def test_ledger_totals_by_stage_and_system():
    ledger = UsageLedger()
    a = LLMClient(OfflineEngine(), ledger, system="recmem", conv_id="c1")
    b = a.bind(system="com")
    for _ in range(3):
        a.run("test_merge", {"a": "x", "b": "y"}, stage="construction")
    b.run("answer", {"question": "q?", "context": "ctx"}, stage="answer")
    tot = ledger.total(system="recmem", stage="construction")
    assert tot.calls == 3
    assert tot.prompt_tokens == sum(r.prompt_tokens for r in ledger.records[:3])
    assert ledger.total(system="com").calls == 1
    assert ledger.total().calls == 4


def test_fake_scripted_history_and_malformed_json_repair():
    fake = FakeLLM(by_role={"test_merge": ['{"merge": tru', '{"merge": true, "why": "fixed"}']})
    client = LLMClient(fake)
    res = client.run("test_merge", {"a": "1", "b": "2"}, stage="construction")
    assert res.ok and res.output.merge is True and res.calls == 2
    assert any("repaired" in n for n in res.notes)
    assert len(fake.calls("test_merge")) == 2
    assert "previous reply could not be used" in fake.calls("test_merge")[1].messages[-1]["content"]
    assert [r.attempt for r in client.ledger.records] == [1, 2]  # the repair call is marked in the ledger


def test_unrepairable_reply_fails_the_call_and_is_booked():
    fake = FakeLLM(by_role={"test_merge": ["not json", "still not json"]})
    client = LLMClient(fake)
    with pytest.raises(LLMCallFailed, match="unusable reply after one repair attempt"):
        client.run("test_merge", {"a": "1", "b": "1"}, stage="construction")
    assert [r.attempt for r in client.ledger.records] == [1, 2] and client.ledger.records[-1].ok is False


def test_unrepairable_reply_uses_fallback_only_when_named():
    fake = FakeLLM(by_role={"test_merge": ["not json", "still not json"]})
    client = LLMClient(fake, unusable="fallback")
    res = client.run("test_merge", {"a": "1", "b": "1"}, stage="construction")
    assert not res.ok and res.output.why == "fallback" and client.degraded == 1
    assert "unusable reply after one repair attempt" in res.error and "llm_unusable=fallback" in res.error


def test_fake_raises_on_an_unscripted_call_unless_a_fallback_is_asked_for():
    with pytest.raises(LLMCallFailed, match="no scripted reply for role 'test_merge'"):
        LLMClient(FakeLLM()).run("test_merge", {"a": "z", "b": "z"}, stage="construction")
    fake = FakeLLM(fallback="offline")
    res = LLMClient(fake).run("test_merge", {"a": "z", "b": "z"}, stage="construction")
    assert res.ok and res.output.merge is True and [c.role for c in fake.calls()] == ["test_merge"]
    with pytest.raises(ValueError, match="fallback"):
        FakeLLM(fallback="offlne")


def test_openai_provider_usage_from_http_response():
    with MockOpenAIServer() as srv:
        reply = json.dumps({"merge": True, "why": "same topic"})
        srv.enqueue(reply)
        client = LLMClient(OpenAIProvider("mock-model", base_url=srv.base_url))
        res = client.run("test_merge", {"a": "p", "b": "q"}, stage="construction")
        assert res.ok and res.output.merge is True
        req = srv.requests[0]
        assert req["response_format"]["type"] == "json_schema" and req["temperature"] == 0.0  # the probe found it
        # the mock counts words: prompt tokens = words of both messages
        words = sum(len(m["content"].split()) for m in req["messages"])
        assert client.ledger.records[-1].prompt_tokens == words
        assert client.ledger.records[-1].completion_tokens == len(reply.split())


def test_openai_provider_retries_500_then_succeeds():
    with MockOpenAIServer() as srv:
        srv.enqueue("boom", status=500)
        srv.enqueue("boom again", status=500)
        srv.enqueue('{"merge": false, "why": "differ"}')
        client = LLMClient(OpenAIProvider("mock-model", base_url=srv.base_url))
        res = client.run("test_merge", {"a": "p", "b": "q"}, stage="construction")
        assert res.ok and res.output.why == "differ"
        assert len(srv.requests) == 3


def test_openai_provider_gives_up_with_clear_error_not_crash():
    with MockOpenAIServer() as srv:
        for _ in range(3):
            srv.enqueue("down", status=503)
        client = LLMClient(OpenAIProvider("mock-model", base_url=srv.base_url),
                           scheduler=CallScheduler(SchedulerConfig(retries=3, backoff_s=0.05)))
        with pytest.raises(LLMCallFailed, match="gave up after 3 attempt"):
            client.run("test_merge", {"a": "p", "b": "q"}, stage="construction")
        assert len(srv.requests) == 3
        assert client.ledger.records[-1].ok is False and "503" in client.ledger.records[-1].error


def test_openai_malformed_json_over_http_repaired():
    with MockOpenAIServer() as srv:
        srv.enqueue('Sure! {"merge": true, "why": ')
        srv.enqueue('```json\n{"merge": true, "why": "ok"}\n```')
        res = LLMClient(OpenAIProvider("mock-model", base_url=srv.base_url)).run(
            "test_merge", {"a": "p", "b": "q"}, stage="construction")
        assert res.ok and res.output.why == "ok" and res.calls == 2


def test_logprobs_requested_and_returned():
    with MockOpenAIServer() as srv:
        srv.enqueue("Paris in May")
        res = LLMClient(OpenAIProvider("m", base_url=srv.base_url)).run(
            "answer", {"question": "where?", "context": "c"}, stage="retrieval", logprobs=True)
        assert srv.requests[0]["logprobs"] is True
        assert res.logprobs == [-0.5, -0.5, -0.5]
        assert isinstance(res.output, TextOutput) and res.output.text == "Paris in May"


def test_cache_hit_is_exact_and_recorded(tmp_path):
    with MockOpenAIServer() as srv:
        srv.enqueue('{"merge": true, "why": "first"}')
        client = LLMClient(OpenAIProvider("m", base_url=srv.base_url), cache=CallCache(tmp_path))
        first = client.run("test_merge", {"a": "p", "b": "q"}, stage="construction")
        second = client.run("test_merge", {"a": "p", "b": "q"}, stage="construction")
        assert len(srv.requests) == 1
        assert second.output == first.output and second.cached
        assert [r.cache_hit for r in client.ledger.records if r.role == "test_merge"] == [False, True]
        usage = client.ledger.total(role="test_merge")
        assert usage.calls == 1 and usage.cache_hits == 1


def test_openai_provider_without_key_names_the_fix(monkeypatch):
    from memcore.errors import ConfigError

    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIProvider("gpt-4o-mini")


def test_a_code_fence_inside_a_string_of_the_object_is_not_taken_for_the_reply():
    """SmolLM2 under llama.cpp's grammar wrote a judge reply whose reason held "```python ...```" (raw newlines
    too): the fence was cut out as the reply and no object found, so an obeyed schema became 'unusable' and the
    question went unscored. The whole reply is tried first; a fenced object around prose still parses."""
    from memcore.llm.client import extract_json

    reply = ('{ "label": "CORRECT","reason":"[1] a gold answer\n```python\n# Your code here\n```\n'
             'Your response should be formatted as JSON.\nPLAINFORMAT\n{\n    " }')
    assert extract_json(reply)["label"] == "CORRECT"
    assert extract_json('Here it is:\n```json\n{"label": "WRONG"}\n```\nDone.') == {"label": "WRONG"}
    assert extract_json('The answer {"label": "WRONG", "reason": "x"} as asked') == {"label": "WRONG", "reason": "x"}
    with pytest.raises(json.JSONDecodeError, match="Unterminated string"):
        extract_json('{ "name": "Maya')
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json("```python\nprint(1)\n```")
