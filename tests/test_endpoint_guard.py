"""The autouse endpoint guard (tests/conftest.py): no test reaches an LLM or embedding endpoint off 127.0.0.1."""

from __future__ import annotations

import os

import pytest

from memcore.embed import OpenAIEmbedder
from memcore.llm.mock_server import MockOpenAIServer
from memcore.llm.openai_provider import OpenAIProvider
from memcore.settings import Settings
from tests.conftest import EndpointRefused


@pytest.mark.parametrize("build", [lambda: OpenAIProvider("gpt-4o-mini", api_key="sk-test"),
                                   lambda: OpenAIProvider("m", base_url="http://10.0.0.7:8000/v1"),
                                   lambda: OpenAIEmbedder("text-embedding-3-small", api_key="sk-test")])
def test_a_client_off_127_0_0_1_is_refused(build, no_remote_endpoints: list[str]) -> None:
    with pytest.raises(EndpointRefused, match="127.0.0.1"):
        build()
    assert len(no_remote_endpoints) == 1  # recorded: the test fails at teardown even if the error was caught
    no_remote_endpoints.clear()


def test_a_mock_server_on_127_0_0_1_is_the_opt_in(no_remote_endpoints: list[str]) -> None:
    with MockOpenAIServer() as srv:
        srv.enqueue("hello")
        res = OpenAIProvider("mock-model", base_url=srv.base_url).chat([{"role": "user", "content": "hi"}])
    assert res.text == "hello" and not no_remote_endpoints


def test_the_developers_key_is_not_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMCORE_LLM_PROVIDER", raising=False)
    assert "OPENAI_API_KEY" not in os.environ and "OPENAI_BASE_URL" not in os.environ
    assert Settings().provider == "offline"  # with no key the default provider never reaches a network
