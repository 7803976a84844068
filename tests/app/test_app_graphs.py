"""Ego-graph filter in Explore and Replay's growth tab (issue 15 item 6), with AppTest on the demo."""

from __future__ import annotations

import sys
from pathlib import Path

from streamlit.testing.v1 import AppTest

from memcore.embed import HashingEmbedder
from memcore.settings import Settings
from memcore.workbench import Workbench

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def test_ego_graph_in_explore_and_replay(tmp_path, monkeypatch):
    store = tmp_path / "store"
    for k, v in (("MEMCORE_STORE", str(store)), ("MEMCORE_EMBEDDER", "hashing"), ("MEMCORE_LLM_PROVIDER", "offline")):
        monkeypatch.setenv(k, v)
    wb = Workbench(Settings(store_uri=str(store), llm_provider="offline", embedder="hashing"), embedder=HashingEmbedder())
    conv = wb.load_demo()
    wb.ingest("memweaver", conv)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page("pages/explore.py").run()
    at.selectbox(key="ex_system").set_value("memweaver").run()
    ego = at.selectbox(key="ex_ego")
    assert ego.options[0] == "pick an entity…" and len(ego.options) > 2
    assert not at.get("iframe")  # nothing drawn until an entity is picked
    ego.set_value(ego.options[1]).run()
    assert not at.exception and len(at.get("iframe")) == 1
    assert any("within 1 hop(s)" in c.value for c in at.caption)
    at.switch_page("pages/replay.py").run()
    at.multiselect(key="replay_systems").set_value(["memweaver"]).run()
    at.slider(key="replay_step").set_value(len(conv.turns) // 2).run()
    at.session_state["rp_view"] = "Growth"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="gr_memweaver_ego").options[0] == "pick an entity…"
