"""A model reply that quotes the API key or the endpoint's credentials (issue 37): masked before it is parsed,
stored (llm_calls.completion), cached (the LLM cache) or printed; every other word of the reply is kept."""

from __future__ import annotations

from typer.testing import CliRunner

from memcore.cli import app
from memcore.llm.mock_server import MockOpenAIServer
from memcore.llm.redact import mask_secrets, url_secrets

KEY, TOKEN, PASSWORD = "KEYQUOTED9876XYZ", "TOKENQUOTED5432", "PASSQUOTED1234"


def test_url_secrets_and_mask_secrets() -> None:
    url = f"http://u:{PASSWORD}@h:1/v1?api-version=2024-06-01&api_token={TOKEN}#t=abc"
    assert set(url_secrets(url)) == {f"u:{PASSWORD}", PASSWORD, TOKEN}  # not the harmless version, not 'abc'
    assert mask_secrets(f"the door code=1234, key {KEY}", (KEY,)) == "the door code=1234, key ***"


def test_a_reply_quoting_the_key_is_stored_and_cached_masked(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MEMCORE_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("MEMCORE_EMBEDDER", "hashing")
    monkeypatch.setenv("MEMCORE_LLM_PROVIDER", "openai")
    monkeypatch.setenv("MEMCORE_LLM_MODEL", "mock-model")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    reply = f"Maya ran in the park (my key is {KEY}, token {TOKEN}, password {PASSWORD}; door code=1234)."
    with MockOpenAIServer(responder=lambda req: reply) as srv:
        host = srv.base_url.split("//", 1)[1]
        monkeypatch.setenv("OPENAI_BASE_URL", f"http://u:{PASSWORD}@{host}?api_token={TOKEN}")
        res = CliRunner().invoke(app, ["ask", "demo:q0", "-s", "naive_rag"])
        assert res.exit_code == 0, res.output
        assert srv.received >= 1
    assert "Maya ran in the park" in res.output and "door code=1234" in res.output  # the rest kept
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any("llm_calls.lance" in p.parts for p in files) and any(p.name == "llm_cache.sqlite" for p in files)
    leaked = {str(p): [s for s in (KEY, TOKEN, PASSWORD) if s.encode() in p.read_bytes()] for p in files}
    assert {p: s for p, s in leaked.items() if s} == {}
    assert not [s for s in (KEY, TOKEN, PASSWORD) if s in res.output]
    from memcore.store import LanceStore

    calls = LanceStore(str(tmp_path / "store")).llm_calls()
    assert calls["completion"].str.contains("my key is ***, token ***, password ***", regex=False).any()
