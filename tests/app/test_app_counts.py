"""Counts and controls that say what they mean (AppTest): pages without a conversation say what to do."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
sys.path.insert(0, str(ROOT))


@pytest.mark.parametrize("page", ["replay", "explore", "ask", "compare"])
def test_a_page_without_a_conversation_says_what_to_do(app_env, page):
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("No conversation yet" in i.value and "Home" in i.value for i in at.main.info), page


def replay_built(app_env) -> AppTest:
    from tests.app.test_app_pages import build, home_with_demo

    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    return build(at, ["naive_rag"], "replay_systems")


def test_replay_counts_turns_and_keeps_the_active_view(app_env):
    from memcore.datasets import load_demo

    n = len(load_demo().turns)
    at = replay_built(app_env)
    body = " ".join(m.value for m in at.markdown)
    assert f"Turn 1 of {n}" in body and f"/{n + 1}" not in body  # 90 turns, not "Step 1/91"
    at.slider(key="replay_step").set_value(0).run()
    assert f"Before turn 1 of {n}" in " ".join(m.value for m in at.markdown)
    view = at.button_group(key="rp_view")
    view.set_value("Construction cost").run()
    at.button_group(key="rp_view").set_value(None).run()  # a click on the active view
    assert at.button_group(key="rp_view").value == "Construction cost"
    assert any("Cumulative LLM usage" in c.value for c in at.caption)


def test_plugin_systems_and_retrievers_are_labelled_as_plugins():
    from memcore.retrievers import Retriever, builtin_retrievers, register_retriever, unregister_retriever
    from memcore.systems import builtin_systems
    from ui import widgets

    assert [widgets.system_label(n) for n in builtin_systems()] == builtin_systems()
    assert widgets.retriever_label("dense") == "dense (paper mode)" and widgets.retriever_label("lexical") == "lexical"
    assert "plugin_x" not in builtin_retrievers()
    register_retriever(Retriever("plugin_x", lambda *a: []))
    try:
        assert widgets.retriever_label("plugin_x") == "plugin_x (plugin)"
    finally:
        unregister_retriever("plugin_x")
    from memcore.systems import register_system, unregister_system
    from memcore.systems.naive_rag import NaiveRAGSystem

    class OutsideSystem(NaiveRAGSystem):  # a system from outside memcore (installed plugins are off in tests)
        name = "plugin_sys_x"
        title = "Outside"

    register_system(OutsideSystem)
    try:
        assert widgets.system_label("plugin_sys_x") == "plugin_sys_x (plugin)"
    finally:
        unregister_system("plugin_sys_x")


def test_an_explore_link_reopens_its_system_kind_and_item(app_env):
    from tests.app.test_app_pages import build, home_with_demo

    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    at = build(at, ["com", "recmem"], "replay_systems")
    at.switch_page("pages/explore.py").run()
    at.selectbox(key="ex_system").set_value("recmem").run()
    kind = at.selectbox(key="ex_kind").value
    assert at.query_params["system"] == "recmem" and at.query_params["kind"] == kind
    fresh = AppTest.from_file(APP, default_timeout=120)
    fresh.query_params.update({"conv": "demo", "system": "recmem", "kind": kind, "item": "unit-2"})
    fresh.run()
    fresh.switch_page("pages/explore.py").run()
    assert not fresh.exception, [e.value for e in fresh.exception]
    assert fresh.selectbox(key="ex_system").value == "recmem" and fresh.selectbox(key="ex_kind").value == kind
    assert any(m.value == "unit\\-2" for m in fresh.subheader), [m.value for m in fresh.subheader]


def test_an_ask_link_reopens_its_system_tab(app_env):
    from tests.app.test_app_pages import build, home_with_demo

    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    build(at, ["naive_rag", "com"], "replay_systems")
    fresh = AppTest.from_file(APP, default_timeout=120)
    fresh.query_params.update({"conv": "demo", "q": "demo:q0", "systems": "naive_rag,com", "run": "1", "tab": "com"})
    fresh.run()
    fresh.switch_page("pages/ask.py").run()
    assert not fresh.exception, [e.value for e in fresh.exception]
    assert fresh.session_state["tab"] == "com" and fresh.query_params["tab"] == "com"
