"""Ask restores the picked systems' memories while the question is written (ui.state.hold_ahead, in a background
thread): a visit builds nothing and answers nothing, and the click then shows the answers an ask that restored the
memories itself gives."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from memcore.settings import Settings
from memcore.workbench import Workbench
from tests.app.test_app_ask_compare import FLAGSHIP, _click, _summary
from tests.app.test_app_pages import APP, errors
from ui import state

pytestmark = pytest.mark.usefixtures("app_env")  # temp store, hashing embedder, offline engine
SYSTEMS = ["naive_rag", "com", "xmemory"]


def test_ask_holds_the_picked_memories_before_the_click_and_answers_as_before(monkeypatch):
    wb = Workbench(Settings())
    conv = wb.load_demo()
    for s in SYSTEMS:
        wb.ingest(s, conv)
    started = []
    real = state.hold_ahead
    monkeypatch.setattr(state, "hold_ahead", lambda *a: started.append(real(*a)))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"conv": "demo", "systems": ",".join(SYSTEMS)})
    at.switch_page("pages/ask.py").run()
    assert not errors(at), errors(at)
    threads = [t for t in started if t is not None]
    assert len(threads) == 1  # one restore thread for the page's systems, not one per rerun
    threads[0].join(60)
    app_wb = state.workbench()
    assert sorted(k[0] for k in app_wb._complete if k[1] == "demo") == sorted(SYSTEMS)  # held before any click
    assert "_answers" not in at.session_state or not at.session_state["_answers"]  # nothing answered yet
    at.run()
    assert [t for t in started[1:] if t is not None] == []
    at.selectbox(key="ask_q_pick").set_value(FLAGSHIP).run()
    rows = _summary(_click(at, "Ask"))
    q = next(q for q in conv.questions if q.id == FLAGSHIP)
    fresh = Workbench(Settings())  # restores each memory on its ask
    assert [(r["system"], r["answer"]) for r in rows] == [(s, fresh.ask(s, conv, q).text) for s in SYSTEMS]
