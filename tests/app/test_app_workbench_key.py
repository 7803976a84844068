"""ui/state.workbench() is cached per process and settings: every field of the settings is in the key, so a
changed environment (here $MEMCORE_LEDGER_TEXT, then a timeout) gets a new Workbench in the running app
instead of the one built before; the same settings get the same Workbench; secrets are only fingerprints."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from memcore.settings import Settings
from ui.state import settings_key


def _page() -> None:
    import streamlit as st

    from ui import state

    wb = state.workbench()
    st.text(f"{id(wb)} {wb.settings.ledger_text} {wb.settings.llm_timeout_s} {wb.ledger.keep_text}")


def _seen() -> tuple[str, str, str, str]:
    at = AppTest.from_function(_page, default_timeout=60).run()
    assert not at.exception, at.exception
    wb_id, text, timeout, kept = at.text[0].value.split()
    return wb_id, text, timeout, kept


def test_a_changed_environment_gets_a_new_workbench(app_env, monkeypatch):
    monkeypatch.setenv("MEMCORE_LEDGER_TEXT", "1")
    first = _seen()
    assert first[1:] == ("True", "60.0", "True")
    assert _seen() == first  # same settings: the cached Workbench
    monkeypatch.setenv("MEMCORE_LEDGER_TEXT", "0")
    off = _seen()
    assert off[0] != first[0] and off[1:] == ("False", "60.0", "False")  # not the old Workbench with the text on
    monkeypatch.setenv("MEMCORE_LLM_TIMEOUT", "30")
    slower = _seen()
    assert slower[0] not in (first[0], off[0]) and slower[2] == "30.0"


def test_the_key_has_every_field_and_no_secret(tmp_path):
    key = "sk-test-KEYSECRET123"
    s = Settings(store_uri=str(tmp_path), openai_api_key=key, storage_options=(("secret_access_key", "abc987"),))
    k = settings_key(s)
    assert {name for name, _ in k} >= {"store_uri", "ledger_text", "use_cache", "cache_dir", "llm_provider"}
    assert key not in repr(k) and "abc987" not in repr(k)
    assert settings_key(s.with_(openai_api_key="sk-other")) != k  # a different key is a different workbench
    assert settings_key(s.with_(ledger_text=not s.ledger_text)) != k
    assert settings_key(s) == k
