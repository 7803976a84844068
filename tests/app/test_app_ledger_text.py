"""The call inspector with MEMCORE_LEDGER_TEXT=0: the calls are listed (role, stage, tokens, latency) and the
inspector says their text was not stored, naming the setting."""

from __future__ import annotations

from memcore.datasets import load_demo
from tests.app.test_app_pages import build, errors, home_with_demo, open_tab


def test_inspector_says_the_prompt_text_was_not_stored(app_env, monkeypatch):
    monkeypatch.setenv("MEMCORE_LEDGER_TEXT", "0")
    at = home_with_demo()
    at.switch_page("pages/ask.py").run()
    at = build(at, ["naive_rag"], "ask_systems")
    at.selectbox(key="ask_q_pick").set_value("demo:q0").run()
    next(b for b in at.button if b.label == "Ask").click().run()
    open_tab(at, "ask_naive_rag_tab", "LLM calls")  # the answer's tabs draw only the open one
    assert not errors(at), errors(at)
    calls = next(d.value for d in at.dataframe if hasattr(d.value, "columns") and "completion tokens" in d.value.columns)
    assert "answer" in set(calls["role"]) and (calls["prompt tokens"] > 0).all()
    info = [i.value for i in at.info]
    assert any("Prompt text not stored (setting MEMCORE_LEDGER_TEXT=0" in i for i in info), info
    codes = [c.value for c in at.code]
    assert "(prompt text not stored)" in codes and "(completion text not stored)" in codes
    question = next(q.text for q in load_demo().questions if q.id == "demo:q0")
    assert not any(question in c for c in codes)  # no conversation text reached the inspector
