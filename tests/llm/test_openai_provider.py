"""OpenAIProvider.chat options: the shared defaults reach the server; unknown options are refused."""

from __future__ import annotations

import pytest

from memcore.llm.base import CHAT_DEFAULTS, Provider, chat_options
from memcore.llm.mock_server import MockOpenAIServer
from memcore.llm.openai_provider import OpenAIProvider


def test_chat_options_fill_defaults_and_keep_given_values():
    opts = chat_options({"max_tokens": 64, "role": "answer"})
    assert opts["max_tokens"] == 64 and opts["role"] == "answer"
    assert opts["temperature"] == CHAT_DEFAULTS["temperature"] and opts["json_mode"] is False
    assert set(opts) == set(CHAT_DEFAULTS)


def test_chat_options_refuse_an_unknown_option():
    with pytest.raises(TypeError, match="max_token"):
        chat_options({"max_token": 64})


def test_chat_sends_defaults_when_no_option_is_given():
    with MockOpenAIServer() as srv:
        srv.enqueue("hello there")
        prov = OpenAIProvider("mock-model", base_url=srv.base_url)
        assert isinstance(prov, Provider)
        res = prov.chat([{"role": "user", "content": "hi"}])
        req = srv.requests[0]
        assert req["max_tokens"] == CHAT_DEFAULTS["max_tokens"]
        assert req["temperature"] == CHAT_DEFAULTS["temperature"]
        assert "response_format" not in req and "logprobs" not in req
        assert res.text == "hello there" and res.completion_tokens == 2 and res.logprobs is None


def test_chat_passes_given_options_through():
    with MockOpenAIServer() as srv:
        srv.enqueue('{"a":1}')  # one word: the mock gives one logprob per word
        prov = OpenAIProvider("mock-model", base_url=srv.base_url)
        res = prov.chat([{"role": "user", "content": "hi"}], json_mode=True, max_tokens=7, temperature=0.3,
                        logprobs=True)
        req = srv.requests[0]
        assert req["max_tokens"] == 7 and req["temperature"] == 0.3
        assert req["response_format"] == {"type": "json_object"} and req["logprobs"] is True
        assert res.logprobs == [-0.5]


def test_chat_refuses_an_unknown_option_before_any_request():
    with MockOpenAIServer() as srv:
        prov = OpenAIProvider("mock-model", base_url=srv.base_url)
        with pytest.raises(TypeError):
            prov.chat([{"role": "user", "content": "hi"}], temprature=0.3)  # type: ignore[call-arg]
        assert srv.requests == []
