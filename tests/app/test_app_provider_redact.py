"""Home's provider form (issue 37): a Base URL holding a password or token is shown redacted (the form never
sends it to the browser), and submitting the form unchanged keeps the real URL for the session."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
sys.path.insert(0, str(ROOT))

from memcore.llm.mock_server import MockOpenAIServer  # noqa: E402


def _everything_shown(at: AppTest) -> str:
    parts = [t.value for t in at.text_input] + [t.placeholder or "" for t in at.text_input]
    parts += [e.value for kind in (at.markdown, at.caption, at.error, at.warning, at.info, at.code) for e in kind]
    return json.dumps(parts)


def test_the_base_url_field_is_redacted_and_kept_when_unchanged(app_env, monkeypatch):
    with MockOpenAIServer() as srv:
        host = srv.base_url.split("//", 1)[1]
        real = f"http://u:PASS@{host}?api_token=TOK"
        monkeypatch.setenv("OPENAI_BASE_URL", real)
        at = AppTest.from_file(APP, default_timeout=120).run()
        assert not at.exception, [e.value for e in at.exception]
        field = next(t for t in at.text_input if t.label.startswith("Base URL"))
        assert field.value == f"http://***@{host}?api_token=***"
        assert "PASS" not in _everything_shown(at) and "TOK" not in _everything_shown(at)
        next(r for r in at.radio if r.label == "LLM provider").set_value("openai")
        next(t for t in at.text_input if t.label == "API key").set_value("sk-test-123")
        next(b for b in at.button if b.label == "Use this provider").click().run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.session_state["provider_choice"].base_url == real  # the masked text did not replace it
        assert "PASS" not in _everything_shown(at) and "TOK" not in _everything_shown(at)
